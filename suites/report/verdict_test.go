package report

import (
	"strings"
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/verdict"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

func entry(name string, v any) types.ReportEntry {
	return types.ReportEntry{Name: name, Value: types.WrapEntryValue(v)}
}

// listedFailure are the entries the runner attaches to a spec that failed as its baseline
// entry lists (an expected failure; the Ginkgo spec passes).
func listedFailure(rule, evidence string, sig fixtures.Signature) []types.ReportEntry {
	return []types.ReportEntry{
		entry(framework.EntryResult, verdict.Result{State: verdict.StateFailed, Signature: sig}),
		entry(framework.EntryBaseline, fixtures.ExpectedFailure{Rule: rule, Evidence: evidence, Signature: sig}),
	}
}

func build(name string, specs ...types.SpecReport) Backend {
	return Build([]Run{{Backend: driver.Info{Name: name}, Ginkgo: types.Report{SpecReports: specs}}}, testRules, Meta{}).Backends[0]
}

func cellOf(t *testing.T, r Report, rule string) Cell {
	t.Helper()
	for _, row := range r.Rules {
		if row.ID == rule {
			return row.Cells[0]
		}
	}
	t.Fatalf("no rule %s", rule)
	return Cell{}
}

func allMust(backend string, state types.SpecState, failure string, extra ...types.ReportEntry) types.SpecReports {
	var out types.SpecReports
	for _, r := range testRules {
		if r.Level == spec.Must {
			out = append(out, specReport(backend, r.ID, "spec", state, failure, extra...))
		}
	}
	return out
}

// Outcomes come from typed entries: a backend's error text that holds our old marker
// strings is a fail of the rule, not an error (issue 11).
func TestMarkerTextInAFailureIsNotATransportError(t *testing.T) {
	msg := "the rule expects 400, but it answered 500 InternalError (\"transport error: conform:transport context deadline exceeded\")"
	b := build("x", specReport("x", "entity.insert.conflict", "a", types.SpecStateFailed, msg))
	if b.Counts.Failed != 1 || b.Counts.Errors != 0 {
		t.Fatalf("counts %+v", b.Counts)
	}
}

// A run whose only problems are transport errors is inconclusive, and names them.
func TestOnlyTransportErrorsIsInconclusive(t *testing.T) {
	specs := allMust("x", types.SpecStatePassed, "")
	specs[0] = specReport("x", specs[0].LeafNodeLabels[0], "spec", types.SpecStateFailed, "unexpected EOF",
		entry(framework.EntryTransport, framework.TransportEntry{Op: "InsertEntity", Error: "unexpected EOF"}))
	b := build("x", specs...)
	if b.VerdictKind != verdict.Inconclusive || !strings.Contains(b.Verdict, "unexpected EOF") || len(b.Errors) != 1 {
		t.Fatalf("verdict %s %q errors %v", b.VerdictKind, b.Verdict, b.Errors)
	}
}

// "conforms" only when every MUST rule ran and passed; a filtered run says what it covers.
func TestConformsOnlyWhenEveryMustRuleRanAndPassed(t *testing.T) {
	b := build("x", allMust("x", types.SpecStatePassed, "")...)
	if b.VerdictKind != verdict.Conforms || b.Coverage.Passed != 4 || b.Coverage.MustRules != 4 {
		t.Fatalf("all passed: %s %q %+v", b.VerdictKind, b.Verdict, b.Coverage)
	}
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Filter: "area:modification", Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateSkipped, ""),
	}}}}, testRules, Meta{})
	if b := r.Backends[0]; b.VerdictKind != verdict.ConformsOn || b.Verdict != "conforms on the 1 selected applicable MUST rules; the verdict covers only the selection, 1 of the catalogue's 4 MUST rules (filter area:modification); 3 left out by the filter" {
		t.Fatalf("filtered: %s %q", b.VerdictKind, b.Verdict)
	}
	if b := build("x"); b.VerdictKind == verdict.Conforms {
		t.Fatalf("nothing ran, verdict %q", b.Verdict)
	}
}

// A rule with a passed spec and a skipped one is partial, never pass.
func TestSkippedSpecMakesTheCellPartial(t *testing.T) {
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "entity.insert.conflict", "b", types.SpecStateSkipped, "capability missing: sas"),
	}}}}, testRules, Meta{})
	if c := cellOf(t, r, "entity.insert.conflict"); c.Outcome != verdict.Partial {
		t.Fatalf("cell %s", c.Outcome)
	}
}

// A MUST rule that records a choice passes with a note; only MAY and SHOULD show info.
func TestInfoOnlyForMayAndShould(t *testing.T) {
	choice := entry(framework.EntryChoice, framework.Choice{What: "status", Chosen: "201"})
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, "", choice),
		specReport("x", "pagination.boundary.token", "b", types.SpecStatePassed, "", choice),
	}}}}, testRules, Meta{})
	if c := cellOf(t, r, "entity.insert.conflict"); c.Outcome != verdict.Pass || len(c.Specs[0].Notes) != 1 {
		t.Fatalf("MUST with a choice: %+v", c)
	}
	if c := cellOf(t, r, "pagination.boundary.token"); c.Outcome != verdict.Info {
		t.Fatalf("MAY with a choice: %s", c.Outcome)
	}
}

// A blocked setup is its own outcome, linked to the blocking rule, and not a failure.
func TestBlockedIsShownApartFromFailures(t *testing.T) {
	blocked := entry(framework.EntryBlocked, framework.BlockedEntry{Rule: "batch.atomic", Step: "load", Error: "400"})
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "query.order.keys", "a", types.SpecStateFailed, "blocked by batch.atomic", blocked),
	}}}}, testRules, Meta{})
	c := cellOf(t, r, "query.order.keys")
	if c.Outcome != verdict.Blocked || c.Specs[0].BlockedBy != "batch.atomic" || r.Backends[0].Counts.Failed != 0 || r.Backends[0].Counts.Blocked != 1 {
		t.Fatalf("cell %+v counts %+v", c, r.Backends[0].Counts)
	}
	if r.Backends[0].VerdictKind == verdict.Conforms || r.Backends[0].Coverage.Failing != 0 {
		t.Fatalf("verdict %q", r.Backends[0].Verdict)
	}
}

// An interrupted run says so in its verdict; its unfinished specs are interrupted.
func TestInterruptedRunSaysSo(t *testing.T) {
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Interrupted: true, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateInterrupted, "interrupted by signal"),
	}}}}, testRules, Meta{})
	b := r.Backends[0]
	if b.VerdictKind != verdict.KindInterrupted || !strings.HasPrefix(b.Verdict, "interrupted") || cellOf(t, r, "query.order.keys").Outcome != verdict.Interrupted {
		t.Fatalf("verdict %s %q", b.VerdictKind, b.Verdict)
	}
}

// A flaky spec that failed as its baseline entry lists shows flaky; one that passed is a
// pass with a note, never a failing MUST rule (issue 31, item 10); a changed failure is a
// fail with the old evidence.
func TestFlakyAndChangedFailure(t *testing.T) {
	flaky := entry(framework.EntryBaseline, fixtures.ExpectedFailure{Rule: "entity.insert.conflict", Flaky: true, Reason: "clock", Signature: fixtures.Signature{Status: 400}})
	run := func(specs ...types.SpecReport) Report {
		return Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: specs}}}, testRules, Meta{})
	}
	r := run(specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, "",
		entry(framework.EntryResult, verdict.Result{State: verdict.StatePassed}), flaky),
		specReport("x", "query.order.keys", "b", types.SpecStateFailed, "now 500",
			entry(framework.EntryResult, verdict.Result{State: verdict.StateFailed, Signature: fixtures.Signature{Status: 500, Code: "InternalError"}}),
			entry(framework.EntryBaseline, fixtures.ExpectedFailure{Rule: "query.order.keys", Spec: "b", Evidence: "answered 400", Signature: fixtures.Signature{Status: 400}})))
	if c := cellOf(t, r, "entity.insert.conflict"); c.Outcome != verdict.Pass || c.Against || len(c.Specs[0].Notes) != 1 || !strings.Contains(c.Specs[0].Notes[0], "flaky") {
		t.Fatalf("flaky spec that passed: cell %+v", c)
	}
	if c := cellOf(t, r, "query.order.keys"); c.Outcome != verdict.Fail || !strings.Contains(c.Specs[0].PreviousEvidence, "answered 400") {
		t.Fatalf("changed cell %+v", c)
	}
	r = run(specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, "",
		entry(framework.EntryResult, verdict.Result{State: verdict.StatePassed}), flaky))
	if b := r.Backends[0]; b.Coverage.Failing != 0 || b.Coverage.Passed != 1 || strings.Contains(b.Verdict, "fail") {
		t.Errorf("issue 31, item 10: a flaky spec that passed counted as failing: %q %+v", b.Verdict, b.Coverage)
	}
	r = run(specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, "",
		entry(framework.EntryResult, verdict.Result{State: verdict.StateFailed, Signature: fixtures.Signature{Status: 400}}), flaky))
	if c := cellOf(t, r, "entity.insert.conflict"); c.Outcome != verdict.Flaky || !c.Against {
		t.Errorf("a flaky spec that failed as listed: cell %+v", c)
	}
}

// Every outcome is described, and the legend lists them all.
func TestEveryOutcomeIsDescribed(t *testing.T) {
	for _, o := range []verdict.Outcome{verdict.Pass, verdict.Fail, verdict.Error, verdict.Blocked, verdict.Skipped, verdict.Partial, verdict.ExpectedFail, verdict.Flaky, verdict.UnexpectedPass, verdict.Info, verdict.DocumentedDiff, verdict.Interrupted, verdict.NotRun} {
		if o.Describe().Meaning == "" {
			t.Errorf("%s has no description", o)
		}
	}
	if len(Legend) != len(verdict.Outcomes) {
		t.Errorf("legend has %d rows for %d outcomes", len(Legend), len(verdict.Outcomes))
	}
}

// --rerun-failed and --retry-errors merge a rerun into the earlier run: the specs it ran
// replace theirs, the others stay, and the whole is judged (issue 11).
func TestMergeRunsJudgesTheWhole(t *testing.T) {
	earlier := Run{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateFailed, "EOF", entry(framework.EntryTransport, framework.TransportEntry{Error: "EOF"})),
		specReport("x", "batch.max.operations", "c", types.SpecStatePassed, ""),
		specReport("x", "auth.sas.read", "d", types.SpecStatePassed, ""),
	}}}
	rerun := Run{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStateSkipped, ""), // left out by the rerun's filter
		specReport("x", "query.order.keys", "b", types.SpecStatePassed, ""),
	}}}
	b := Build([]Run{MergeRuns(earlier, rerun)}, testRules, Meta{}).Backends[0]
	if b.VerdictKind != verdict.Conforms || b.Counts.Errors != 0 || b.Counts.Passed != 4 {
		t.Fatalf("merged: %s %q %+v", b.VerdictKind, b.Verdict, b.Counts)
	}
}

// Every count of rules names its level: two counts of different levels are never shown
// side by side as if they were one.
func TestCountsNameTheirLevel(t *testing.T) {
	rules := []RuleOutcome{{ID: "a", Level: "MUST"}, {ID: "b", Level: "MUST"}, {ID: "c", Level: "SHOULD"}, {ID: "d", Level: "MAY"}}
	for _, c := range []struct {
		rules []RuleOutcome
		want  string
	}{
		{rules, "2 MUST, 1 SHOULD and 1 MAY rules"},
		{rules[:2], "2 MUST rules"},
		{rules[2:3], "1 SHOULD rule"},
		{rules[1:3], "1 MUST and 1 SHOULD rules"},
	} {
		if got := RulesByLevel(c.rules); got != c.want {
			t.Errorf("RulesByLevel: %q, want %q", got, c.want)
		}
	}
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "entity.insert.conflict", "a2", types.SpecStatePassed, ""),
		specReport("x", "batch.max.operations", "b", types.SpecStateFailed, "accepted 101"),
		specReport("x", "pagination.boundary.token", "c", types.SpecStatePassed, ""),
	}}}}, testRules, Meta{})
	if got, want := BackendCountsInWords(r, 0, false), "MUST 1 pass · 1 FAIL · 2 not run; MAY 1 pass"; got != want {
		t.Errorf("rules: %q, want %q", got, want)
	}
	if got, want := BackendCountsInWords(r, 0, true), "MUST 2 pass · 1 FAIL; MAY 1 pass"; got != want {
		t.Errorf("specs: %q, want %q", got, want)
	}
}
