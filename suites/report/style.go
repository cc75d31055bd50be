package report

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/verdict"
)

// Group is a segment of the outcome bars: outcomes a reader acts on alike share one.
type Group string

// The bar segments, in the order they are drawn. Each says what its outcomes say: an
// allowed choice is not a pass, and a blocked rule got an answer, only not to its subject.
const (
	GroupPass        Group = "pass"
	GroupChoice      Group = "allowed choice"
	GroupFail        Group = "fail"
	GroupKnown       Group = "known divergence"
	GroupDocument    Group = "documented difference"
	GroupBlocked     Group = "blocked"
	GroupNoAnswer    Group = "no answer"
	GroupInterrupted Group = "interrupted"
	GroupSkipped     Group = "skipped"
	GroupLeftOut     Group = "left out by the filter"
	groupUnlabeled   Group = "other"
)

// GroupStyle is how a bar segment is drawn and what it means.
type GroupStyle struct {
	Group  Group
	Colour string
	Means  string
}

// Groups lists the bar segments in drawing order, with their colours.
var Groups = []GroupStyle{
	{GroupPass, "#2da44e", "the backend behaves as the rule says"},
	{GroupChoice, "#54aeff", "a MAY or SHOULD rule: the backend chose a behaviour the documentation allows"},
	{GroupFail, "#cf222e", "breaks the rule, and no baseline expects it"},
	{GroupKnown, "#8c959f", "breaks the rule, as the backend's baseline expects (or is listed as flaky)"},
	{GroupDocument, "#8250df", "differs as Microsoft documents for the backend's profile"},
	{GroupBlocked, "#fb8f44", "not judged: something the spec relies on, which another rule covers, failed first"},
	{GroupNoAnswer, "#d4a72c", "not judged: the connection dropped or timed out, or the service kept throttling"},
	{GroupInterrupted, "#e6c35c", "not judged: the run stopped before or while the spec ran"},
	{GroupSkipped, "#d0d7de", "not run (a capability, the driver, a policy), or only partly run"},
	{GroupLeftOut, "#eef1f4", "the run's label filter did not select the rule: not part of what the verdict covers"},
	{groupUnlabeled, "#afb8c1", "an outcome this version of the report does not know"},
}

// judgesNothing reports whether a segment's outcomes judged nothing of the rule although
// it was selected (JUnit errors).
func judgesNothing(g Group) bool {
	return g == GroupBlocked || g == GroupNoAnswer || g == GroupInterrupted
}

// LeftOut is how a report counts and shows a rule (or spec) whose every spec the run's
// label filter left out: its cell's outcome is skipped (verdict.Cell), but it is not part of
// what the verdict covers, so its counts never say "skipped".
const LeftOut verdict.Outcome = "left-out"

// leftOutMeaning is the legend's sentence for LeftOut.
const leftOutMeaning = "the run's label filter (or the selection of --rerun-failed) did not select the rule's specs: not part of what the verdict covers"

// shownOutcome is the outcome a cell is counted and worded by: LeftOut for a cell whose
// every spec the filter left out, else its own.
func shownOutcome(c Cell) verdict.Outcome {
	if c.Outcome == verdict.Skipped && len(c.Specs) > 0 && !selected(c) {
		return LeftOut
	}
	return c.Outcome
}

// shownSpecOutcome is the outcome a spec is counted by: LeftOut for a spec the filter left
// out, else its own.
func shownSpecOutcome(s SpecResult) verdict.Outcome {
	if s.Outcome == verdict.Skipped && s.SkipReason == skipReason("") {
		return LeftOut
	}
	return s.Outcome
}

// Style is how one outcome looks in every format: the word in a cell, its plain-text
// symbol for Markdown, and its bar segment. (How outcomes compare between runs is
// verdict.Compare's.)
type Style struct {
	Word   string
	Symbol string
	Group  Group
}

// styles is the table every writer draws outcomes from. Outcomes not listed here (added
// to the model later) are drawn with unknownStyle until they get an entry.
var styles = map[verdict.Outcome]Style{
	verdict.Pass:           {"pass", "✅", GroupPass},
	verdict.Info:           {"allowed choice", "ℹ️", GroupChoice},
	verdict.Partial:        {"partial", "◐", GroupSkipped},
	verdict.DocumentedDiff: {"documented difference", "🟪", GroupDocument},
	verdict.NotApplicable:  {"not applicable", "⊘", GroupDocument},
	verdict.ExpectedFail:   {"known divergence", "☑️", GroupKnown},
	verdict.Flaky:          {"flaky", "〰️", GroupKnown},
	verdict.UnexpectedPass: {"unexpected pass", "❗", GroupFail},
	verdict.Fail:           {"FAIL", "❌", GroupFail},
	verdict.Error:          {"no answer", "⚠️", GroupNoAnswer},
	verdict.Blocked:        {"blocked", "⛔", GroupBlocked},
	verdict.Interrupted:    {"interrupted", "⏹️", GroupInterrupted},
	"inconclusive":         {"inconclusive", "❔", GroupNoAnswer},
	verdict.Skipped:        {"skipped", "➖", GroupSkipped},
	verdict.NotRun:         {"not run", "·", GroupSkipped},
	LeftOut:                {"left out by the filter", "–", GroupLeftOut},
}

// StyleOf returns an outcome's style; an outcome without an entry is shown by its name.
func StyleOf(o verdict.Outcome) Style {
	if s, ok := styles[o]; ok {
		return s
	}
	return Style{Word: string(o), Symbol: "?", Group: groupUnlabeled}
}

// groupColour is a bar segment's colour.
func groupColour(g Group) string {
	for _, x := range Groups {
		if x.Group == g {
			return x.Colour
		}
	}
	return "#afb8c1"
}

// legendOf is the legend a report is drawn with: this version's meanings, then those of
// outcomes only the report's own legend knows (a report written by a newer conform).
func legendOf(r Report) []LegendRow {
	out := append(append([]LegendRow(nil), Legend...), LegendRow{Outcome: LeftOut, Meaning: leftOutMeaning})
	for _, l := range r.Legend {
		if !slices.ContainsFunc(out, func(x LegendRow) bool { return x.Outcome == l.Outcome }) {
			out = append(out, l)
		}
	}
	return out
}

// outcomeOrder lists the outcomes of the legend and any others that occur in r, in the
// order of the bar segments (passes first, then failures, ... skipped last) and, within a
// segment, in the legend's order: the order of counts.
func outcomeOrder(r Report) []verdict.Outcome {
	seen := map[verdict.Outcome]bool{}
	var out []verdict.Outcome
	for _, l := range legendOf(r) {
		if !seen[l.Outcome] {
			seen[l.Outcome] = true
			out = append(out, l.Outcome)
		}
	}
	var extra []verdict.Outcome
	for _, row := range r.Rules {
		for _, c := range row.Cells {
			if !seen[c.Outcome] {
				seen[c.Outcome] = true
				extra = append(extra, c.Outcome)
			}
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	out = append(out, extra...)
	groupIndex := func(o verdict.Outcome) int {
		g := StyleOf(o).Group
		return slices.IndexFunc(Groups, func(x GroupStyle) bool { return x.Group == g })
	}
	sort.SliceStable(out, func(i, j int) bool { return groupIndex(out[i]) < groupIndex(out[j]) })
	return out
}

// choiceAnswer recognises an answer recorded as a choice: "400 InvalidInput", "it failed
// with 500 InternalError (...)", "refused: 403 AuthorizationFailure".
var choiceAnswer = regexp.MustCompile(`^(?:it failed with |it was |refused: |refused with )?([1-5]\d\d)(?: "?([A-Za-z][A-Za-z0-9]*))?\b`)

// ChoiceWords says a recorded choice ("what: chosen") in a few words: refusals as "refused
// with 400 InvalidInput", server errors as "server error 500 InternalError", successes as
// "accepted". Anything else keeps its own words. Request ids, messages and quoted details
// are left out, so that two backends that answered alike read alike.
func ChoiceWords(choice string) string {
	chosen := choice
	if i := strings.Index(choice, ": "); i >= 0 {
		chosen = choice[i+2:]
	}
	chosen = strings.TrimSpace(chosen)
	if m := choiceAnswer.FindStringSubmatch(chosen); m != nil {
		status, code := m[1], m[2]
		with := status
		if code != "" {
			with += " " + code
		}
		rest := strings.TrimPrefix(chosen[len(m[0]):], `"`) // the code quoted: it was 403 "AuthorizationFailure"
		for _, cut := range []string{" (", " [request id"} {
			if i := strings.Index(rest, cut); i >= 0 {
				rest = rest[:i]
			}
		}
		with += strings.TrimRight(rest, " ")
		switch status[0] {
		case '4':
			return "refused with " + with
		case '5':
			return "server error " + with
		case '2':
			return "accepted (" + with + ")"
		}
		return "answered " + with
	}
	for _, p := range []string{"it succeeded", "success"} {
		if rest, ok := strings.CutPrefix(chosen, p); ok {
			return "accepted" + rest
		}
	}
	if strings.HasPrefix(chosen, "it had a transport error") || strings.HasPrefix(chosen, "transport error") {
		return "no answer (transport error)"
	}
	if i := strings.Index(chosen, " (pages of "); i > 0 {
		chosen = chosen[:i]
	}
	return chosen
}

// cellChoices are the distinct choices of a cell in words, in spec order.
func cellChoices(c Cell) []string {
	var out []string
	for _, s := range c.Specs {
		for _, ch := range s.Choices {
			w := ChoiceWords(ch)
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// CellSummary is what a cell says in the matrix: its outcome in a word and, for a cell
// that did not pass, what the backend did in the spec that decided it (SpecWords); for a
// passing cell, the choices its specs recorded, in words; a documented difference says the
// difference.
func CellSummary(row RuleRow, c Cell) string {
	s := StyleOf(shownOutcome(c)).Word
	if c.Outcome == verdict.DocumentedDiff {
		d := row.CosmosDifference
		for _, sp := range c.Specs {
			if sp.Difference != "" {
				d = sp.Difference
			}
		}
		if d != "" {
			return "documented: " + strings.TrimSuffix(d, ".")
		}
	}
	if saysWhatHappened[c.Outcome] {
		if sp, ok := decisiveSpec(c); ok {
			if words := SpecWords(sp); words != "" {
				return s + ": " + words
			}
		}
		return s
	}
	if ch := cellChoices(c); len(ch) > 0 {
		words := shortChoices(ch)
		if c.Outcome == verdict.Info {
			return words
		}
		return s + ": " + words
	}
	return s
}

// signature is what two cells must share to read alike: the outcome and the choices in
// words.
func signature(c Cell) string {
	return string(c.Outcome) + "|" + fixtures.MaskRunValues(strings.Join(cellChoices(c), "|"))
}

// Differs reports whether a rule's backends disagree in outcome or recorded choice. With a
// single backend nothing can differ; then a rule "differs" when it did not plainly pass, so
// that the default view still shows what to look at.
func Differs(row RuleRow) bool {
	if len(row.Cells) == 1 {
		return row.Cells[0].Outcome != verdict.Pass
	}
	for _, c := range row.Cells[1:] {
		if signature(c) != signature(row.Cells[0]) {
			return true
		}
	}
	return false
}

// AreaTally counts one backend's rules of one area per outcome.
type AreaTally struct {
	Area   string
	Counts []map[verdict.Outcome]int // per backend
	Rules  int
	Differ int
}

// tallyAreas counts rules per area and backend, areas in their first appearance's order.
func tallyAreas(r Report) []AreaTally {
	var out []AreaTally
	index := map[string]int{}
	for _, row := range r.Rules {
		i, ok := index[row.Area]
		if !ok {
			i = len(out)
			index[row.Area] = i
			t := AreaTally{Area: row.Area, Counts: make([]map[verdict.Outcome]int, len(r.Backends))}
			for b := range t.Counts {
				t.Counts[b] = map[verdict.Outcome]int{}
			}
			out = append(out, t)
		}
		out[i].Rules++
		if Differs(row) {
			out[i].Differ++
		}
		for bi, c := range row.Cells {
			if bi < len(out[i].Counts) {
				out[i].Counts[bi][shownOutcome(c)]++
			}
		}
	}
	return out
}

// groupCounts folds outcome counts into bar segments, in drawing order.
func groupCounts(counts map[verdict.Outcome]int) []groupCount {
	by := map[Group]int{}
	for o, n := range counts {
		by[StyleOf(o).Group] += n
	}
	var out []groupCount
	for _, g := range Groups {
		if by[g.Group] > 0 {
			out = append(out, groupCount{g.Group, by[g.Group]})
		}
	}
	return out
}

type groupCount struct {
	Group Group
	N     int
}

// countsInWords says outcome counts in the order of outcomeOrder: "40 pass · 2 FAIL".
func countsInWords(order []verdict.Outcome, counts map[verdict.Outcome]int) string {
	var parts []string
	for _, o := range order {
		if n := counts[o]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, StyleOf(o).Word))
		}
	}
	return strings.Join(parts, " · ")
}

// backendRuleCounts counts backend bi's rules per outcome.
func backendRuleCounts(r Report, bi int) map[verdict.Outcome]int {
	out := map[verdict.Outcome]int{}
	for _, row := range r.Rules {
		if bi < len(row.Cells) {
			out[shownOutcome(row.Cells[bi])]++
		}
	}
	return out
}

// VerdictStyle is how a verdict is shown: its CSS class on the page and its symbol in
// report.md. Only a verdict with nothing failing and nothing unjudged, except what a
// declared filter left out, is green: "conforms to core" (MUST rules of extended features
// fail) and a "conforms on" with rules not judged are amber, a verdict that judged no MUST
// rule is neutral.
type VerdictStyle struct {
	Class, Symbol string
}

var (
	verdictGreen   = VerdictStyle{"v-ok", "✅"}
	verdictAmber   = VerdictStyle{"v-warn", "🟡"}
	verdictNeutral = VerdictStyle{"v-other", "·"}
)

var verdictStyles = map[verdict.Kind]VerdictStyle{
	verdict.Conforms:        verdictGreen,
	verdict.ConformsOn:      verdictAmber,
	verdict.ConformsToCore:  verdictAmber,
	verdict.DoesNotConform:  {"v-bad", "❌"},
	verdict.Inconclusive:    {"v-other", "❔"},
	verdict.KindInterrupted: {"v-other", "⏹️"},
	verdict.KindNotRun:      verdictNeutral,
}

// VerdictStyleOf returns a verdict kind's style when nothing but the kind is known ("conforms
// on" amber); an unknown kind is shown as "other".
func VerdictStyleOf(k verdict.Kind) VerdictStyle {
	if s, ok := verdictStyles[k]; ok {
		return s
	}
	return VerdictStyle{"v-other", "?"}
}

// VerdictStyleFor returns the style of a backend's verdict, from its kind and coverage: a
// "conforms on" is green only when it judged some MUST rule, every selected applicable one
// passed, and any rule it did not select was left out by a declared filter; with nothing
// judged it is neutral, otherwise amber.
func VerdictStyleFor(b Backend) VerdictStyle {
	if b.VerdictKind != verdict.ConformsOn {
		return VerdictStyleOf(b.VerdictKind)
	}
	c := b.Coverage
	switch {
	case c.Passed == 0 && c.Failing == 0 && c.Unjudged == 0:
		return verdictNeutral
	case c.Failing == 0 && c.Unjudged == 0 && c.Passed == c.Selected-c.NotApplicable && (!c.Partial() || c.Filter != ""):
		return verdictGreen
	}
	return verdictAmber
}

// Levels are the rule levels, in the order counts by level are said.
var Levels = []string{"MUST", "SHOULD", "MAY"}

// byLevelInWords says counts per rule level, each part naming its level:
// "MUST 302 pass · 14 FAIL; SHOULD 21 pass; MAY 32 allowed choice".
func byLevelInWords(order []verdict.Outcome, counts map[string]map[verdict.Outcome]int) string {
	var parts []string
	for _, l := range levelsOf(counts) {
		if words := countsInWords(order, counts[l]); words != "" {
			parts = append(parts, l+" "+words)
		}
	}
	return strings.Join(parts, "; ")
}

// levelsOf lists the levels of counts: Levels first, then any other in name order.
func levelsOf[T any](counts map[string]T) []string {
	var out, extra []string
	for _, l := range Levels {
		if _, ok := counts[l]; ok {
			out = append(out, l)
		}
	}
	for l := range counts {
		if !slices.Contains(Levels, l) {
			extra = append(extra, l)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// backendCountsByLevel counts backend bi's rules (or, with specs, their specs) per level
// and outcome.
func backendCountsByLevel(r Report, bi int, specs bool) map[string]map[verdict.Outcome]int {
	out := map[string]map[verdict.Outcome]int{}
	for _, row := range r.Rules {
		if bi >= len(row.Cells) {
			continue
		}
		if out[row.Level] == nil {
			out[row.Level] = map[verdict.Outcome]int{}
		}
		if !specs {
			out[row.Level][shownOutcome(row.Cells[bi])]++
			continue
		}
		for _, s := range row.Cells[bi].Specs {
			out[row.Level][shownSpecOutcome(s)]++
		}
	}
	return out
}
