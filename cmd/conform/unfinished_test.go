package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
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
	if b.VerdictKind != verdict.KindInterrupted || !slices.Contains(b.StoppedBy, "Suite Timeout Elapsed") || b.Counts.NotRun == 0 ||
		b.Counts.Passed != 0 || b.Coverage.Selected == 0 || b.Coverage.Selected != b.Coverage.Unjudged {
		t.Fatalf("a run cut by its suite timeout: %s %q %+v %+v", b.VerdictKind, b.Verdict, b.Counts, b.Coverage)
	}

	// A rerun of some of what the run left: what it did not rerun is still not run.
	some := filepath.Join(t.TempDir(), "some")
	if _, stderr, code := conform(t, "run", "--rerun-failed", cut, "--label-filter", "modify.insert.stores", "--no-corpus", "--out", some); code != exitInterrupted {
		t.Fatalf("a rerun of one rule of a run that did not finish: exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	if b := onlyBackendOf(t, some); b.VerdictKind != verdict.KindInterrupted || b.Counts.NotRun == 0 || b.Counts.Passed == 0 {
		t.Fatalf("a rerun of one rule: %s %q %+v", b.VerdictKind, b.Verdict, b.Counts)
	}

	// A rerun of all of it finishes the run.
	whole := filepath.Join(t.TempDir(), "whole")
	out, stderr, code := conform(t, "run", "--rerun-failed", cut, "--no-corpus", "--out", whole)
	if code != exitOK {
		t.Fatalf("a rerun of everything the run left: exit %d\n%s\n%s", code, out, stderr)
	}
	b = onlyBackendOf(t, whole)
	if b.Interrupted || b.VerdictKind != verdict.ConformsOn || b.Counts.NotRun != 0 || b.Counts.Interrupted != 0 || b.Counts.Passed == 0 ||
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
	if b := onlyBackendOf(t, dir); b.VerdictKind != verdict.KindInterrupted || b.Counts.NotRun == 0 {
		t.Fatalf("%s %q %+v", b.VerdictKind, b.Verdict, b.Counts)
	}
}

// A run that stopped after its last spec (an interrupt during the cleanup) has nothing to
// re-run, but --rerun-failed does not say "nothing failed" and exit 0: the verdict it
// would leave stands, and so does its exit status.
func TestRerunFailedOfARunStoppedAfterItsSpecsIsNotNothing(t *testing.T) {
	dir := t.TempDir()
	rep := report.Report{Schema: report.Schema, Rules: []report.RuleRow{{ID: "batch.atomic", Cells: []report.Cell{{Outcome: verdict.Pass}}}},
		Backends: []report.Backend{{Info: driver.Info{Name: "reference"}, Interrupted: true, StoppedBy: []string{"Interrupted by User"}, VerdictKind: verdict.KindInterrupted}}}
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

// Issue 31, items 1 and 3: an interrupt that reaches the backend's process alone (conform
// run itself sees no signal) is recorded only in Ginkgo's report; the run did not finish,
// so it exits 130, not 0, and the specs Ginkgo never started are not run, not left out.
// --rerun-failed runs them, and the merged whole exits 0 once every selected spec ran.
func TestInterruptOfTheBackendProcessAloneNeverExitsZero(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc to find the backend process")
	}
	srv := startServeProcess(t)
	t.Setenv("CONFORM_TEST_SERVED", srv.conn)
	b, err := rest.New(srv.conn, rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const runID = "chint001"
	cut := filepath.Join(t.TempDir(), "cut")
	cmd := exec.Command(conformBin, "run", "--backend", "served=env:CONFORM_TEST_SERVED", "--label-filter", "area:patterns", "--parallel", "1", "--no-corpus", "--out", cut)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CONFORM_RUN_ID="+runID)
	var output lockedBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		for _, pid := range backendProcessesOf(runID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	// Once the run holds a table, its backend process is inside Ginkgo's run of the specs.
	seen := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !seen; time.Sleep(5 * time.Millisecond) {
		seen = len(tablesWithRunPrefix(t, b, framework.TablePrefix+runID)) > 0
	}
	pids := backendProcessesOf(runID)
	if !seen || len(pids) != 1 {
		t.Fatalf("the run never held a table, or has %d backend processes\n%s", len(pids), output.String())
	}
	if err := syscall.Kill(pids[0], syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("conform run did not end within 90 s of the backend's interrupt\n%s", output.String())
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d\n%s", waitErr, exitInterrupted, output.String())
	}
	rep := onlyBackendOf(t, cut)
	if rep.VerdictKind != verdict.KindInterrupted || !slices.Contains(rep.StoppedBy, "Interrupted by User") || rep.Counts.NotRun+rep.Counts.Interrupted == 0 {
		t.Fatalf("after the backend's interrupt: %s %q %+v", rep.VerdictKind, rep.Verdict, rep.Counts)
	}

	whole := filepath.Join(t.TempDir(), "whole")
	out, stderr, code := conform(t, "run", "--rerun-failed", cut, "--no-corpus", "--out", whole)
	if code != exitOK {
		t.Fatalf("a rerun of everything the run left: exit %d\n%s\n%s", code, out, stderr)
	}
	if rep := onlyBackendOf(t, whole); rep.Interrupted || rep.Counts.NotRun != 0 || rep.Counts.Interrupted != 0 || rep.Coverage.Passed != rep.Coverage.Selected {
		t.Fatalf("after the rerun: %s %q %+v %+v", rep.VerdictKind, rep.Verdict, rep.Counts, rep.Coverage)
	}
}
