package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/suites/verdict"
)

// MatrixSchema identifies the format of matrix.json.
const MatrixSchema = "conform.matrix/v1"

// Matrix compares the published runs of several implementations, and of several versions
// of one, rule by rule: conform matrix builds it from each run's published documents
// (conformance-report.yaml and report.json) and writes it as HTML, Markdown and JSON.
type Matrix struct {
	Schema    string    `json:"schema"`
	Generated time.Time `json:"generated"`
	// Columns are the runs: implementations in the order first given, the versions of
	// each from the oldest to the newest.
	Columns []MatrixColumn `json:"columns"`
	// Areas hold the rules of every run, in catalogue order, grouped by area.
	Areas []MatrixArea `json:"areas"`
}

// MatrixColumn is one published run: implementation@version.
type MatrixColumn struct {
	// Label is "implementation@version" (the implementation alone when its version is not
	// a release number).
	Label          string `json:"label"`
	Implementation string `json:"implementation"`
	Version        string `json:"version"`
	Kind           string `json:"kind"`
	Profile        string `json:"profile"`
	Filter         string `json:"labelFilter,omitempty"`
	ConformVersion string `json:"conformVersion"`
	Date           string `json:"date"`
	// Verdict is the published verdict's sentence.
	Verdict     string `json:"verdict"`
	VerdictKind string `json:"verdictKind"`
	// Must counts the MUST rules as the published document does.
	Must RuleCounts `json:"must"`
	// Source is the directory the run was read from, as given.
	Source string `json:"source"`
}

// MatrixArea is one area's rules.
type MatrixArea struct {
	Name  string      `json:"name"`
	Rules []MatrixRow `json:"rules"`
}

// MatrixRow is one rule across the columns.
type MatrixRow struct {
	ID    string `json:"id"`
	Level string `json:"level"`
	Text  string `json:"text"`
	// Cells are in the order of Matrix.Columns.
	Cells []MatrixCell `json:"cells"`
	// Differ is true when the columns' cells do not all count alike (passed, failed,
	// skipped, as the published documents count them).
	Differ bool `json:"differ"`
	// Changes are the versions of one implementation where the rule's outcome changed.
	Changes []MatrixChange `json:"changes,omitempty"`
}

// MatrixCell is a rule's result in one run, in the report's words.
type MatrixCell struct {
	Outcome verdict.Outcome `json:"outcome"`
	// Counts is how the published document counts it: "passed", "failed" or "skipped";
	// "absent" when the run's catalogue has no such rule.
	Counts string `json:"counts"`
	Words  string `json:"words"`
}

// MatrixChange is a version of an implementation where a rule's outcome changed from the
// version before it (outcomes that judge nothing, such as skipped, are passed over).
type MatrixChange struct {
	Implementation string `json:"implementation"`
	Version        string `json:"version"`
	// Now is "passes" or "fails".
	Now string `json:"now"`
	// Words say it: "fails since 3.29.0".
	Words string `json:"words"`
}

// MatrixRun is one run read from its published documents.
type MatrixRun struct {
	Source    string
	Published Published
	Report    Report
}

// ErrMatrixBackend is returned when a run's report.json has no backend that its
// conformance-report.yaml describes.
var ErrMatrixBackend = errors.New("no backend of report.json matches conformance-report.yaml")

// matrixBackend returns the index of the backend of run's report that its published
// document describes: the only one, else the one of its name, else the one of its version
// and kind.
func matrixBackend(run MatrixRun) (int, error) {
	bs := run.Report.Backends
	if len(bs) == 1 {
		return 0, nil
	}
	for i, b := range bs {
		if b.Name == run.Published.Implementation.Name {
			return i, nil
		}
	}
	found := -1
	for i, b := range bs {
		if b.Version == run.Published.Implementation.Version && b.Kind == run.Published.Endpoint.Kind {
			if found >= 0 {
				return 0, fmt.Errorf("%s: %w (two backends of version %s)", run.Source, ErrMatrixBackend, b.Version)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("%s: %w (it names %s %s)", run.Source, ErrMatrixBackend, run.Published.Implementation.Name, run.Published.Implementation.Version)
	}
	return found, nil
}

// ImplementationOf is the implementation a published name stands for: the name without a
// version asked for in it ("azurite@3.29.0" is "azurite").
func ImplementationOf(name string) string {
	if i := strings.Index(name, "@"); i > 0 {
		return name[:i]
	}
	return name
}

// countsWord says how the published documents count an outcome (publishedBucket).
func countsWord(o verdict.Outcome) string {
	var c RuleCounts
	publishedBucket(o)(&c)
	switch {
	case c.Failed > 0:
		return "failed"
	case c.Skipped > 0:
		return "skipped"
	}
	return "passed"
}

// BuildMatrix compares runs. Each run's column is the backend its published document
// describes; the rules are those of every run, in the order the runs list them.
func BuildMatrix(runs []MatrixRun, generated time.Time) (Matrix, error) {
	if len(runs) == 0 {
		return Matrix{}, errors.New("no runs to compare")
	}
	type column struct {
		MatrixColumn
		run     MatrixRun
		backend int
		first   int // the position of the implementation's first run
	}
	var cols []column
	firstOf := map[string]int{}
	for i, run := range runs {
		bi, err := matrixBackend(run)
		if err != nil {
			return Matrix{}, err
		}
		p := run.Published
		impl := ImplementationOf(p.Implementation.Name)
		if _, ok := firstOf[impl]; !ok {
			firstOf[impl] = i
		}
		label := impl
		if versionLike(p.Implementation.Version) {
			label += "@" + p.Implementation.Version
		}
		cols = append(cols, column{MatrixColumn: MatrixColumn{
			Label: label, Implementation: impl, Version: p.Implementation.Version, Kind: p.Endpoint.Kind,
			Profile: p.Profile, Filter: p.Filter, ConformVersion: p.ConformVersion, Date: p.Date.UTC().Format("2006-01-02"),
			Verdict: p.Verdict.Sentence, VerdictKind: p.Verdict.Kind, Must: p.Levels["MUST"], Source: run.Source,
		}, run: run, backend: bi, first: firstOf[impl]})
	}
	sort.SliceStable(cols, func(a, b int) bool {
		if cols[a].first != cols[b].first {
			return cols[a].first < cols[b].first
		}
		return compareVersions(cols[a].Version, cols[b].Version) < 0
	})
	for i := 1; i < len(cols); i++ {
		if cols[i].Label == cols[i-1].Label && cols[i].Profile == cols[i-1].Profile {
			return Matrix{}, fmt.Errorf("%s and %s both hold %s (profile %s): give each implementation@version once",
				cols[i-1].Source, cols[i].Source, cols[i].Label, cols[i].Profile)
		}
	}
	m := Matrix{Schema: MatrixSchema, Generated: generated.UTC()}
	for _, c := range cols {
		m.Columns = append(m.Columns, c.MatrixColumn)
	}
	// The rules: every run's, in the order of the first run that has each.
	type ruleAt struct {
		row  RuleRow
		area int
	}
	var areaNames []string
	areaIndex := map[string]int{}
	rules := map[string]ruleAt{}
	var order []string
	for _, c := range cols {
		for _, row := range c.run.Report.Rules {
			if _, ok := rules[row.ID]; ok {
				continue
			}
			ai, ok := areaIndex[row.Area]
			if !ok {
				ai = len(areaNames)
				areaIndex[row.Area] = ai
				areaNames = append(areaNames, row.Area)
			}
			rules[row.ID] = ruleAt{row: row, area: ai}
			order = append(order, row.ID)
		}
	}
	cellOf := make([]map[string]RuleRow, len(cols))
	for i, c := range cols {
		cellOf[i] = map[string]RuleRow{}
		for _, row := range c.run.Report.Rules {
			cellOf[i][row.ID] = row
		}
	}
	m.Areas = make([]MatrixArea, len(areaNames))
	for i, a := range areaNames {
		m.Areas[i].Name = a
	}
	for _, id := range order {
		r := rules[id]
		mr := MatrixRow{ID: id, Level: r.row.Level, Text: r.row.Text}
		seen := map[string]bool{}
		for ci, c := range cols {
			row, ok := cellOf[ci][id]
			if !ok || c.backend >= len(row.Cells) {
				mr.Cells = append(mr.Cells, MatrixCell{Counts: "absent", Words: "not in this run's catalogue"})
				continue
			}
			cell := row.Cells[c.backend]
			mc := MatrixCell{Outcome: shownOutcome(cell), Counts: countsWord(cell.Outcome), Words: CellSummary(row, cell)}
			mr.Cells = append(mr.Cells, mc)
			if mc.Counts != "skipped" {
				seen[mc.Counts] = true
			}
		}
		mr.Differ = len(seen) > 1
		mr.Changes = versionChanges(m.Columns, mr.Cells)
		m.Areas[r.area].Rules = append(m.Areas[r.area].Rules, mr)
	}
	return m, nil
}

// versionChanges walks the versions of each implementation, oldest first, and returns
// where a rule went from passing to failing or back; versions where it judged nothing
// (skipped, absent) are passed over.
func versionChanges(cols []MatrixColumn, cells []MatrixCell) []MatrixChange {
	var out []MatrixChange
	last := map[string]string{}
	for i, c := range cols {
		var now string
		switch cells[i].Counts {
		case "passed":
			now = "passes"
		case "failed":
			now = "fails"
		default:
			continue
		}
		key := c.Implementation + "\x00" + c.Profile
		before, ok := last[key]
		last[key] = now
		if ok && before != now {
			out = append(out, MatrixChange{Implementation: c.Implementation, Version: c.Version, Now: now,
				Words: now + " since " + c.Version})
		}
	}
	return out
}

// versionLike reports whether a version reads as a release number ("3.35.0", "v1.2"), so
// that it belongs in a column's label; others ("conform devel") are shown beside it.
func versionLike(v string) bool {
	v = strings.TrimPrefix(v, "v")
	return v != "" && v[0] >= '0' && v[0] <= '9' && !strings.ContainsAny(v, " /")
}

// compareVersions orders versions by their dot-separated numbers ("3.9.0" before
// "3.10.0"); parts that are not numbers compare as text, and an empty version comes first.
func compareVersions(a, b string) int {
	as, bs := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		an, aerr := strconv.Atoi(as[i])
		bn, berr := strconv.Atoi(bs[i])
		switch {
		case aerr == nil && berr == nil && an != bn:
			if an < bn {
				return -1
			}
			return 1
		case (aerr != nil || berr != nil) && as[i] != bs[i]:
			return strings.Compare(as[i], bs[i])
		}
	}
	return len(as) - len(bs)
}

// ChangeWords joins a row's changes for one line: "azurite: fails since 3.29.0, then
// passes since 3.31.0".
func (r MatrixRow) ChangeWords() string {
	var parts []string
	var impl string
	for _, c := range r.Changes {
		if c.Implementation != impl {
			parts = append(parts, c.Implementation+": "+c.Words)
			impl = c.Implementation
			continue
		}
		parts[len(parts)-1] += ", then " + c.Words
	}
	return strings.Join(parts, "; ")
}

// DifferingRules counts the rules whose columns do not all count alike.
func (m Matrix) DifferingRules() (differ, total int) {
	for _, a := range m.Areas {
		for _, r := range a.Rules {
			total++
			if r.Differ {
				differ++
			}
		}
	}
	return differ, total
}

// changeCount counts the rules with a change between versions.
func (m Matrix) changeCount() int {
	n := 0
	for _, a := range m.Areas {
		for _, r := range a.Rules {
			if len(r.Changes) > 0 {
				n++
			}
		}
	}
	return n
}

// WriteMatrixJSON writes the matrix as indented JSON.
func WriteMatrixJSON(w io.Writer, m Matrix) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// WriteMatrixMarkdown writes the matrix as Markdown: the columns with their verdicts, the
// rules whose outcome changed between versions, then every rule by area.
func WriteMatrixMarkdown(w io.Writer, m Matrix) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	differ, total := m.DifferingRules()
	p("# Azure Table API conformance matrix\n\n")
	p("%d runs, %d rules; %d rules differ between runs; %d changed between versions of one implementation.\n\n", len(m.Columns), total, differ, m.changeCount())
	p("| Run | Version | Kind | Profile | Verdict | MUST passed | MUST failed | MUST skipped | conform | Date |\n|---|---|---|---|---|---:|---:|---:|---|---|\n")
	for _, c := range m.Columns {
		p("| %s | %s | %s | %s | %s | %d | %d | %d | %s | %s |\n", mdEscape(c.Label), mdEscape(c.Version), mdEscape(c.Kind), mdEscape(c.Profile), mdEscape(c.Verdict),
			c.Must.Passed, c.Must.Failed, c.Must.Skipped, mdEscape(c.ConformVersion), c.Date)
	}
	header := func() {
		p("| Rule | Level | Changed |")
		for _, c := range m.Columns {
			p(" %s |", mdEscape(c.Label))
		}
		p("\n|---|---|---|")
		for range m.Columns {
			p("---|")
		}
		p("\n")
	}
	row := func(r MatrixRow) {
		p("| `%s` | %s | %s |", r.ID, r.Level, mdEscape(r.ChangeWords()))
		for _, c := range r.Cells {
			p(" %s |", mdEscape(matrixCellWords(c)))
		}
		p("\n")
	}
	if m.changeCount() > 0 {
		p("\n## Changed between versions\n\n")
		header()
		for _, a := range m.Areas {
			for _, r := range a.Rules {
				if len(r.Changes) > 0 {
					row(r)
				}
			}
		}
	}
	for _, a := range m.Areas {
		p("\n## %s\n\n", mdEscape(a.Name))
		header()
		for _, r := range a.Rules {
			row(r)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// matrixCellWords is a cell in words with its outcome's symbol.
func matrixCellWords(c MatrixCell) string {
	if c.Counts == "absent" {
		return "· " + c.Words
	}
	return StyleOf(c.Outcome).Symbol + " " + c.Words
}

// WriteMatrixHTML writes the matrix as one self-contained page without JavaScript: the
// columns with their verdicts, the rules that changed between versions, then every rule
// by area (rules where the runs differ marked).
func WriteMatrixHTML(w io.Writer, m Matrix) error {
	differ, total := m.DifferingRules()
	return matrixPage.Execute(w, struct {
		Matrix
		Differ, Total, Changed int
	}{m, differ, total, m.changeCount()})
}

// matrixCellClass is the CSS class of a cell's outcome group.
func matrixCellClass(o verdict.Outcome) string {
	switch StyleOf(o).Group {
	case GroupPass:
		return "pass"
	case GroupChoice:
		return "choice"
	case GroupFail:
		return "fail"
	case GroupKnown:
		return "known"
	case GroupDocument:
		return "document"
	case GroupBlocked:
		return "blocked"
	case GroupNoAnswer:
		return "noanswer"
	case GroupInterrupted:
		return "interrupted"
	case GroupLeftOut:
		return "leftout"
	}
	return "skipped"
}

var matrixPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"group": matrixCellClass,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Azure Table API conformance matrix</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #d0d7de;padding:.3em .5em;vertical-align:top;text-align:left}
th{background:#f6f8fa;position:sticky;top:0}td.num{text-align:right}code{font-size:90%}
td.cell{font-size:12px;width:11em;min-width:7em;overflow-wrap:anywhere}td.rule{min-width:14em;max-width:22em}td.rule small{color:#656d76}
td.changed{min-width:9em}
td.pass{background:#dafbe1}td.choice{background:#ddf4ff}td.document{background:#fbefff}td.known{background:#fff8c5}
td.fail{background:#ffebe9;font-weight:600}td.noanswer,td.blocked,td.interrupted{background:#fff1e5}td.skipped,td.leftout,td.absent{color:#656d76}
tr.differ td:first-child{border-left:4px solid #cf222e}td.changed{font-weight:600}
details{margin:.3em 0}summary{cursor:pointer;font-weight:600}
</style></head><body>
<h1>Azure Table API conformance matrix</h1>
<p>{{len .Columns}} runs, {{.Total}} rules; {{.Differ}} rules differ between runs (marked red on the left); {{.Changed}} changed between versions of one implementation. Generated {{.Generated.Format "2006-01-02 15:04 UTC"}}. A cell says what the implementation did, as its report says it; the counts are the published documents'.</p>
<table><tr><th>Run</th><th>Version</th><th>Kind</th><th>Profile</th><th>Verdict</th><th>MUST passed</th><th>MUST failed</th><th>MUST skipped</th><th>conform</th><th>Date</th></tr>
{{range .Columns}}<tr><td><b>{{.Label}}</b></td><td>{{.Version}}</td><td>{{.Kind}}</td><td>{{.Profile}}</td><td>{{.Verdict}}</td><td class="num">{{.Must.Passed}}</td><td class="num">{{.Must.Failed}}</td><td class="num">{{.Must.Skipped}}</td><td>{{.ConformVersion}}</td><td>{{.Date}}</td></tr>
{{end}}</table>
{{define "head"}}<tr><th>Rule</th><th>Level</th><th>Changed</th>{{range .}}<th>{{.Label}}</th>{{end}}</tr>{{end}}
{{define "row"}}<tr{{if .Differ}} class="differ"{{end}}><td class="rule"><code>{{.ID}}</code><br><small>{{.Text}}</small></td><td>{{.Level}}</td><td class="changed">{{.ChangeWords}}</td>{{range .Cells}}<td class="cell {{if eq .Counts "absent"}}absent{{else}}{{group .Outcome}}{{end}}">{{.Words}}</td>{{end}}</tr>
{{end}}
{{if .Changed}}<h2 id="changed">Changed between versions</h2>
<table>{{template "head" .Columns}}
{{range .Areas}}{{range .Rules}}{{if .Changes}}{{template "row" .}}{{end}}{{end}}{{end}}</table>{{end}}
<h2 id="rules">Every rule, by area</h2>
{{$cols := .Columns}}{{range .Areas}}<details open><summary id="area-{{.Name}}">{{.Name}} ({{len .Rules}} rules)</summary>
<table>{{template "head" $cols}}
{{range .Rules}}{{template "row" .}}{{end}}</table></details>
{{end}}</body></html>
`))
