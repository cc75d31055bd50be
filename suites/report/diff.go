package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/verdict"
)

// Change is one rule's cell on one backend that differs between two reports.
type Change struct {
	Rule    string          `json:"rule"`
	Level   string          `json:"level"`
	Old     verdict.Outcome `json:"old,omitempty"`
	New     verdict.Outcome `json:"new,omitempty"`
	OldSays string          `json:"oldSays,omitempty"` // the old cell in words (CellSummary)
	NewSays string          `json:"newSays,omitempty"`
	Why     string          `json:"why,omitempty"` // why a change cannot be compared
}

// BackendDiff is what changed on one backend (matched by name) between two reports.
type BackendDiff struct {
	Backend string `json:"backend"`
	// Missing says the backend is in only one of the reports; then nothing else is set.
	Missing string `json:"missing,omitempty"`
	// Worse are the rules whose outcome got worse (verdict.Compare): the
	// regressions. Better are those that got better.
	Worse  []Change `json:"worse,omitempty"`
	Better []Change `json:"better,omitempty"`
	// ChangedChoice are the rules whose outcome ranks the same but whose recorded choice (or
	// outcome of equal rank) changed, e.g. a MAY answer from "refused with 400" to "accepted".
	ChangedChoice []Change `json:"changedChoice,omitempty"`
	// BaselineChanged are the rules where the backend did the same and only what its
	// baseline expects changed (verdict.BaselineEdited): neither better nor worse.
	BaselineChanged []Change `json:"baselineChanged,omitempty"`
	// Incomparable are the changes from or to an outcome that judges nothing (no answer,
	// skipped, not run), and the rules in only one report.
	Incomparable []Change `json:"cannotCompare,omitempty"`
}

// DiffResult compares two reports backend by backend.
type DiffResult struct {
	Old         string        `json:"old"`
	New         string        `json:"new"`
	Backends    []BackendDiff `json:"backends"`
	Regressions int           `json:"regressions"`
}

// Diff compares the report old with the newer report new, per backend name and rule id.
// oldName and newName say where they came from.
func Diff(old, new Report, oldName, newName string) DiffResult {
	d := DiffResult{Old: oldName, New: newName}
	oldIndex := map[string]int{}
	for i, b := range old.Backends {
		oldIndex[b.Name] = i
	}
	newNames := map[string]bool{}
	oldRows := map[string]RuleRow{}
	for _, row := range old.Rules {
		oldRows[row.ID] = row
	}
	for ni, b := range new.Backends {
		newNames[b.Name] = true
		oi, ok := oldIndex[b.Name]
		if !ok {
			d.Backends = append(d.Backends, BackendDiff{Backend: b.Name, Missing: "only in " + newName})
			continue
		}
		bd := BackendDiff{Backend: b.Name}
		seen := map[string]bool{}
		for _, row := range new.Rules {
			seen[row.ID] = true
			n := row.Cells[ni]
			orow, ok := oldRows[row.ID]
			if !ok {
				if n.Outcome != verdict.NotRun {
					bd.Incomparable = append(bd.Incomparable, Change{Rule: row.ID, Level: row.Level, New: n.Outcome,
						NewSays: CellSummary(row, n), Why: "the rule is not in " + oldName})
				}
				continue
			}
			o := orow.Cells[oi]
			// Per-run values (request ids, boundaries, times, table names) are masked before
			// cells are compared or shown.
			ch := Change{Rule: row.ID, Level: row.Level, Old: o.Outcome, New: n.Outcome,
				OldSays: fixtures.MaskRunValues(CellSummary(orow, o)), NewSays: fixtures.MaskRunValues(CellSummary(row, n))}
			switch verdict.Compare(o.Outcome, n.Outcome, fixtures.MaskRunValues(cellDid(orow, o)), fixtures.MaskRunValues(cellDid(row, n))) {
			case verdict.Same:
			case verdict.BaselineEdited:
				bd.BaselineChanged = append(bd.BaselineChanged, ch)
			case verdict.Incomparable:
				ch.Why = "nothing was judged in " + map[bool]string{true: oldName, false: newName}[!verdict.Comparable(o.Outcome)]
				bd.Incomparable = append(bd.Incomparable, ch)
			case verdict.Regressed:
				bd.Worse = append(bd.Worse, ch)
			case verdict.Improved:
				bd.Better = append(bd.Better, ch)
			default:
				bd.ChangedChoice = append(bd.ChangedChoice, ch)
			}
		}
		for _, row := range old.Rules {
			if !seen[row.ID] && row.Cells[oi].Outcome != verdict.NotRun {
				bd.Incomparable = append(bd.Incomparable, Change{Rule: row.ID, Level: row.Level, Old: row.Cells[oi].Outcome,
					OldSays: CellSummary(row, row.Cells[oi]), Why: "the rule is not in " + newName})
			}
		}
		d.Regressions += len(bd.Worse)
		d.Backends = append(d.Backends, bd)
	}
	for _, b := range old.Backends {
		if !newNames[b.Name] {
			d.Backends = append(d.Backends, BackendDiff{Backend: b.Name, Missing: "only in " + oldName})
		}
	}
	return d
}

// cellDid is what a cell says the backend did (CellSummary without the outcome's word).
func cellDid(row RuleRow, c Cell) string {
	says := CellSummary(row, c)
	word := StyleOf(shownOutcome(c)).Word
	if says == word {
		return ""
	}
	return strings.TrimPrefix(says, word+": ")
}

// incomparableRowsShown is how many rules of one reason the Markdown lists in a table
// before it says them in one line: a filtered run beside a full one leaves hundreds of
// rules that cannot be compared, which said row by row bury the changes (issue 34, item 10).
const incomparableRowsShown = 5

// WriteDiffMarkdown writes a comparison for people (and CI job summaries).
func WriteDiffMarkdown(w io.Writer, d DiffResult) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Conformance changes: %s → %s\n\n", mdEscape(d.Old), mdEscape(d.New))
	if d.Regressions > 0 {
		p("**%d regression(s).**\n", d.Regressions)
	} else {
		p("No regression.\n")
	}
	for _, b := range d.Backends {
		p("\n## %s\n\n", mdEscape(b.Backend))
		if b.Missing != "" {
			p("Backend %s: not compared.\n", b.Missing)
			continue
		}
		if len(b.Worse)+len(b.Better)+len(b.ChangedChoice)+len(b.BaselineChanged)+len(b.Incomparable) == 0 {
			p("No change.\n")
			continue
		}
		list := func(title string, cs []Change) {
			if len(cs) == 0 {
				return
			}
			p("### %s (%d)\n\n| rule | level | before | after |", title, len(cs))
			withWhy := cs[0].Why != ""
			if withWhy {
				p(" why |")
			}
			p("\n|---|---|---|---|")
			if withWhy {
				p("---|")
			}
			p("\n")
			for _, c := range cs {
				p("| `%s` | %s | %s | %s |", c.Rule, c.Level, says(c.Old, c.OldSays), says(c.New, c.NewSays))
				if withWhy {
					p(" %s |", mdEscape(c.Why))
				}
				p("\n")
			}
			p("\n")
		}
		list("Got worse", b.Worse)
		list("Got better", b.Better)
		list("Changed choice", b.ChangedChoice)
		list("Baseline changed, the backend did the same", b.BaselineChanged)
		var listed []Change
		var summed []string
		for _, g := range byWhy(b.Incomparable) {
			if len(g) <= incomparableRowsShown {
				listed = append(listed, g...)
				continue
			}
			summed = append(summed, fmt.Sprintf("%d rules cannot be compared: %s (%s, …).", len(g), mdEscape(g[0].Why), firstRules(g, 3)))
		}
		list("Cannot be compared", listed)
		for _, line := range summed {
			p("%s\n", line)
		}
	}
	return nil
}

// byWhy groups changes by their reason, in the order each reason first comes.
func byWhy(cs []Change) [][]Change {
	var groups [][]Change
	at := map[string]int{}
	for _, c := range cs {
		i, ok := at[c.Why]
		if !ok {
			i = len(groups)
			at[c.Why] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], c)
	}
	return groups
}

// firstRules names the first n rules of cs, as code.
func firstRules(cs []Change, n int) string {
	var ids []string
	for _, c := range cs[:min(n, len(cs))] {
		ids = append(ids, "`"+c.Rule+"`")
	}
	return strings.Join(ids, ", ")
}

func says(o verdict.Outcome, words string) string {
	if o == "" {
		return "–"
	}
	return strings.TrimSpace(StyleOf(o).Symbol + " " + mdEscape(words))
}
