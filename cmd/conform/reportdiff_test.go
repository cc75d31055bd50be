package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// diffReport writes a one-backend report directory whose three rules have the given cells.
func diffReport(t *testing.T, a, b report.Cell, c report.Cell) string {
	t.Helper()
	r := report.Report{Schema: report.Schema, Backends: []report.Backend{{Profile: "storage"}}, Legend: report.Legend}
	r.Backends[0].Name = "azurite"
	for _, row := range []struct {
		id   string
		cell report.Cell
	}{{"query.top.zero", a}, {"batch.empty", b}, {"tables.name.reserved", c}} {
		r.Rules = append(r.Rules, report.RuleRow{ID: row.id, Level: "MUST", Area: strings.SplitN(row.id, ".", 2)[0], Cells: []report.Cell{row.cell}})
	}
	dir := t.TempDir()
	if err := report.WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

func choice(o verdict.Outcome, chosen string) report.Cell {
	return report.Cell{Outcome: o, Specs: []report.SpecResult{{Text: "s", Outcome: o, Choices: []string{"answer: " + chosen}}}}
}

// TestReportDiff compares two reports that differ in one rule each way: one got worse, one
// got better, one changed its recorded choice. The worse one makes the exit status 1.
func TestReportDiff(t *testing.T) {
	pass, fail := report.Cell{Outcome: verdict.Pass}, report.Cell{Outcome: verdict.Fail}
	old := diffReport(t, pass, fail, choice(verdict.Info, "400 InvalidInput"))
	cur := diffReport(t, fail, pass, choice(verdict.Info, "it succeeded"))

	out, stderr, code := conform(t, "report", "--diff", old, cur)
	if code != 1 || !strings.Contains(stderr, "1 rule(s) got worse: azurite (1)") {
		t.Fatalf("exit %d, stderr %q; want 1 and the regression named", code, stderr)
	}
	for _, want := range []string{"**1 regression(s).**", "### Got worse (1)", "| `query.top.zero` | MUST | ✅ pass | ❌ FAIL |",
		"### Got better (1)", "| `batch.empty` | MUST | ❌ FAIL | ✅ pass |",
		"### Changed choice (1)", "| `tables.name.reserved` | MUST | ℹ️ refused with 400 InvalidInput | ℹ️ accepted |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, out)
		}
	}

	out, _, code = conform(t, "report", "--diff", old, filepath.Join(cur, report.FileJSON), "--format", "json")
	var d report.DiffResult
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 1 {
		t.Fatalf("exit %d, JSON %v: %s", code, err, out)
	}
	b := d.Backends[0]
	if d.Regressions != 1 || len(b.Worse) != 1 || b.Worse[0].Rule != "query.top.zero" || len(b.Better) != 1 || b.Better[0].Rule != "batch.empty" ||
		len(b.ChangedChoice) != 1 || b.ChangedChoice[0].NewSays != "accepted" || len(b.Incomparable) != 0 {
		t.Fatalf("diff %+v", d)
	}

	// Only improvements: exit 0.
	better := diffReport(t, pass, pass, choice(verdict.Info, "400 InvalidInput"))
	if out, _, code := conform(t, "report", "--diff", old, better); code != 0 || !strings.Contains(out, "No regression.") {
		t.Fatalf("improvement only: exit %d\n%s", code, out)
	}
	// Nothing judged on one side: listed, never a regression.
	errored := diffReport(t, report.Cell{Outcome: verdict.Error}, fail, choice(verdict.Info, "400 InvalidInput"))
	if out, _, code := conform(t, "report", "--diff", old, errored); code != 0 || !strings.Contains(out, "### Cannot be compared (1)") {
		t.Fatalf("errored: exit %d\n%s", code, out)
	}
	// Usage errors: exit 2.
	if _, stderr, code := conform(t, "report", "--diff", old); code != 2 || !strings.Contains(stderr, "two reports") {
		t.Fatalf("one report: exit %d %q", code, stderr)
	}
	if _, _, code := conform(t, "report", "--diff", old, filepath.Join(os.TempDir(), "no-such-report")); code != 2 {
		t.Fatalf("missing report: exit %d", code)
	}
	if _, _, code := conform(t, "report", "--diff", old, cur, "--format", "xml"); code != 2 {
		t.Fatalf("bad format: exit %d", code)
	}
}
