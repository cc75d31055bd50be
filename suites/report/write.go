package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files are the names of the report's files in its directory.
const (
	FileJSON     = "report.json"
	FileMarkdown = "report.md"
	FileHTML     = "report.html"
	FileJUnit    = "junit.xml"
)

// WriteDir writes report.json, report.md, report.html and junit.xml into dir.
func WriteDir(dir string, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	for name, write := range map[string]func(io.Writer, Report) error{
		FileJSON: WriteJSON, FileMarkdown: WriteMarkdown, FileHTML: WriteHTML, FileJUnit: WriteJUnit,
	} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		err = write(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// WriteJSON writes the canonical report.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report written by WriteJSON.
func ReadJSON(path string) (Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Report{}, fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return Report{}, fmt.Errorf("parse report %s: %w", path, err)
	}
	if r.Schema != Schema {
		return Report{}, fmt.Errorf("report %s: schema %q, want %q", path, r.Schema, Schema)
	}
	return r, nil
}

// Merge puts the backends of several reports side by side. A backend name that appears in
// several reports keeps its last column. Rules are the union, in catalogue order.
func Merge(reports ...Report) Report {
	if len(reports) == 0 {
		return Report{Schema: Schema, Legend: Legend}
	}
	out := Report{Schema: Schema, Conform: reports[len(reports)-1].Conform, Generated: reports[len(reports)-1].Generated,
		Command: reports[len(reports)-1].Command, Legend: Legend}
	index := map[string]int{}
	type col struct {
		b     Backend
		cells map[string]Cell
	}
	var cols []col
	rows := map[string]RuleRow{}
	var order []string
	for _, r := range reports {
		for bi, b := range r.Backends {
			c := col{b: b, cells: map[string]Cell{}}
			for _, row := range r.Rules {
				if bi < len(row.Cells) {
					c.cells[row.ID] = row.Cells[bi]
				}
			}
			if i, ok := index[b.Name]; ok {
				cols[i] = c
			} else {
				index[b.Name] = len(cols)
				cols = append(cols, c)
			}
		}
		for _, row := range r.Rules {
			if _, ok := rows[row.ID]; !ok {
				order = append(order, row.ID)
			}
			row.Cells = nil
			rows[row.ID] = row
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := rows[order[i]], rows[order[j]]
		if a.Area != b.Area {
			return a.Area < b.Area
		}
		return a.ID < b.ID
	})
	for _, c := range cols {
		out.Backends = append(out.Backends, c.b)
	}
	for _, id := range order {
		row := rows[id]
		for _, c := range cols {
			cell, ok := c.cells[id]
			if !ok {
				cell = Cell{Outcome: NotRun}
			}
			row.Cells = append(row.Cells, cell)
		}
		out.Rules = append(out.Rules, row)
	}
	return out
}

var symbols = map[Outcome]string{
	Pass: "✅ pass", Fail: "❌ fail", Error: "⚠️ error", Skipped: "➖ skipped", ExpectedFail: "❌ known divergence (baseline)",
	UnexpectedPass: "❗ unexpected pass", Info: "ℹ️ info", DocumentedDiff: "📘 documented difference", NotRun: "· not run",
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}

// WriteMarkdown writes the report as Markdown: backends, the rule × backend matrix, then
// the evidence of every failure, documented difference and MAY choice.
func WriteMarkdown(w io.Writer, r Report) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Azure Table API conformance report\n\n")
	p("Generated %s by conform %s.\n\n", r.Generated.Format("2006-01-02 15:04 MST"), r.Conform)
	if r.Command != "" {
		p("Reproduce with:\n\n```\n%s\n```\n\n", r.Command)
	}
	p("## Backends\n\n| backend | kind | version | endpoint | driver | profile | verdict | passed | failed | errors | expected failures | unexpected passes | documented differences | skipped (capability) | skipped (filter) |\n")
	p("|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, b := range r.Backends {
		v := b.Verdict
		if len(b.FailingFeatures) > 0 {
			v += " (failing: " + strings.Join(b.FailingFeatures, ", ") + ")"
		}
		if b.StartError != "" {
			v = "not run: " + b.StartError
		}
		c := b.Counts
		p("| %s | %s | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", mdEscape(b.Name), b.Kind, orDash(b.Version),
			orDash(b.Endpoint), b.Driver, b.Profile, mdEscape(v), c.Passed, c.Failed, c.Errors, c.ExpectedFailures, c.UnexpectedPasses,
			c.DocumentedDiffs, c.SkippedCapability, c.SkippedByFilter)
	}
	p("\n## Rules × backends\n\n| rule | level | area | feature |")
	for _, b := range r.Backends {
		p(" %s |", mdEscape(b.Name))
	}
	p("\n|---|---|---|---|")
	for range r.Backends {
		p("---|")
	}
	p("\n")
	for _, row := range r.Rules {
		p("| `%s` | %s | %s | %s |", row.ID, row.Level, row.Area, row.Feature)
		for _, c := range row.Cells {
			p(" %s |", symbols[c.Outcome])
		}
		p("\n")
	}
	p("\n## Legend\n\n")
	for _, l := range r.Legend {
		p("- %s: %s\n", symbols[l.Outcome], l.Meaning)
	}
	section := func(title string, want ...Outcome) {
		printed := false
		for _, row := range r.Rules {
			for bi, c := range row.Cells {
				if !oneOf(c.Outcome, want) {
					continue
				}
				if !printed {
					p("\n## %s\n", title)
					printed = true
				}
				p("\n### %s on %s: %s\n\n%s (%s) [source](%s)\n\n", row.ID, r.Backends[bi].Name, symbols[c.Outcome], row.Text, row.Level, row.Source)
				for _, s := range c.Specs {
					if !oneOf(s.Outcome, want) {
						continue
					}
					p("- **%s**", mdEscape(s.Text))
					if s.Difference != "" {
						p(" — documented difference: %s", s.Difference)
					}
					if s.Evidence != "" {
						p(" — baseline evidence: %s", mdEscape(s.Evidence))
					}
					for _, ch := range s.Choices {
						p(" — chose %s", mdEscape(ch))
					}
					p("\n")
					if s.Failure != "" {
						p("\n  ```\n%s\n  ```\n", indent(s.Failure, "  "))
					}
					if s.History != "" {
						p("\n  Calls (what was sent and what came back):\n\n  ```\n%s  ```\n", indent(s.History, "  "))
					}
				}
			}
		}
	}
	section("Divergences", Fail, UnexpectedPass)
	section("Errors (no usable answer)", Error)
	section("Documented differences", DocumentedDiff)
	section("Known divergences (expected by the baseline)", ExpectedFail)
	section("Information: behaviours the documentation allows", Info)
	writeCorpusMarkdown(w, r.Corpus)
	return nil
}

func oneOf(o Outcome, set []Outcome) bool {
	for _, s := range set {
		if o == s {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return mdEscape(s)
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Failure    *junitMessage   `xml:"failure,omitempty"`
	Error      *junitMessage   `xml:"error,omitempty"`
	Skipped    *junitMessage   `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes one JUnit test suite per backend, a test case per spec, with the rule
// id and level as properties. Expected failures and documented differences pass (they are
// reported in system-out); divergences fail; transport errors are errors.
func WriteJUnit(w io.Writer, r Report) error {
	var out junitSuites
	for bi, b := range r.Backends {
		s := junitSuite{Name: "conform/" + b.Name, Properties: []junitProperty{{"kind", b.Kind}, {"version", b.Version},
			{"profile", b.Profile}, {"verdict", b.Verdict}}}
		for _, row := range r.Rules {
			for _, sp := range row.Cells[bi].Specs {
				c := junitCase{Name: sp.Text, Classname: row.Area + "." + row.ID, Time: fmt.Sprintf("%.3f", sp.RunTime),
					Properties: []junitProperty{{"rule", row.ID}, {"level", row.Level}, {"feature", row.Feature}, {"outcome", string(sp.Outcome)}}}
				s.Tests++
				switch sp.Outcome {
				case Fail, UnexpectedPass:
					s.Failures++
					c.Failure = &junitMessage{Message: row.Text, Type: string(sp.Outcome), Body: sp.Failure + "\n" + sp.History}
				case Error:
					s.Errors++
					c.Error = &junitMessage{Message: "no usable answer", Type: "error", Body: sp.Failure + "\n" + sp.History}
				case Skipped:
					s.Skipped++
					c.Skipped = &junitMessage{Message: sp.SkipReason}
				case ExpectedFail:
					c.SystemOut = "expected failure (baseline): " + sp.Evidence + "\n" + sp.Failure
				case DocumentedDiff:
					c.SystemOut = "documented difference: " + sp.Difference + "\n" + sp.Failure
				case Info:
					c.SystemOut = "chose: " + strings.Join(sp.Choices, "; ")
				}
				s.Cases = append(s.Cases, c)
			}
		}
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
