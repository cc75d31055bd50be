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

	"github.com/tableconform/conform/suites/verdict"
)

// Files are the names of the report's files in its directory.
const (
	FileJSON     = "report.json"
	FileMarkdown = "report.md"
	FileHTML     = "report.html"
	FileJUnit    = "junit.xml"
)

// WriteDir writes report.json, report.md, report.html and junit.xml into dir, every
// secret in them masked (MaskSecrets).
func WriteDir(dir string, r Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	r = MaskSecrets(r)
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
				cell = Cell{Outcome: verdict.NotRun}
			}
			row.Cells = append(row.Cells, cell)
		}
		out.Rules = append(out.Rules, row)
	}
	return out
}

// mdEscape makes text safe inside a Markdown table cell or paragraph: pipes escaped, lines
// joined, and angle brackets as entities, so that a path like "<table>(PartitionKey='p')"
// in a backend's evidence is not read as HTML.
var mdEscape = strings.NewReplacer("|", "\\|", "\n", " ", "<", "&lt;", ">", "&gt;").Replace

// mdCell is a cell of the Markdown matrices: the outcome's symbol and what the cell says.
func mdCell(row RuleRow, c Cell) string {
	return StyleOf(shownOutcome(c)).Symbol + " " + mdEscape(CellSummary(row, c))
}

// WriteMarkdown writes the report as Markdown in the order of the HTML page: the verdicts,
// the rules per area as numbers, the rules where backends differ (grouped by area), the
// legend, the evidence of every cell that did not plainly pass, and last the whole matrix
// (folded).
func WriteMarkdown(w io.Writer, r Report) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	order := outcomeOrder(r)
	p("# Azure Table API conformance report\n\n")
	p("Generated %s by conform %s.\n\n", r.Generated.Format("2006-01-02 15:04 MST"), r.Conform)
	if r.Command != "" {
		p("Reproduce with:\n\n```\n%s\n```\n\n", r.Command)
	}
	p("## Verdicts\n\n| backend | what | verdict | rules by level | specs by level |\n|---|---|---|---|---|\n")
	for bi, b := range r.Backends {
		v := b.Verdict
		if b.StartError != "" {
			v = "not run: " + b.StartError
		}
		what := strings.TrimSpace(b.Kind + " " + b.Version)
		for _, x := range []string{b.Driver, b.Profile, b.Endpoint} {
			if x != "" {
				what += " · " + x
			}
		}
		p("| **%s** | %s | %s **%s** | %s | %s |\n", mdEscape(b.Name), mdEscape(what), VerdictStyleFor(b).Symbol, mdEscape(v),
			byLevelInWords(order, backendCountsByLevel(r, bi, false)), byLevelInWords(order, backendCountsByLevel(r, bi, true)))
	}
	tallies := tallyAreas(r)
	for bi, b := range r.Backends {
		if b.BaselineNote != "" {
			p("\n**%s**: %s\n", mdEscape(b.Name), mdEscape(b.BaselineNote))
		}
		if why := PolicySkipSentence(PolicySkippedRules(r, bi)); why != "" {
			p("\n**%s**: %s\n", mdEscape(b.Name), mdEscape(why))
		}
		for i, line := range b.ConfirmationWords {
			if i == 0 {
				p("\n**%s**: %s\n", mdEscape(b.Name), mdEscape(line))
				continue
			}
			p("- %s\n", mdEscape(line))
		}
	}
	p("\n## Rules per area\n\nRules of each area by outcome, MUST, SHOULD and MAY rules together; \"differ\" counts the rules whose backends' outcomes or recorded choices differ.\n\n| area | rules (every level) | differ |")
	for _, b := range r.Backends {
		p(" %s |", mdEscape(b.Name))
	}
	p("\n|---|---:|---:|")
	for range r.Backends {
		p("---|")
	}
	p("\n")
	for _, t := range tallies {
		p("| %s | %d | %d |", t.Area, t.Rules, t.Differ)
		for _, counts := range t.Counts {
			p(" %s |", countsInWords(order, counts))
		}
		p("\n")
	}
	matrix := func(rows []RuleRow) {
		p("| rule | level |")
		for _, b := range r.Backends {
			p(" %s |", mdEscape(b.Name))
		}
		p("\n|---|---|")
		for range r.Backends {
			p("---|")
		}
		p("\n")
		for _, row := range rows {
			p("| `%s` | %s |", row.ID, row.Level)
			for _, c := range row.Cells {
				p(" %s |", mdCell(row, c))
			}
			p("\n")
		}
	}
	var differing int
	for _, row := range r.Rules {
		if Differs(row) {
			differing++
		}
	}
	if len(r.Backends) == 1 {
		p("\n## Rules that did not plainly pass (%d of %d rules, every level)\n", differing, len(r.Rules))
	} else {
		p("\n## Rules where the backends differ (%d of %d rules, every level)\n", differing, len(r.Rules))
	}
	if differing == 0 {
		p("\nNone.\n")
	}
	for _, t := range tallies {
		if t.Differ == 0 {
			continue
		}
		var rows []RuleRow
		for _, row := range r.Rules {
			if row.Area == t.Area && Differs(row) {
				rows = append(rows, row)
			}
		}
		p("\n### %s (%d of %d rules)\n\n", t.Area, t.Differ, t.Rules)
		matrix(rows)
	}
	p("\n## Legend\n\nA cell shows the worst outcome of the rule's specs on that backend.\n\n")
	for _, l := range legendOf(r) {
		st := StyleOf(l.Outcome)
		p("- %s **%s**: %s\n", st.Symbol, st.Word, l.Meaning)
	}
	p("\n## Evidence\n")
	section := func(title string, want ...verdict.Outcome) {
		printed := false
		for _, row := range r.Rules {
			for bi, c := range row.Cells {
				choiceOnPass := c.Outcome == verdict.Pass && oneOf(verdict.Info, want) && len(cellChoices(c)) > 0
				if !oneOf(c.Outcome, want) && !choiceOnPass {
					continue
				}
				if !printed {
					p("\n### %s\n", title)
					printed = true
				}
				p("\n#### %s on %s: %s\n\n%s (%s) [source](%s)\n\n", row.ID, mdEscape(r.Backends[bi].Name), mdCell(row, c), mdEscape(row.Text), row.Level, row.Source)
				for _, s := range c.Specs {
					if s.Outcome == verdict.Pass && len(s.Choices) == 0 {
						continue
					}
					p("- %s **%s**", StyleOf(s.Outcome).Symbol, mdEscape(s.Text))
					if s.Difference != "" {
						p(" — documented difference: %s", mdEscape(s.Difference))
					}
					if s.Evidence != "" {
						p(" — baseline evidence: %s", mdEscape(s.Evidence))
					}
					if s.PreviousEvidence != "" {
						p(" — changed from the baseline: %s", mdEscape(s.PreviousEvidence))
					}
					if s.BlockedBy != "" {
						p(" — blocked by %s", s.BlockedBy)
					}
					for _, ch := range s.Choices {
						p(" — chose **%s** (%s)", mdEscape(ChoiceWords(ch)), mdEscape(ch))
					}
					if s.SkipReason != "" {
						p(" — skipped: %s", mdEscape(s.SkipReason))
					}
					p("\n")
					if s.Failure != "" {
						f := fence(s.Failure)
						if len(s.Failure) > foldFailureOver || strings.Count(s.Failure, "\n") > 6 {
							p("\n  %s\n\n  <details><summary>the whole failure</summary>\n\n  %s\n%s  %s\n\n  </details>\n", mdEscape(SpecWords(s)), f, indent(s.Failure, "  "), f)
						} else {
							p("\n  %s\n%s  %s\n", f, indent(s.Failure, "  "), f)
						}
					}
					if s.History != "" {
						f := fence(s.History)
						p("\n  <details><summary>Calls (what was sent and what came back)</summary>\n\n  %s\n%s  %s\n\n  </details>\n", f, indent(s.History, "  "), f)
					}
				}
			}
		}
	}
	// Sections by bar segment, worst first; within a segment, outcomes in legend order.
	for _, g := range []Group{GroupFail, GroupBlocked, GroupNoAnswer, GroupInterrupted, GroupDocument, GroupKnown, GroupSkipped, groupUnlabeled, GroupChoice} {
		var want []verdict.Outcome
		for _, o := range order {
			if StyleOf(o).Group == g && o != verdict.Pass && o != verdict.NotRun && o != verdict.Skipped {
				want = append(want, o)
			}
		}
		if len(want) > 0 {
			section(groupTitle[g], want...)
		}
	}
	writeCorpusMarkdown(w, r.Corpus)
	p("\n## All rules\n\n<details><summary>All %d rules × %d backends</summary>\n\n", len(r.Rules), len(r.Backends))
	matrix(r.Rules)
	p("\n</details>\n")
	return nil
}

// groupTitle heads the Markdown evidence of each bar segment.
var groupTitle = map[Group]string{
	GroupFail:        "Divergences",
	GroupBlocked:     "Blocked (nothing judged: a precondition failed first)",
	GroupNoAnswer:    "No answer (nothing judged)",
	GroupInterrupted: "Interrupted (nothing judged)",
	GroupDocument:    "Documented differences",
	GroupKnown:       "Known divergences (expected by the baseline)",
	GroupSkipped:     "Partly run",
	groupUnlabeled:   "Other outcomes",
	GroupChoice:      "Allowed choices: behaviours the documentation allows",
}

// fence is a Markdown code fence longer than any run of backticks in text, so that a
// backend's answer cannot close it.
func fence(text string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func oneOf(o verdict.Outcome, set []verdict.Outcome) bool {
	for _, s := range set {
		if o == s {
			return true
		}
	}
	return false
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

// WriteJUnit writes one JUnit test suite per backend and a test case per spec: classname
// the backend's name and the rule's area ("azurite.batch", so that CI systems that key
// test cases by classname and name keep two backends apart), name the rule id and the
// spec, with the rule id, level and outcome as properties. Divergences fail; outcomes that
// judged nothing (no answer, blocked, interrupted) are errors; skipped specs are skipped,
// and so are known divergences (expected failures), with the baseline's evidence as the
// reason; documented differences and choices pass, with what they were in system-out.
func WriteJUnit(w io.Writer, r Report) error {
	var out junitSuites
	for bi, b := range r.Backends {
		s := junitSuite{Name: "conform/" + b.Name, Properties: []junitProperty{{"kind", b.Kind}, {"version", b.Version},
			{"profile", b.Profile}, {"verdict", b.Verdict}}}
		for _, row := range r.Rules {
			for _, sp := range row.Cells[bi].Specs {
				c := junitCase{Name: row.ID + ": " + sp.Text, Classname: b.Name + "." + row.Area, Time: fmt.Sprintf("%.3f", sp.RunTime),
					Properties: []junitProperty{{"rule", row.ID}, {"level", row.Level}, {"feature", row.Feature}, {"outcome", string(sp.Outcome)}}}
				s.Tests++
				st := StyleOf(sp.Outcome)
				switch {
				case st.Group == GroupFail:
					s.Failures++
					c.Failure = &junitMessage{Message: row.Text, Type: string(sp.Outcome), Body: sp.Failure + "\n" + sp.History}
				case judgesNothing(st.Group):
					s.Errors++
					c.Error = &junitMessage{Message: st.Word + ": nothing judged", Type: string(sp.Outcome), Body: sp.Failure + "\n" + sp.History}
				case sp.Outcome == verdict.Skipped || sp.Outcome == verdict.NotRun:
					s.Skipped++
					c.Skipped = &junitMessage{Message: sp.SkipReason}
				case sp.Outcome == verdict.ExpectedFail:
					s.Skipped++
					c.Skipped = &junitMessage{Message: "expected failure, listed in the baseline: " + firstNonEmpty(sp.Evidence, SpecWords(sp))}
					c.SystemOut = sp.Failure
				case sp.Outcome == verdict.DocumentedDiff:
					c.SystemOut = "documented difference: " + sp.Difference + "\n" + sp.Failure
				case sp.Outcome != verdict.Pass:
					c.SystemOut = st.Word + ": " + sp.Failure
				}
				if len(sp.Choices) > 0 {
					var words []string
					for _, ch := range sp.Choices {
						words = append(words, ChoiceWords(ch)+" ("+ch+")")
					}
					c.SystemOut = strings.TrimPrefix(c.SystemOut+"\nchose: "+strings.Join(words, "; "), "\n")
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
