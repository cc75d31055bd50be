package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// TestRunExecBackendStartsAndStopsALocalServer runs the tables area against `conform serve`
// started by conform itself through NAME=exec:COMMAND: it conforms, the server's output is
// kept beside the report, the run says how to repeat it, and the server is gone afterwards.
func TestRunExecBackendStartsAndStopsALocalServer(t *testing.T) {
	out := t.TempDir()
	backend := "local=exec:" + conformBin + " serve --addr 127.0.0.1:{port}"
	stdout, stderr, code := conform(t, "run", "--backend", backend, "--label-filter", "area:tables || service.properties.roundtrip", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	serverLog, err := os.ReadFile(filepath.Join(out, "raw", "local.server.log"))
	if err != nil || !strings.Contains(string(serverLog), "DefaultEndpointsProtocol") {
		t.Errorf("the server's output beside the report: %q, %v", serverLog, err)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Backends) != 1 || rep.Backends[0].Name != "local" || rep.Backends[0].Kind != "exec" {
		t.Fatalf("backends %+v", rep.Backends)
	}
	// A server started for the run is conform's own: its account-wide settings may change.
	for _, row := range rep.Rules {
		if row.ID == "service.properties.roundtrip" && row.Cells[0].Outcome != verdict.Pass {
			t.Errorf("service.properties.roundtrip on a started server: %s, want pass", row.Cells[0].Outcome)
		}
	}
	if !strings.Contains(string(b), "--backend local=exec:") {
		t.Errorf("report.json does not give the command that repeats the run with the same server")
	}
}

func TestMalformedBackendFormsExitTwoWithOneLine(t *testing.T) {
	for _, tc := range []struct{ backend, want string }{
		{"azurite@latest", "not an Azurite 3.x release"},
		{"azurite@2.7.1", "azurite-legacy"},
		{"me=exec:conform serve", "{port}"},
		{"me=image:conform:local,colour=red", `unknown image option "colour"`},
		{"me=image:conform:local,key=plain", "env:VARIABLE"},
	} {
		_, stderr, code := conform(t, "run", "--backend", tc.backend, "--out", t.TempDir())
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--backend %s: exit %d, stderr %q; want exit 2 and one line saying %q", tc.backend, code, stderr, tc.want)
		}
	}
}

func TestStartedBackendsRunInOneProcessAndCanBeRepeated(t *testing.T) {
	for _, b := range []string{"me=exec:serve --addr 127.0.0.1:{port}", "me=image:conform:local,key=env:K"} {
		if n := parallelFor(b, 0); n != localParallel {
			t.Errorf("parallelFor(%q) = %d, want %d: each process would start a server of its own", b, n, localParallel)
		}
		if got := reusableArgument(b); got != b {
			t.Errorf("reusableArgument(%q) = %q: a description without a secret can be given again", b, got)
		}
	}
	if got := reusableArgument("me=DefaultEndpointsProtocol=http;AccountKey=abc"); got != "" {
		t.Errorf("a connection string is reusable: %q", got)
	}
}

// writeSyntheticReport writes a report.json of one backend with one rule ending as o.
func writeSyntheticReport(t *testing.T, name, version string, o verdict.Outcome) string {
	t.Helper()
	dir := t.TempDir()
	r := report.Report{Schema: report.Schema, Conform: "v0.9.0",
		Backends: []report.Backend{{Info: driver.Info{Name: name, Kind: "azurite", Version: version, Driver: "rest"}, Profile: "azure", Verdict: "conforms"}},
		Rules: []report.RuleRow{{ID: "tables.name.charset", Level: "MUST", Area: "tables", Text: "Table names are letters and digits.",
			Cells: []report.Cell{{Outcome: o, Specs: []report.SpecResult{{Text: "an underscore", Outcome: o, Failure: "it was accepted, but the rule wants it refused with 400 InvalidInput"}}}}}}}
	if err := report.WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestMatrixOfPublishedRuns(t *testing.T) {
	older := writeSyntheticReport(t, "azurite@3.29.0", "3.29.0", verdict.Fail)
	newer := writeSyntheticReport(t, "azurite", "3.35.0", verdict.Pass)
	if _, stderr, code := conform(t, "matrix", newer, older, "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, "publish it first with conform report --publish") {
		t.Errorf("unpublished runs: exit %d, %q", code, stderr)
	}
	for _, dir := range []string{older, newer} {
		if _, stderr, code := conform(t, "report", "--publish", dir); code != 0 {
			t.Fatalf("publish %s: exit %d: %s", dir, code, stderr)
		}
	}
	out := t.TempDir()
	stdout, stderr, code := conform(t, "matrix", newer, older, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Matrix of 2 runs (azurite@3.29.0, azurite@3.35.0): 1 of 1 rules differ") {
		t.Errorf("stdout %q", stdout)
	}
	for _, f := range []string{"matrix.html", "matrix.md", "matrix.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), "passes since 3.35.0") {
			t.Errorf("%s does not say where the rule changed: %v", f, err)
		}
	}
	for _, args := range [][]string{{"matrix"}, {"matrix", newer, "--format", "pdf"}, {"matrix", t.TempDir()}} {
		if _, stderr, code := conform(t, args...); code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("conform %v: exit %d, %q; want exit 2 and one line", args, code, stderr)
		}
	}
}

// TestAzuriteVersionFindsItsBaselineByVersion: azurite@VERSION is of kind azurite, so the
// baseline of its version applies, and a version without one is told which exist.
func TestAzuriteVersionFindsItsBaselineByVersion(t *testing.T) {
	b, file, note, err := fixtures.FindBaseline("", "azurite@3.35.0", "azurite", "3.35.0")
	if err != nil || file != "azurite-3.35.0.json" || len(b.Expected) == 0 || note != "" {
		t.Errorf("azurite@3.35.0: file %s, %d entries, note %q, %v; want Azurite 3.35.0's baseline", file, len(b.Expected), note, err)
	}
	_, _, note, err = fixtures.FindBaseline("", "azurite@3.29.0", "azurite", "3.29.0")
	if err != nil || !strings.Contains(note, "3.29.0") || !strings.Contains(note, "azurite-3.35.0.json") {
		t.Errorf("azurite@3.29.0: note %q, %v; want a line naming the baselines that exist", note, err)
	}
}
