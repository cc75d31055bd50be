package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// Under a label filter, --update-baseline changes only the entries of the specs it ran:
// another area's entries stay (issue 24: a filtered update deleted every other area's).
func TestUpdateBaselineUnderAFilterChangesOnlyWhatRan(t *testing.T) {
	sig := fixtures.Signature{Status: 400, Code: "InvalidInput"}
	rep := report.Report{
		Backends: []report.Backend{{Info: driver.Info{Name: "emu", Kind: "emu", Version: "1"},
			Coverage: verdict.Coverage{Filter: "area:batch"}}},
		Rules: []report.RuleRow{
			{ID: "batch.a", Cells: []report.Cell{{Specs: []report.SpecResult{
				{Text: "fails now", Outcome: verdict.Fail, Failure: "but it answered 400 InvalidInput", Signature: &sig},
				{Text: "passes now", Outcome: verdict.Pass},
			}}}},
			{ID: "query.b", Cells: []report.Cell{{Specs: []report.SpecResult{
				{Text: "left out", Outcome: verdict.Skipped, SkipReason: "left out by the label filter or the run's selection"},
			}}}},
		},
	}
	old := fixtures.Baseline{Backend: "emu", Version: "1", Expected: []fixtures.ExpectedFailure{
		{Rule: "batch.a", Spec: "passes now", Evidence: "old"},
		{Rule: "query.b", Spec: "left out", Evidence: "kept"},
		{Rule: "tables.c", Spec: "not in this run at all", Evidence: "kept too"},
	}}
	got := map[string]string{}
	for _, e := range nextBaseline(old, rep, 0).Expected {
		got[e.Rule+": "+e.Spec] = e.Evidence
	}
	want := map[string]string{
		"batch.a: fails now":               "but it answered 400 InvalidInput",
		"query.b: left out":                "kept",
		"tables.c: not in this run at all": "kept too",
	}
	if len(got) != len(want) {
		t.Errorf("next baseline %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: evidence %q, want %q", k, got[k], v)
		}
	}
}

// Issue 37: the model, like the reference, must pass every spec: --update-baseline writes it
// no baseline and says to fix it instead.
func TestModelGetsNoBaseline(t *testing.T) {
	dir := t.TempDir()
	rep := report.Report{Backends: []report.Backend{{Info: driver.Info{Name: "model", Kind: "model", Version: "dev"},
		Counts: report.Counts{Failed: 1}}}}
	var out bytes.Buffer
	if err := updateBaselines(&out, dir, rep); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a baseline was written for the model: %v", entries)
	}
	if !strings.Contains(out.String(), "model fails 1 specs") {
		t.Errorf("output %q does not say the model fails", out.String())
	}
}

// conformIn runs the CLI in dir, with extra environment, and returns its output and exit code.
func conformIn(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(conformBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("conform %v did not finish in time", args)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// The baselines --update-baseline writes without --baseline-dir are the ones the next run
// in the same directory reads, and a filtered update keeps the other areas' entries
// (issue 24, found 3 and 4).
func TestUpdatedBaselineIsWhatTheNextRunReads(t *testing.T) {
	dir := t.TempDir()
	const backend = "mutant:batch-not-atomic"
	stdout, stderr, code := conformIn(t, dir, nil, "run", "--backend", backend, "--label-filter", "area:batch", "--update-baseline", "--no-corpus")
	if code != 0 {
		t.Fatalf("update: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "the next run in this directory reads "+defaultBaselineDir+"/") {
		t.Errorf("the update does not say where the next run reads it:\n%s", stdout)
	}
	files, _ := filepath.Glob(filepath.Join(dir, defaultBaselineDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("baseline files written: %v", files)
	}
	batchEntries := readBaselineRules(t, files[0])
	if batchEntries["batch.atomic"] == 0 {
		t.Fatalf("the update recorded no batch.atomic failure: %v", batchEntries)
	}
	stdout, stderr, code = conformIn(t, dir, nil, "run", "--backend", backend, "--label-filter", "area:batch", "--no-corpus")
	if code != 0 {
		t.Fatalf("the run after the update: exit %d, want 0 (it must read the updated baseline)\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "Baselines: "+defaultBaselineDir+"/") {
		t.Errorf("the run does not say which baselines it reads:\n%s", stderr)
	}
	// An update under another filter keeps the batch entries.
	if _, stderr, code := conformIn(t, dir, nil, "run", "--backend", backend, "--label-filter", "area:tables", "--update-baseline", "--no-corpus"); code != 0 {
		t.Fatalf("second update: exit %d\n%s", code, stderr)
	}
	after := readBaselineRules(t, files[0])
	for rule, n := range batchEntries {
		if after[rule] != n {
			t.Errorf("%s: %d entries before the update of area:tables, %d after", rule, n, after[rule])
		}
	}
}

func readBaselineRules(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b fixtures.Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, e := range b.Expected {
		n[e.Rule]++
	}
	return n
}

// --rerun-failed DIR runs again the backends of the earlier run by the argument they were
// given: a name, or NAME=env:VARIABLE; a connection string given in full is never kept,
// and the rerun asks for it in one line (issue 24, found 5).
func TestRerunFailedReusesTheEarlierBackends(t *testing.T) {
	for _, c := range []struct{ arg, kept string }{
		{"reference", "reference"},
		{"mine=env:MY_TABLE", "mine=env:MY_TABLE"},
		{"mine+sdk=env:MY_TABLE", "mine+sdk=env:MY_TABLE"},
		{"mine=DefaultEndpointsProtocol=http;AccountName=a;AccountKey=" + secretKey + ";TableEndpoint=http://127.0.0.1:1/a", ""},
		{"mutant:batch-not-atomic", "mutant:batch-not-atomic"},
	} {
		if got := reusableArgument(c.arg); got != c.kept {
			t.Errorf("reusableArgument(%q) = %q, want %q", c.arg, got, c.kept)
		}
	}

	dir := t.TempDir()
	earlier := func(name, arg string) {
		run := report.Run{Backend: driver.Info{Name: name}, Argument: arg}
		data, _ := json.Marshal(run)
		if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "raw", name+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeReport := func(names ...string) {
		rep := report.Report{Schema: report.Schema, Rules: []report.RuleRow{{ID: "batch.atomic"}}}
		for _, n := range names {
			rep.Backends = append(rep.Backends, report.Backend{Info: driver.Info{Name: n}})
			rep.Rules[0].Cells = append(rep.Rules[0].Cells, report.Cell{Outcome: verdict.Fail})
		}
		f, err := os.Create(filepath.Join(dir, report.FileJSON))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := report.WriteJSON(f, rep); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("MY_TABLE", "DefaultEndpointsProtocol=http;AccountName=a;AccountKey="+secretKey+";TableEndpoint=http://127.0.0.1:1/a")
	earlier("mine", "mine=env:MY_TABLE")
	earlier("reference", "reference")
	writeReport("mine", "reference")
	plan, err := planRun(runOptions{rerunFailed: dir, backendsAtOnce: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.backends, " ") != "mine=env:MY_TABLE reference" {
		t.Errorf("rerun backends %q, want the earlier run's arguments", plan.backends)
	}
	if strings.Contains(plan.command, secretKey) || !strings.Contains(plan.command, "mine=env:MY_TABLE") {
		t.Errorf("the rerun's command line %q", plan.command)
	}

	earlier("mine", "")
	_, err = planRun(runOptions{rerunFailed: dir, backendsAtOnce: 1})
	if err == nil || !strings.Contains(err.Error(), "--backend mine=env:VARIABLE") {
		t.Errorf("a backend given as a connection string: %v", err)
	}
}

// A filtered run's verdict claims only its selection, never core conformance when no core
// rule ran; --rerun-failed judges the merged whole over the earlier run's filter and says
// so, also when it re-runs a report it wrote itself.
func TestFilteredAndRerunVerdictsSayWhatTheyCover(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := conformIn(t, dir, nil, "run", "--backend", "mutant:batch-not-atomic", "--label-filter", "area:batch", "--out", "rep", "--no-corpus")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, out, stderr)
	}
	selection := "the verdict covers only the selection, 20 of the catalogue's"
	if strings.Contains(out, "core") || !strings.Contains(out, selection) || !strings.Contains(out, "(filter area:batch)") {
		t.Errorf("the filtered run's verdict:\n%s", out)
	}
	for i := range 2 {
		out, stderr, code = conformIn(t, dir, nil, "run", "--rerun-failed", "rep", "--out", "rep", "--no-corpus")
		if code != exitFailed {
			t.Fatalf("rerun %d: exit %d\n%s%s", i+1, code, out, stderr)
		}
		for _, want := range []string{selection, "(filter area:batch)", "Re-ran the", "over the earlier run's selection only (filter area:batch)"} {
			if !strings.Contains(out, want) {
				t.Errorf("rerun %d: the summary lacks %q:\n%s", i+1, want, out)
			}
		}
	}
}
