package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// A mistake in what to run is one line and exit 2, before any backend starts and before
// any report is written (issue 11: a mistyped filter reported "conforms" on 0 specs).
func TestRunMistakesExitTwoAndWriteNothing(t *testing.T) {
	for _, args := range [][]string{
		{"--backend", "reference", "--label-filter", "area:no-such-area"},
		{"--backend", "reference", "--label-filter", "area:query && ("},
		{"--backend", "no-such-backend"},
		{"--backend", "mutant:no-such-mutant"},
		{"--backend", "acct=AccountName=a;AccountKey=not base64!;TableEndpoint=http://127.0.0.1:1/a"},
		{"--backend", "reference", "--retry-errors", "-1"},
	} {
		out := filepath.Join(t.TempDir(), "report")
		_, stderr, code := conform(t, append(append([]string{"run"}, args...), "--out", out)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, stderr)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 || !strings.HasPrefix(stderr, "conform: ") {
			t.Errorf("%v: want one line on stderr, got %q", args, stderr)
		}
		if strings.Contains(stderr, "[reference] starting") {
			t.Errorf("%v: a backend started", args)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: %s was written", args, out)
		}
	}
}

func backendWith(c report.Counts) report.Report {
	return report.Report{Backends: []report.Backend{{Counts: c}}}
}

// Exit statuses: transport errors alone are inconclusive (3), a failure is 1 whatever else
// happened, an interrupted run 130.
func TestExitStatusSeparatesInconclusiveFromFailures(t *testing.T) {
	code := func(rep report.Report, interrupted bool) int {
		if interrupted {
			rep.Backends[0].VerdictKind = verdict.KindInterrupted
		}
		err := exitStatus(runPlan{}, rep, exitOK)
		var ee *exitError
		if err == nil {
			return 0
		}
		if !errors.As(err, &ee) {
			t.Fatalf("error %v", err)
		}
		return ee.code
	}
	for _, tc := range []struct {
		name        string
		counts      report.Counts
		interrupted bool
		want        int
	}{
		{"clean", report.Counts{Passed: 3}, false, exitOK},
		{"errors only", report.Counts{Passed: 3, Errors: 2}, false, exitInconclusive},
		{"errors and a failure", report.Counts{Failed: 1, Errors: 2, Unexpected: 1}, false, exitFailed},
		{"blocked, not listed", report.Counts{Blocked: 1, Unexpected: 1}, false, exitFailed},
		{"blocked as the baseline lists", report.Counts{Blocked: 1}, false, exitOK},
		{"expected failures only", report.Counts{ExpectedFailures: 4, Flaky: 1}, false, exitOK},
		// Issue 20, item 3: a documented difference, which the verdict counts as a pass,
		// does not fail the run either.
		{"documented differences only", report.Counts{Passed: 2, DocumentedDiffs: 3}, false, exitOK},
		{"interrupted", report.Counts{Passed: 1}, true, exitInterrupted},
	} {
		if got := code(backendWith(tc.counts), tc.interrupted); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Live progress counts outcomes as the summary does: a transport error is an error, not a
// failure (issue 11: progress said "5 failed", the summary 0).
func TestProgressAgreesWithTheSummary(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.event("x", event{Kind: "total", Total: 3})
	p.event("x", event{Kind: "spec", Outcome: string(verdict.Error), Failure: "unexpected EOF"})
	p.event("x", event{Kind: "spec", Outcome: string(verdict.Skipped), Failure: "capability missing"})
	p.event("x", event{Kind: "spec", Outcome: string(verdict.ExpectedFail)})
	p.done("x", 0, false)
	if !strings.Contains(buf.String(), "finished: 3 specs, 0 failed, 1 errors, 0 blocked") {
		t.Fatalf("progress:\n%s", buf.String())
	}
}

// --update-baseline records failures with their signature, never a transport error or an
// interrupted spec (an old entry for one is kept), and keeps flaky entries as they were.
func TestUpdateBaselineNeverRecordsTransportErrors(t *testing.T) {
	sig := fixtures.Signature{Status: 400, Code: "InvalidInput"}
	rep := report.Report{
		Backends: []report.Backend{{Info: driver.Info{Name: "emu", Kind: "emu", Version: "1"}}},
		Rules: []report.RuleRow{{ID: "r", Cells: []report.Cell{{Specs: []report.SpecResult{
			{Text: "fails", Outcome: verdict.Fail, Failure: "expected 409, but it answered 400 InvalidInput", Signature: &sig},
			{Text: "no answer, new", Outcome: verdict.Error, Failure: "unexpected EOF"},
			{Text: "no answer, listed", Outcome: verdict.Error, Failure: "context deadline exceeded"},
			{Text: "flaky", Outcome: verdict.Pass},
			{Text: "passes now", Outcome: verdict.Pass},
			{Text: "blocked", Outcome: verdict.Blocked, BlockedBy: "modify.insert.stores", Failure: "blocked by modify.insert.stores: load", Signature: &sig},
			{Text: "documented", Outcome: verdict.DocumentedDiff},
			{Text: "left out", Outcome: verdict.Skipped},
		}}}}, {ID: "other", Cells: []report.Cell{{Specs: []report.SpecResult{
			{Text: "not in this run", Outcome: verdict.Skipped}, // left out by the run's filter
		}}}}},
	}
	old := fixtures.Baseline{Backend: "emu", Version: "1", Expected: []fixtures.ExpectedFailure{
		{Rule: "r", Spec: "no answer, listed", Evidence: "old"},
		{Rule: "r", Spec: "flaky", Evidence: "old", Flaky: true, Reason: "clock"},
		{Rule: "r", Spec: "passes now", Evidence: "old"},
		{Rule: "r", Spec: "left out", Evidence: "old", Signature: sig},
		{Rule: "other", Spec: "not in this run", Evidence: "old", Signature: sig},
		{Rule: "r", Spec: "renamed away", Evidence: "old", Signature: sig},
	}}
	next := nextBaseline(old, rep, 0)
	got := map[string]fixtures.ExpectedFailure{}
	for _, e := range next.Expected {
		got[e.Spec] = e
	}
	if e, ok := got["fails"]; !ok || e.Signature != sig {
		t.Errorf("failure not recorded with its signature: %+v", e)
	}
	if _, ok := got["no answer, new"]; ok {
		t.Error("a transport error was recorded")
	}
	if e := got["no answer, listed"]; e.Evidence != "old" {
		t.Error("the entry of a spec without an answer was not kept")
	}
	if e := got["flaky"]; !e.Flaky || e.Reason != "clock" {
		t.Error("the flaky entry was not kept")
	}
	if _, ok := got["passes now"]; ok {
		t.Error("an entry of a passing spec was kept")
	}
	if e := got["blocked"]; e.Blocked != "modify.insert.stores" || e.Signature != sig {
		t.Errorf("a blocked spec is listed with the rule that blocked it: %+v", e)
	}
	if _, ok := got["documented"]; ok {
		t.Error("a documented difference was listed as a failure")
	}
	// --update-baseline changes only what it ran.
	if _, ok := got["renamed away"]; ok {
		t.Error("an entry that names no spec of the suite was kept")
	}
	if got["left out"].Evidence != "old" || got["not in this run"].Evidence != "old" {
		t.Errorf("entries of specs the run did not judge were dropped: %+v", next.Expected)
	}
}

// `conform clean --prefix cf` lists only tables of conform's exact pattern: a user's
// "cfusers" and other near misses survive (issue 11).
func TestCleanSparesNearMissNames(t *testing.T) {
	b := reference.New()
	ctx := context.Background()
	own := []string{"cfabcd1234p1t1", "cfabcd1234p2t7xa", "cfabcd1234b3"}
	users := []string{"cfusers", "cfabcd1234", "cfabcd1234p1", "cfusersbackup1", "cfabcd12345p1t1", "cfarchive2024p1t1"}
	for _, n := range append(append([]string(nil), own...), users...) {
		if err := b.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := tablesWithPrefix(ctx, b, "cf")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := append([]string(nil), own...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("clean would delete %v, want exactly %v", got, want)
	}
}
