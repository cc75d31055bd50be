package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
)

// The end of a run lists the failing rules (the first 20, then how many more) with what
// the backend did, says when every failure is one the baseline expects, explains rules
// skipped by policy, and names report.html (issue 24, found 7 and 8).
func TestSummaryListsFailingRulesAndSaysWhy(t *testing.T) {
	rep := report.Report{Backends: []report.Backend{
		{Info: driver.Info{Name: "broken"}, Verdict: "does not conform"},
		{Info: driver.Info{Name: "known"}, Verdict: "does not conform"},
	}}
	for i := range 25 {
		rep.Rules = append(rep.Rules, report.RuleRow{ID: fmt.Sprintf("area.rule%02d", i), Level: "MUST", Cells: []report.Cell{
			{Outcome: report.Fail, Specs: []report.SpecResult{{Outcome: report.Fail, Failure: "the rule expects the backend to fail with 409, but it succeeded"}}},
			{Outcome: report.ExpectedFail, Specs: []report.SpecResult{{Outcome: report.ExpectedFail, Evidence: "answers 400"}}},
		}})
	}
	rep.Rules = append(rep.Rules, report.RuleRow{ID: "service.cors.actual-headers", Level: "MUST", Cells: []report.Cell{
		{Outcome: report.Skipped, Specs: []report.SpecResult{{Outcome: report.Skipped, SkipReason: "changes account-wide settings: set CONFORM_ALLOW_ACCOUNT_CHANGES=1 to run it against this endpoint"}}},
		{Outcome: report.Pass},
	}})
	var buf bytes.Buffer
	printSummary(&buf, rep, "out")
	got := buf.String()
	for _, want := range []string{
		"FAIL area.rule00 (MUST): accepted",
		"FAIL area.rule19 (MUST): accepted",
		"... and 5 more rules (all in the report)",
		"every failure (25 rules) is one the baseline expects",
		"1 rule not run: service.cors.actual-headers. They change account-wide settings",
		"CONFORM_ALLOW_ACCOUNT_CHANGES=1",
		"Report: out/report.html",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "area.rule20") {
		t.Errorf("summary lists more than 20 failing rules:\n%s", got)
	}
}
