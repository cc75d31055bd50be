package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

// oneBackend is a report of backend "b" with a rule per cell, named r0, r1, ...
func oneBackend(cells ...Cell) Report {
	b := Backend{}
	b.Name = "b"
	r := Report{Backends: []Backend{b}}
	for i, c := range cells {
		r.Rules = append(r.Rules, RuleRow{ID: fmt.Sprintf("r%d", i), Level: "MUST", Cells: []Cell{c}})
	}
	return r
}

func failing(outcome verdict.Outcome, failure string) Cell {
	return Cell{Outcome: outcome, Specs: []SpecResult{{Outcome: outcome, Failure: failure}}}
}

// A baseline edit (the backend failed the same way both times, and the new baseline lists
// it; or a stale entry removed from a rule that passes) is neither better nor worse: the
// backend did not change (issue 34, item 10: it was listed as "got better").
func TestDiffTellsABaselineEditFromABackendChange(t *testing.T) {
	refused := "the rule expects the backend to succeed, but it failed with 400 InvalidInput"
	old := oneBackend(failing(verdict.Fail, refused), failing(verdict.UnexpectedPass, ""), failing(verdict.Fail, refused), failing(verdict.ExpectedFail, refused))
	cur := oneBackend(failing(verdict.ExpectedFail, refused), Cell{Outcome: verdict.Pass, Specs: []SpecResult{{Outcome: verdict.Pass}}},
		failing(verdict.ExpectedFail, "the rule expects the backend to succeed, but it failed with 500 InternalError"), failing(verdict.Fail, refused))
	d := Diff(old, cur, "old", "new")
	b := d.Backends[0]
	var edited []string
	for _, c := range b.BaselineChanged {
		edited = append(edited, c.Rule)
	}
	if strings.Join(edited, ",") != "r0,r1,r3" || len(b.Better) != 1 || b.Better[0].Rule != "r2" || len(b.Worse) != 0 || d.Regressions != 0 {
		t.Errorf("baseline edits %v, better %+v, worse %+v, regressions %d", edited, b.Better, b.Worse, d.Regressions)
	}
	var out bytes.Buffer
	if err := WriteDiffMarkdown(&out, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "### Baseline changed, the backend did the same (3)") || !strings.Contains(out.String(), "### Got better (1)") {
		t.Errorf("report --diff:\n%s", out.String())
	}
}

// A filtered old run against a full one: the hundreds of rules that cannot be compared are
// one line after the changes, not a row each before them.
func TestDiffSaysManyIncomparableRulesInOneLine(t *testing.T) {
	var oldCells, newCells []Cell
	for range 300 {
		oldCells = append(oldCells, Cell{Outcome: verdict.Skipped})
		newCells = append(newCells, Cell{Outcome: verdict.Pass, Specs: []SpecResult{{Outcome: verdict.Pass}}})
	}
	oldCells = append(oldCells, Cell{Outcome: verdict.Pass, Specs: []SpecResult{{Outcome: verdict.Pass}}})
	newCells = append(newCells, failing(verdict.Fail, "the rule expects the backend to succeed, but it failed with 400 InvalidInput"))
	var out bytes.Buffer
	if err := WriteDiffMarkdown(&out, Diff(oneBackend(oldCells...), oneBackend(newCells...), "old", "new")); err != nil {
		t.Fatal(err)
	}
	md := out.String()
	worse, summed := strings.Index(md, "### Got worse (1)"), strings.Index(md, "300 rules cannot be compared: nothing was judged in old (`r0`, `r1`, `r2`, …).")
	if worse < 0 || summed < worse || strings.Count(md, "\n") > 20 {
		t.Errorf("report --diff (%d lines):\n%s", strings.Count(md, "\n"), md)
	}
}
