package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
)

// unfinishedFilter selects a few rules whose specs run in about a second on the reference.
const unfinishedFilter = "area:modification && level:MUST"

func onlyBackendOf(t *testing.T, dir string) report.Backend {
	t.Helper()
	r, err := report.ReadJSON(filepath.Join(dir, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Backends) != 1 {
		t.Fatalf("%d backends in %s", len(r.Backends), dir)
	}
	return r.Backends[0]
}

// Issue 31, items 1 and 2: a run cut by Ginkgo's suite timeout did not finish: it never
// exits 0, its specs not started are "not run" (not left out by the filter), and
// --rerun-failed runs them; the merged whole exits 0 only once every selected spec ran.
func TestSuiteTimeoutNeverExitsZeroAndRerunFailedRunsWhatItLeft(t *testing.T) {
	cut := filepath.Join(t.TempDir(), "cut")
	_, stderr, code := conform(t, "run", "--backend", "reference", "--label-filter", unfinishedFilter, "--suite-timeout", "1ns", "--no-corpus", "--out", cut)
	if code != exitInterrupted {
		t.Fatalf("a run cut by its suite timeout: exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	b := onlyBackendOf(t, cut)
	if b.VerdictKind != report.VerdictStopped || !slices.Contains(b.StoppedBy, "Suite Timeout Elapsed") || b.Counts.NotRun == 0 ||
		b.Counts.Passed != 0 || b.Coverage.Selected == 0 || b.Coverage.Selected != b.Coverage.Unjudged {
		t.Fatalf("a run cut by its suite timeout: %s %q %+v %+v", b.VerdictKind, b.Verdict, b.Counts, b.Coverage)
	}

	// A rerun of some of what the run left: what it did not rerun is still not run.
	some := filepath.Join(t.TempDir(), "some")
	if _, stderr, code := conform(t, "run", "--rerun-failed", cut, "--label-filter", "modify.insert.stores", "--no-corpus", "--out", some); code != exitInterrupted {
		t.Fatalf("a rerun of one rule of a run that did not finish: exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	if b := onlyBackendOf(t, some); b.VerdictKind != report.VerdictStopped || b.Counts.NotRun == 0 || b.Counts.Passed == 0 {
		t.Fatalf("a rerun of one rule: %s %q %+v", b.VerdictKind, b.Verdict, b.Counts)
	}

	// A rerun of all of it finishes the run.
	whole := filepath.Join(t.TempDir(), "whole")
	out, stderr, code := conform(t, "run", "--rerun-failed", cut, "--no-corpus", "--out", whole)
	if code != exitOK {
		t.Fatalf("a rerun of everything the run left: exit %d\n%s\n%s", code, out, stderr)
	}
	b = onlyBackendOf(t, whole)
	if b.Interrupted || b.VerdictKind != report.ConformsOn || b.Counts.NotRun != 0 || b.Counts.Interrupted != 0 || b.Counts.Passed == 0 ||
		b.Coverage.Passed != b.Coverage.Selected {
		t.Fatalf("after the rerun: %s %q %+v %+v", b.VerdictKind, b.Verdict, b.Counts, b.Coverage)
	}
}

// Issue 31, item 4: with --parallel, a part cut by its timeout stops the backend's run as
// the first part would; --retry-errors runs what it left again (cut again here, so the
// run still did not finish).
func TestSuiteTimeoutInAnyPartNeverExitsZero(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parallel")
	_, stderr, code := conform(t, "run", "--backend", "reference", "--label-filter", unfinishedFilter, "--parallel", "2", "--retry-errors", "1",
		"--suite-timeout", "1ns", "--no-corpus", "--out", dir)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	if !strings.Contains(stderr, "retry 1 of 1") {
		t.Errorf("--retry-errors did not rerun the specs not started:\n%s", stderr)
	}
	if b := onlyBackendOf(t, dir); b.VerdictKind != report.VerdictStopped || b.Counts.NotRun == 0 {
		t.Fatalf("%s %q %+v", b.VerdictKind, b.Verdict, b.Counts)
	}
}

// A run that stopped after its last spec (an interrupt during the cleanup) has nothing to
// re-run, but --rerun-failed does not say "nothing failed" and exit 0: the verdict it
// would leave stands, and so does its exit status.
func TestRerunFailedOfARunStoppedAfterItsSpecsIsNotNothing(t *testing.T) {
	dir := t.TempDir()
	rep := report.Report{Schema: report.Schema, Rules: []report.RuleRow{{ID: "batch.atomic", Cells: []report.Cell{{Outcome: report.Pass}}}},
		Backends: []report.Backend{{Info: driver.Info{Name: "reference"}, Interrupted: true, StoppedBy: []string{"Interrupted by User"}, VerdictKind: report.VerdictStopped}}}
	f, err := os.Create(filepath.Join(dir, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.WriteJSON(f, rep); err != nil {
		t.Fatal(err)
	}
	p, err := planRun(runOptions{rerunFailed: dir, backendsAtOnce: 1})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitInterrupted || !strings.Contains(ee.msg, "did not finish") || p.nothing != "" {
		t.Fatalf("planRun: %v (nothing %q)", err, p.nothing)
	}
}
