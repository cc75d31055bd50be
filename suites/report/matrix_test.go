package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/verdict"
)

// matrixRules are the synthetic catalogue of the matrix tests: id, level, area.
var matrixRules = [][3]string{
	{"tables.name.charset", "MUST", "tables"},
	{"tables.create.conflict", "MUST", "tables"},
	{"query.filter.eq", "MUST", "query"},
	{"query.top.max", "SHOULD", "query"},
	{"batch.max.operations", "MUST", "batch"},
}

// syntheticRun is one published run: a report.json of one backend whose rules end as
// outcomes says (a rule left out is not in its catalogue), and the document Publish derives.
func syntheticRun(source, name, kind, version string, outcomes map[string]verdict.Outcome) MatrixRun {
	r := Report{Schema: Schema, Conform: "v0.9.0", Generated: t0,
		Backends: []Backend{{Info: driver.Info{Name: name, Kind: kind, Version: version, Driver: "rest"}, Profile: "azure", Date: t0,
			Verdict: "conforms", VerdictKind: verdict.Conforms}}}
	for _, rule := range matrixRules {
		o, ok := outcomes[rule[0]]
		if !ok {
			continue
		}
		spec := SpecResult{Text: "spec of " + rule[0], Outcome: o, Decision: verdict.Decision{Selected: true}}
		switch o {
		case verdict.Fail, verdict.ExpectedFail:
			spec.Failure = "Create Table with an underscore\nit was accepted, but the rule wants it refused with 400 InvalidInput"
			r.Backends[0].Verdict, r.Backends[0].VerdictKind = "does not conform", verdict.DoesNotConform
		case verdict.Skipped:
			spec.SkipReason = "the backend lacks the feature"
		}
		r.Rules = append(r.Rules, RuleRow{ID: rule[0], Level: rule[1], Area: rule[2], Text: "The rule " + rule[0] + ".",
			Cells: []Cell{{Outcome: o, Against: o == verdict.Fail, Specs: []SpecResult{spec}}}})
	}
	return MatrixRun{Source: source, Published: Publish(r, 0, "", ""), Report: r}
}

func syntheticRuns() []MatrixRun {
	return []MatrixRun{
		syntheticRun("runs/reference", "reference", "reference", "dev", map[string]verdict.Outcome{
			"tables.name.charset": verdict.Pass, "tables.create.conflict": verdict.Pass, "query.filter.eq": verdict.Pass, "query.top.max": verdict.Pass, "batch.max.operations": verdict.Pass}),
		// Given out of order: the columns sort the versions of one implementation.
		syntheticRun("runs/azurite-3.35.0", "azurite", "azurite", "3.35.0", map[string]verdict.Outcome{
			"tables.name.charset": verdict.Pass, "tables.create.conflict": verdict.Pass, "query.filter.eq": verdict.Fail, "query.top.max": verdict.Pass, "batch.max.operations": verdict.ExpectedFail}),
		syntheticRun("runs/azurite-3.9.0", "azurite@3.9.0", "azurite", "3.9.0", map[string]verdict.Outcome{
			"tables.name.charset": verdict.Fail, "tables.create.conflict": verdict.Pass, "query.filter.eq": verdict.Pass, "query.top.max": verdict.Skipped}),
		syntheticRun("runs/azurite-3.29.0", "azurite@3.29.0", "azurite", "3.29.0", map[string]verdict.Outcome{
			"tables.name.charset": verdict.Fail, "tables.create.conflict": verdict.Pass, "query.filter.eq": verdict.Pass, "query.top.max": verdict.Pass, "batch.max.operations": verdict.Pass}),
		syntheticRun("runs/azurite-3.31.0", "azurite@3.31.0", "azurite", "3.31.0", map[string]verdict.Outcome{
			"tables.name.charset": verdict.Pass, "tables.create.conflict": verdict.Pass, "query.filter.eq": verdict.Skipped, "query.top.max": verdict.Pass, "batch.max.operations": verdict.Pass}),
	}
}

func TestMatrixSaysWhereAVersionChangedARule(t *testing.T) {
	m, err := BuildMatrix(syntheticRuns(), t0)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range m.Columns {
		labels = append(labels, c.Label)
	}
	if got := strings.Join(labels, " "); got != "reference azurite@3.9.0 azurite@3.29.0 azurite@3.31.0 azurite@3.35.0" {
		t.Errorf("columns %s", got)
	}
	changes := map[string]string{}
	differ := map[string]bool{}
	for _, a := range m.Areas {
		for _, r := range a.Rules {
			changes[r.ID] = r.ChangeWords()
			differ[r.ID] = r.Differ
		}
	}
	for id, want := range map[string]string{
		"tables.name.charset":    "azurite: passes since 3.31.0",
		"tables.create.conflict": "",
		// Skipped in 3.31.0: the change is where it was next judged.
		"query.filter.eq": "azurite: fails since 3.35.0",
		"query.top.max":   "",
		// Absent from 3.9.0's catalogue; an expected failure still fails.
		"batch.max.operations": "azurite: fails since 3.35.0",
	} {
		if changes[id] != want {
			t.Errorf("%s: changes %q, want %q", id, changes[id], want)
		}
	}
	if !differ["tables.name.charset"] || differ["tables.create.conflict"] || differ["query.top.max"] {
		t.Errorf("differ %v", differ)
	}
	if got := m.Areas[0].Name + "," + m.Areas[1].Name + "," + m.Areas[2].Name; got != "tables,query,batch" {
		t.Errorf("areas %s, want the catalogue's order", got)
	}
}

func TestMatrixRefusesAmbiguousRuns(t *testing.T) {
	runs := syntheticRuns()
	if _, err := BuildMatrix(append(runs, runs[1]), t0); err == nil || !strings.Contains(err.Error(), "azurite@3.35.0") {
		t.Errorf("the same run twice: %v", err)
	}
	two := runs[1]
	two.Report.Backends = append(two.Report.Backends, Backend{Info: driver.Info{Name: "other", Version: "1"}})
	two.Published.Implementation.Name = "renamed"
	two.Published.Implementation.Version = "9.9.9"
	if _, err := BuildMatrix([]MatrixRun{two}, t0); !errors.Is(err, ErrMatrixBackend) {
		t.Errorf("a published name no backend has: %v", err)
	}
	if _, err := BuildMatrix(nil, t0); err == nil {
		t.Error("no runs built a matrix")
	}
}

func TestCompareVersionsByNumber(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"3.9.0", "3.10.0", -1}, {"3.35.0", "3.35.0", 0}, {"v1.2", "1.10", -1}, {"", "1.0", -1}, {"3.35.0", "3.4.0", 1}} {
		if got := compareVersions(c.a, c.b); (got < 0) != (c.want < 0) || (got > 0) != (c.want > 0) {
			t.Errorf("compareVersions(%q, %q) = %d, want sign %d", c.a, c.b, got, c.want)
		}
	}
}

func TestMatrixGolden(t *testing.T) {
	m, err := BuildMatrix(syntheticRuns(), t0)
	if err != nil {
		t.Fatal(err)
	}
	var html, md, js bytes.Buffer
	if err := WriteMatrixHTML(&html, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrixMarkdown(&md, m); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrixJSON(&js, m); err != nil {
		t.Fatal(err)
	}
	golden(t, "matrix.golden.html", html.Bytes())
	golden(t, "matrix.golden.md", md.Bytes())
	golden(t, "matrix.golden.json", js.Bytes())
	if strings.Contains(strings.ToLower(html.String()), "<script") || strings.Contains(html.String(), "http://") || strings.Contains(html.String(), "https://") {
		t.Error("the page is not self-contained and script-free")
	}
	var back Matrix
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Schema != MatrixSchema || len(back.Columns) != 5 {
		t.Errorf("matrix.json does not read back: %v", err)
	}
}
