package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/bench"
)

func TestBenchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "needs at least one --backend"},
		{[]string{"bench", "--backend", "reference", "--workloads", "NoSuchWorkload"}, "selects no workload"},
		{[]string{"bench", "--backend", "reference", "--backend", "reference"}, "given twice"},
		{[]string{"bench", "--backend", "reference", "--duration", "0s"}, "--duration must be positive"},
		{[]string{"bench", "--backend", "reference", "--driver", "grpc"}, "--driver must be"},
		{[]string{"bench", "--backend", "reference", "--target-rate", "100", "--arrival-rate", "100"}, "exclude each other"},
		{[]string{"bench", "--backend", "reference", "--arrival-rate", "0"}, "--arrival-rate must be positive"},
		{[]string{"bench", "--backend", "reference", "--arrival-rate", "fast"}, "--arrival-rate: rate"},
		{[]string{"bench", "--backend", "reference", "--arrival-rate", "10", "--max-workers", "0"}, "--max-workers must be positive"},
		{[]string{"bench", "--backend", "reference", "--repeats", "0"}, "--repeats must be from 1 to 100"},
		{[]string{"bench", "--backend", "reference", "--shard", "0/2", "--run-id", "r", "--repeats", "3"}, "a shard runs each workload once"},
	} {
		_, stderr, code := conform(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("conform %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

func TestBenchList(t *testing.T) {
	out, _, code := conform(t, "bench", "--list", "--workloads", "ycsb")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(out, "YCSB/workload="); n != 18 {
		t.Fatalf("--list --workloads ycsb printed %d YCSB workloads, want 18:\n%s", n, out)
	}
}

// TestBenchWritesComparison runs two short workloads on the reference in process and over
// HTTP and checks the comparison written into --out.
func TestBenchWritesComparison(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := conform(t, "bench", "--backend", "reference,reference-http", "--workloads", "PointGet,LogTail",
		"--duration", "200ms", "--workers", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "seed ") || strings.Count(out, "ops/s") != 4 {
		t.Errorf("progress output:\n%s", out)
	}
	// Each backend's lines follow a line that says what it is.
	if !strings.Contains(out, "\nreference: ") || !strings.Contains(out, "\nreference-http: ") || !strings.Contains(out, "rest driver, http://127.0.0.1:") {
		t.Errorf("no line describes each backend:\n%s", out)
	}
	var rep bench.Report
	js, err := os.ReadFile(filepath.Join(dir, bench.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Backends) != 2 || rep.Backends[1].Kind != "reference-http" || len(rep.Outcomes) != 4 {
		t.Fatalf("bench.json: backends %+v, %d outcomes", rep.Backends, len(rep.Outcomes))
	}
	for _, o := range rep.Outcomes {
		if o.Error != "" || o.OpsPerSec <= 0 || o.Requests == 0 || o.Latency.P99 <= 0 {
			t.Errorf("%s on %s: %+v", o.Case, o.Backend, o)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, bench.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PointGet/partitions=16/payload=1KiB", "LogTail/entries=4000/top=20", "ops/s, reference ÷ reference-http"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("bench.md lacks %q", want)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, bench.ReportSVG))
	if err != nil || !strings.HasPrefix(string(svg), "<svg") || !strings.Contains(string(svg), "reference-http") {
		t.Errorf("bench.svg: %v\n%.200s", err, svg)
	}
}

func TestBenchUnavailableBackend(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := conform(t, "bench", "--backend", "nowhere=DefaultEndpointsProtocol=http;AccountName=a;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:1/a;",
		"--workloads", "PointGet", "--duration", "100ms", "--out", dir)
	if code != exitUsage || !strings.Contains(stderr, "nowhere") || strings.Contains(stderr, "a2V5") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(dir, bench.ReportMarkdown))
	if err != nil || !strings.Contains(string(md), "not run") {
		t.Fatalf("bench.md should say the backend did not run: %v\n%s", err, md)
	}
}

// A benchmark without --out never writes into the directory a conformance run writes by
// default: bench and bench merge default to a directory of their own.
func TestBenchDoesNotWriteIntoTheConformanceReportByDefault(t *testing.T) {
	root := rootCmd()
	outDefault := func(path ...string) string {
		t.Helper()
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("conform %v: %v", path, err)
		}
		f := c.Flags().Lookup("out")
		if f == nil {
			t.Fatalf("conform %v has no --out", path)
		}
		return f.DefValue
	}
	report := outDefault("run")
	for _, path := range [][]string{{"bench"}, {"bench", "merge"}} {
		if got := outDefault(path...); got == report {
			t.Errorf("conform %v writes into %q by default, as conform run does", path, got)
		}
	}
}

// Issue 34 item 7: every backend argument is checked before anything runs, as conform run
// checks its own: an unset variable of the second backend stops bench before the first
// backend's workloads, with nothing written.
func TestBenchChecksEveryBackendFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		backend, want string
	}{
		{"second=env:CONFORM_TEST_BENCH_UNSET_VARIABLE", "CONFORM_TEST_BENCH_UNSET_VARIABLE that should hold the connection string is empty or unset"},
		{"no-such-backend", `unknown backend "no-such-backend"`},
		{"mutant:no-such-mutant", "mutant"},
	} {
		out, stderr, code := conform(t, "bench", "--backend", "reference", "--backend", tc.backend,
			"--workloads", "PointGet", "--duration", "1s", "--out", dir)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("--backend %s: exit %d, stderr %q; want exit %d and %q", tc.backend, code, stderr, exitUsage, tc.want)
		}
		if strings.Contains(out, "reference: ") || strings.Contains(out, "ops/s") {
			t.Errorf("--backend %s: the first backend ran before the second was refused:\n%s", tc.backend, out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("--backend %s: %s was written", tc.backend, dir)
		}
	}
}

// TestBenchOpenModel runs a workload at an arrival rate: its line and bench.md give the
// latency from the intended start beside the service time, and the operations offered,
// late and dropped.
func TestBenchOpenModel(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := conform(t, "bench", "--backend", "reference", "--workloads", "PointGet",
		"--duration", "300ms", "--arrival-rate", "200", "--max-workers", "4", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "arrivals at 200/s on up to 4 workers") || !strings.Contains(out, "intended-start p99") || !strings.Contains(out, "dropped") {
		t.Errorf("output:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, bench.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Latency from the intended start") || !strings.Contains(string(md), "wrk2's corrected latency") {
		t.Errorf("bench.md has no intended-start table:\n%s", md)
	}
	var rep bench.Report
	js, err := os.ReadFile(filepath.Join(dir, bench.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 1 || rep.Outcomes[0].Intended == nil || rep.Outcomes[0].Offered == 0 {
		t.Fatalf("outcomes %+v", rep.Outcomes)
	}
}

// TestBenchRepeats runs a workload three times: its line and bench.md give the mean ops/s
// with its interval, and the machine's load is said at the start.
func TestBenchRepeats(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := conform(t, "bench", "--backend", "reference,reference-http", "--workloads", "PointGet", "--duration", "100ms", "--repeats", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if strings.Count(out, "(3 runs: mean ") != 2 || !strings.Contains(out, "machine at the start: ") {
		t.Errorf("output:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, bench.ReportMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	// On a busy machine three 100 ms runs can disagree too much for any bound: then the
	// ratio is refused as too noisy, never printed bare.
	if !strings.Contains(string(md), "ran 3 times") || !strings.Contains(string(md), "× (") && !strings.Contains(string(md), "too noisy") || strings.Contains(string(md), "no interval") {
		t.Errorf("bench.md gives no ratio with its interval:\n%s", md)
	}
}

// TestBenchGrowth runs the growth family at two small sizes on the reference: a line per
// size, bench.md's table and bench.json's steps with the memory per entity.
func TestBenchGrowth(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := conform(t, "bench", "--backend", "reference", "--workloads", "growth", "--growth-sizes", "1000,2000",
		"--growth-requests", "30", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "Growth, 2000 entities:  point read p50") || !strings.Contains(out, "bytes/entity") {
		t.Errorf("output:\n%s", out)
	}
	var rep bench.Report
	js, err := os.ReadFile(filepath.Join(dir, bench.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Outcomes) != 0 || len(rep.Growth) != 1 || len(rep.Growth[0].Steps) != 2 || rep.Growth[0].Steps[1].BytesPerEntity <= 0 {
		t.Fatalf("bench.json: %d outcomes, growth %+v", len(rep.Outcomes), rep.Growth)
	}
	for _, args := range [][]string{
		{"bench", "--backend", "reference", "--workloads", "growth", "--growth-sizes", "1000,500"},
		{"bench", "--backend", "reference", "--workloads", "growth", "--growth-sizes", "ten"},
		{"bench", "--backend", "reference-http", "--workloads", "growth", "--growth-data", dir},
	} {
		if _, stderr, code := conform(t, args...); code != exitUsage || !strings.Contains(stderr, args[len(args)-2]) {
			t.Errorf("conform %v: exit %d, %s", args, code, stderr)
		}
	}
}

// TestBenchGrowthRestart keeps the growth table in a data directory and measures the
// reference's restart from it after each size; the directory is removed afterwards.
func TestBenchGrowthRestart(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	out, stderr, code := conform(t, "bench", "--backend", "reference", "--workloads", "growth", "--growth-sizes", "1000,2000",
		"--growth-requests", "20", "--growth-data", data, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if strings.Count(out, "restarted in ") != 2 {
		t.Errorf("output:\n%s", out)
	}
	var rep bench.Report
	js, err := os.ReadFile(filepath.Join(dir, bench.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Growth) != 1 || len(rep.Growth[0].Steps) != 2 || rep.Growth[0].Steps[1].Restart <= 0 {
		t.Fatalf("growth %+v", rep.Growth)
	}
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Errorf("the data directory was left behind: %v", left)
	}
}
