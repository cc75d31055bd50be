package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// The summary counts allowed choices apart within the passed specs, and rules the filter
// left out as "left out by the filter", never as skipped (issue 31, items 11 and 12).
func TestSummarySaysAllowedChoicesAndLeftOutApart(t *testing.T) {
	leftOut := report.SpecResult{Outcome: verdict.Skipped, SkipReason: "left out by the label filter or the run's selection"}
	rep := report.Report{
		Backends: []report.Backend{{Info: driver.Info{Name: "x"}, Verdict: "conforms on the 1 selected applicable MUST rules",
			Counts: report.Counts{Passed: 3, Information: 2, SkippedByFilter: 1}}},
		Rules: []report.RuleRow{
			{ID: "a.must", Level: "MUST", Cells: []report.Cell{{Outcome: verdict.Pass, Specs: []report.SpecResult{{Outcome: verdict.Pass}}}}},
			{ID: "a.left", Level: "MUST", Cells: []report.Cell{{Outcome: verdict.Skipped, Specs: []report.SpecResult{leftOut}}}},
			{ID: "a.may", Level: "MAY", Cells: []report.Cell{{Outcome: verdict.Info, Specs: []report.SpecResult{{Outcome: verdict.Info}, {Outcome: verdict.Info}}}}},
		},
	}
	var buf bytes.Buffer
	printSummary(&buf, rep, "out")
	got := buf.String()
	for _, want := range []string{"rules: MUST 1 pass · 1 left out by the filter; MAY 1 allowed choice", "specs of every level: passed 3 (2 of them allowed choices)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "rules: MUST 1 pass · 1 skipped") {
		t.Errorf("the summary counts a rule left out as skipped:\n%s", got)
	}
}
