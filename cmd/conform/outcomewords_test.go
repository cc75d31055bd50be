package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// A backend's last progress line never shows its process's status 1 (a spec failed, maybe
// as the baseline expects) beside a run that exits 0; it names what is not a plain end
// (issue 34, item 10).
func TestProgressFinishedLineShowsNoStatusTheVerdictContradicts(t *testing.T) {
	for _, c := range []struct {
		code        int
		interrupted bool
		want, never string
	}{
		{exitFailed, false, "in 0s\n", "exit 1"},
		{exitOK, false, "in 0s\n", "exit 0"},
		{exitUsage, false, "(its process ended with status 2)", "exit"},
		{exitFailed, true, "(interrupted)", "exit"},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf)
		p.start("x", 1)
		p.event("x", event{Kind: "spec", Outcome: string(verdict.ExpectedFail)})
		p.done("x", c.code, c.interrupted)
		if out := buf.String(); !strings.Contains(out, c.want) || strings.Contains(out, c.never) {
			t.Errorf("status %d: %q, want %q and never %q", c.code, out, c.want, c.never)
		}
	}
}

// The summary of an --update-baseline run does not say its unexpected specs fail the run,
// which then exits 0; a plain run says they do.
func TestUpdateBaselineSummaryDoesNotSayItFails(t *testing.T) {
	b := report.Backend{Info: driver.Info{Name: "x"}, Verdict: "does not conform", Counts: report.Counts{Failed: 2, Unexpected: 2}}
	rep := report.Report{Backends: []report.Backend{b}}
	var plain, updating bytes.Buffer
	printSummary(&plain, rep, "out")
	printRunSummary(&updating, rep, "out", true)
	if !strings.Contains(plain.String(), "2 specs not as the baseline and the profile expect (each fails the run)") {
		t.Errorf("a plain run's summary:\n%s", plain.String())
	}
	if out := updating.String(); strings.Contains(out, "fails the run") || !strings.Contains(out, "do not fail this run") {
		t.Errorf("an --update-baseline run's summary:\n%s", out)
	}
}

// conform clean's last line says what it deleted, never a bare count that reads like the
// tables left ("13 tables with prefix "cf"").
func TestCleanSummarySaysWhatWasDeleted(t *testing.T) {
	for _, c := range []struct {
		found, deleted int
		dryRun         bool
		want           string
	}{
		{13, 13, false, `deleted 13 tables with prefix "cf", all that were found`},
		{13, 11, false, `deleted 11 of 13 tables with prefix "cf"; 2 could not be deleted (said above) and are left`},
		{1, 0, true, `--dry-run: 1 table with prefix "cf" would be deleted; none was`},
		{0, 0, false, `no table of conform's with prefix "cf": nothing to delete`},
	} {
		if got := cleanSummary("cf", c.found, c.deleted, c.dryRun); got != c.want {
			t.Errorf("%d found, %d deleted, dry run %v: %q, want %q", c.found, c.deleted, c.dryRun, got, c.want)
		}
	}
}

// A live BLOCKED or FAIL line without a failure text is one line: no indented empty line
// under it.
func TestProgressEventWithoutFailureTextIsOneLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.start("x", 1)
	p.event("x", event{Kind: "spec", Outcome: string(verdict.Blocked), Rule: "r.one", Text: "a spec"})
	p.event("x", event{Kind: "spec", Outcome: string(verdict.Fail), Rule: "r.two", Text: "another", Failure: "status 403, expected 401\n"})
	out := buf.String()
	if strings.Contains(out, "\n        \n") || !strings.Contains(out, "[x] BLOCKED r.one: a spec\n") || !strings.Contains(out, "        status 403, expected 401\n") {
		t.Fatalf("progress lines:\n%q", out)
	}
}

// A backend whose specs go quiet for longer than progressQuiet (a slow stretch prints no
// tenth) gets a "still running" line; one that finished, or a quiet shorter than that, none.
func TestProgressSaysStillRunningWhenQuiet(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	clock := time.Unix(1000, 0)
	p.now = func() time.Time { return clock }
	p.lastLine = clock
	p.start("slow", 1)
	p.start("quick", 1)
	p.event("slow", event{Kind: "total", Total: 10})
	p.event("quick", event{Kind: "total", Total: 10})
	p.done("quick", exitOK, false)
	clock = clock.Add(progressQuiet / 2)
	p.beatIfQuiet(progressQuiet)
	if strings.Contains(buf.String(), "still running") {
		t.Fatalf("a line after a short quiet:\n%s", buf.String())
	}
	clock = clock.Add(progressQuiet)
	p.beatIfQuiet(progressQuiet)
	out := buf.String()
	if !strings.Contains(out, "[slow] still running: 0/10 specs done") || strings.Contains(out, "[quick] still running") {
		t.Fatalf("after a long quiet:\n%s", out)
	}
}
