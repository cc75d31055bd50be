package report

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// Meta is what a report says about the run that made it.
type Meta struct {
	ConformVersion string
	Command        string
	Generated      time.Time
}

// Build derives the report from the raw runs of each backend and the rule catalogue.
// Runs of the same backend name are merged; the later run wins per spec.
func Build(runs []Run, rules []spec.Rule, meta Meta) Report {
	rep := Report{Schema: Schema, Conform: meta.ConformVersion, Generated: meta.Generated.UTC(), Command: meta.Command, Legend: Legend}
	cells := map[string][]Cell{}
	byID := map[string]spec.Rule{}
	for _, r := range rules {
		cells[r.ID] = nil
		byID[r.ID] = r
	}
	for bi, run := range runs {
		b := Backend{Info: run.Backend, Profile: profileOf(run.Profile), Date: run.Ginkgo.StartTime.UTC(), Command: run.Command,
			StartError: run.StartError}
		if b.Name == "" {
			b.Name = fmt.Sprintf("backend%d", bi+1)
		}
		perRule := map[string]*Cell{}
		sel := SelectionOf(run.Filter)
		for _, s := range run.Ginkgo.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue
			}
			rule, ok := byID[ruleOfSpec(s)]
			if !ok {
				// A spec that did not run carries its rule only as a label.
				for _, l := range s.Labels() {
					if r, found := byID[l]; found {
						rule, ok = r, true
					}
				}
			}
			if !ok {
				continue
			}
			ruleID := rule.ID
			res := classify(s, sel, rule, b.Profile)
			count(&b.Counts, res)
			c := perRule[ruleID]
			if c == nil {
				c = &Cell{Outcome: verdict.NotRun}
				perRule[ruleID] = c
			}
			c.Specs = append(c.Specs, res)
			if res.Outcome == verdict.Error && len(b.Errors) < 20 {
				words, _ := FailureInWords(res.Failure)
				b.Errors = append(b.Errors, ruleID+": "+firstLineOf(words))
			}
		}
		for id := range cells {
			c := perRule[id]
			if c == nil {
				c = &Cell{Outcome: verdict.NotRun}
			}
			sort.SliceStable(c.Specs, func(i, j int) bool { return c.Specs[i].Text < c.Specs[j].Text })
			var d verdict.Decision
			c.Outcome, d = decideCell(c.Specs)
			c.Against, c.Unexpected = d.Against, d.Unexpected
			cells[id] = append(cells[id], *c)
		}
		b.Coverage.Filter = run.Filter
		b.Confirmation, b.ConfirmationWords = run.Confirmation, run.Confirmation.InWords()
		b.BaselineNote = run.BaselineNote
		if !run.StoppedAnswering.IsZero() {
			b.StoppedAnswering = run.StoppedAnswering.UTC().Format(time.RFC3339)
		}
		b.StoppedBy = StoppedBy(run)
		// Issue 31: a run that stopped, or left a selected spec unfinished, did not finish.
		b.Interrupted = run.Interrupted || len(b.StoppedBy) > 0 || b.Counts.NotRun+b.Counts.Interrupted > 0
		b.BaselineProblems = suiteNodesFailed(run)
		judge(&b, rules, cells, bi)
		b.BaselineMet = run.StartError == "" && run.Ginkgo.SuiteSucceeded
		rep.Backends = append(rep.Backends, b)
	}
	for _, r := range rules {
		rep.Rules = append(rep.Rules, RuleRow{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()),
			Text: r.Text, Source: r.Source, CosmosDifference: cosmosDifference(r), Cells: cells[r.ID]})
	}
	return rep
}

// WasInterrupted reports whether a Ginkgo run stopped before its end: Ginkgo recorded a
// special failure reason (a signal, its suite timeout, an abort, a failure to iterate
// over the specs; whatever it records there).
func WasInterrupted(r types.Report) bool { return len(r.SpecialSuiteFailureReasons) > 0 }

// StoppedBy is why run stopped before its end, as Ginkgo recorded it in every part of the
// run (MergeRuns keeps each part's), or the signal conform itself received.
func StoppedBy(run Run) []string {
	reasons := append([]string(nil), run.Ginkgo.SpecialSuiteFailureReasons...)
	if run.Interrupted && len(reasons) == 0 {
		reasons = append(reasons, "a signal to conform")
	}
	return reasons
}

// suiteNodesFailed counts the suite-level nodes of run (BeforeSuite, AfterSuite, a
// reporting node) that failed: the baseline's problems (stale entries, a rule-level
// entry whose rule passed) fail such a node, as the rule cells show only specs.
func suiteNodesFailed(run Run) int {
	n := 0
	for _, s := range run.Ginkgo.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt && s.State.Is(types.SpecStateFailureStates) {
			n++
		}
	}
	return n
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func profileOf(p string) string {
	if p == "" {
		return "storage"
	}
	return p
}

func ruleOfSpec(s types.SpecReport) string {
	for _, e := range s.ReportEntries {
		if e.Name == framework.EntryRule {
			var r framework.RuleEntry
			if json.Unmarshal([]byte(entryJSON(e)), &r) == nil {
				return r.ID
			}
		}
	}
	return ""
}

// entryJSON returns an entry's value as JSON, whether the report was decoded from a file or
// is the live one.
func entryJSON(e types.ReportEntry) string {
	if e.Value.AsJSON != "" {
		return e.Value.AsJSON
	}
	b, err := json.Marshal(e.Value.GetRawValue())
	if err != nil {
		return ""
	}
	return string(b)
}

func entries(s types.SpecReport, name string) []string {
	var out []string
	for _, e := range s.ReportEntries {
		if e.Name == name {
			out = append(out, entryJSON(e))
		}
	}
	return out
}

// classify gathers one spec's evidence and has its outcome decided by verdict.Decide,
// from what its runner recorded (framework.ResultOf), the rule's level, the profile's
// expectation and the baseline entry that listed it; a spec that never reached its body,
// or failed outside it, gets its state from Ginkgo's (never from the text of its failure),
// read with the run's selection (SpecState).
func classify(s types.SpecReport, sel Selection, rule spec.Rule, profile string) SpecResult {
	res := SpecResult{Text: framework.SpecText(s), RunTime: s.RunTime.Seconds()}
	for _, c := range entries(s, framework.EntryChoice) {
		var ch framework.Choice
		if json.Unmarshal([]byte(c), &ch) == nil {
			res.Choices = append(res.Choices, ch.What+": "+ch.Chosen)
		}
	}
	for _, h := range entries(s, framework.EntryHistory) {
		var text string
		if json.Unmarshal([]byte(h), &text) == nil {
			res.History = text
		}
	}
	msg := s.Failure.Message
	if s.State.Is(types.SpecStateFailureStates) {
		res.Failure = msg
		if s.Failure.Location.FileName != "" {
			res.Location = fmt.Sprintf("%s:%d", shortPath(s.Failure.Location.FileName), s.Failure.Location.LineNumber)
		}
	}
	var sig fixtures.Signature
	if entryValue(s, framework.EntrySignature, &sig) && !sig.IsZero() {
		res.Signature = &sig
	}
	r := SpecState(s, sel)
	r.Choices = len(res.Choices)
	entry := framework.BaselineOf(s)
	exp := verdict.ExpectationOf(rule, profile, res.Text)
	d := verdict.Decide(r, rule.Level, exp, entry)
	res.Decision, res.Outcome = d, d.Outcome
	var notExpressible framework.TransportEntry
	switch d.Outcome {
	case verdict.Skipped:
		res.SkipReason, res.Failure = skipReason(msg), ""
		if r.State == verdict.StateNotExpressible && entryValue(s, framework.EntryNotExpressible, &notExpressible) {
			// The driver's client could not send the request (EVIDENCE.md 12): not the backend's.
			res.SkipReason = "the driver cannot send this request: " + notExpressible.Error
		}
	case verdict.NotRun:
		res.SkipReason, res.Failure = notStarted, ""
	case verdict.Blocked:
		res.BlockedBy = r.BlockedBy
		res.PreviousEvidence = d.Why
	case verdict.DocumentedDiff, verdict.NotApplicable:
		res.Difference = exp.Difference
	case verdict.ExpectedFail:
		res.Evidence = entry.Evidence
	case verdict.Flaky:
		res.Notes = append(res.Notes, d.Why)
	case verdict.UnexpectedPass:
		res.PreviousEvidence = entry.Evidence
	case verdict.Fail:
		res.PreviousEvidence = d.Why
	case verdict.Pass:
		if d.Why != "" {
			res.Notes = append(res.Notes, d.Why) // a flaky entry's reason
		}
		if rule.Level == spec.Must {
			// A MUST rule's choice is a note on a pass, never information.
			res.Notes = append(res.Notes, res.Choices...)
		}
	}
	if res.Failure == "" && r.State != verdict.StatePassed && d.Outcome != verdict.Skipped && d.Outcome != verdict.NotRun {
		// An expected failure ended the spec without failing it: its message is the
		// signature's assertion.
		res.Failure = r.Failure
	}
	return res
}

// Selection is what a run was asked to run: the specs its label filter (Run.Filter; for a
// rerun merged into an earlier run, the earlier run's) selects, or every spec.
type Selection struct {
	filter types.LabelFilter
}

// SelectionOf is the selection of a run given label filter. A filter that does not parse
// (planRun refuses one before anything runs) selects every spec: a spec it would have left
// out reads as not started, never as judged.
func SelectionOf(filter string) Selection {
	if filter == "" {
		return Selection{}
	}
	lf, err := types.ParseLabelFilter(filter)
	if err != nil {
		return Selection{}
	}
	return Selection{filter: lf}
}

// Selects reports whether the selection holds spec s (Ginkgo's own test of its labels).
func (sel Selection) Selects(s types.SpecReport) bool {
	return sel.filter == nil || sel.filter(s.Labels())
}

// SpecState is what happened to spec s of a run with selection sel: the one adapter from
// Ginkgo's state to the verdict's. A spec Ginkgo skipped without a message was never
// started: it was left out when the selection does not hold it, and is not started (the
// run stopped first: a signal, the suite timeout, an abort) when it does. Otherwise the
// runner's Result when the spec concluded in its body, else Ginkgo's state with the
// framework's typed entries.
func SpecState(s types.SpecReport, sel Selection) verdict.Result {
	var blocked framework.BlockedEntry
	var sig fixtures.Signature
	if !entryValue(s, framework.EntrySignature, &sig) || sig.IsZero() {
		sig = framework.FailureSignature(s.Failure.Message, nil)
	}
	switch {
	case s.State == types.SpecStatePending:
		return verdict.Result{State: verdict.StateLeftOut}
	case s.State == types.SpecStateSkipped && s.Failure.Message == "" && !sel.Selects(s):
		return verdict.Result{State: verdict.StateLeftOut}
	case s.State == types.SpecStateSkipped && s.Failure.Message == "":
		return verdict.Result{State: verdict.StateNotStarted}
	case s.State == types.SpecStateSkipped:
		return verdict.Result{State: verdict.StateSkipped}
	case s.State == types.SpecStateInterrupted || s.State == types.SpecStateAborted:
		return verdict.Result{State: verdict.StateInterrupted}
	case s.State == types.SpecStateTimedout || s.State == types.SpecStatePanicked:
		return verdict.Result{State: verdict.StateNoAnswer, Signature: sig}
	}
	if r, ok := framework.ResultOf(s); ok {
		if r.State == verdict.StatePassed && s.State.Is(types.SpecStateFailureStates) && len(s.AdditionalFailures) > 0 {
			// The body passed, then a later node failed: that failure is the spec's.
			return verdict.Result{State: verdict.StateFailed, Signature: sig}
		}
		return r
	}
	switch {
	case s.State == types.SpecStatePassed:
		return verdict.Result{State: verdict.StatePassed}
	case hasEntry(s, framework.EntryTransport):
		return verdict.Result{State: verdict.StateNoAnswer, Signature: sig}
	case entryValue(s, framework.EntryBlocked, &blocked):
		return verdict.Result{State: verdict.StateBlocked, BlockedBy: blocked.Rule, Signature: sig}
	case s.State == types.SpecStateFailed && len(s.AdditionalFailures) == 0 && hasEntry(s, framework.EntryNotExpressible):
		return verdict.Result{State: verdict.StateNotExpressible}
	}
	return verdict.Result{State: verdict.StateFailed, Signature: sig}
}

// IsLeftOut reports whether the selection left spec s out (SpecState): it is no part of
// what the run covers.
func IsLeftOut(s types.SpecReport, sel Selection) bool {
	return SpecState(s, sel).State == verdict.StateLeftOut
}

// entryValue decodes the first entry named name into v and reports whether there was one.
func entryValue(s types.SpecReport, name string, v any) bool {
	for _, e := range entries(s, name) {
		_ = json.Unmarshal([]byte(e), v)
		return true
	}
	return false
}

func hasEntry(s types.SpecReport, name string) bool {
	for _, e := range s.ReportEntries {
		if e.Name == name {
			return true
		}
	}
	return false
}

func skipReason(msg string) string {
	if msg == "" {
		return "left out by the label filter or the run's selection"
	}
	return msg
}

// notStarted is the reason a selected spec that never started shows.
const notStarted = "not started: the run stopped (a signal, its timeout, an abort) before it began"

func shortPath(p string) string {
	if i := strings.Index(p, "/suites/"); i >= 0 {
		return p[i+1:]
	}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func count(c *Counts, res SpecResult) {
	switch {
	case !res.Decision.Selected:
		c.SkippedByFilter++
		return
	case res.Outcome == verdict.Skipped:
		c.Selected++
		c.SkippedCapability++
		return
	case res.Outcome == verdict.NotRun:
		c.Selected++
		c.NotRun++
		return
	}
	c.Selected++
	if res.Decision.Unexpected {
		c.Unexpected++
	}
	switch res.Outcome {
	case verdict.Interrupted:
		c.Interrupted++
		return
	case verdict.Blocked:
		c.Blocked++
		return
	}
	c.Run++
	switch res.Outcome {
	case verdict.Pass:
		c.Passed++
	case verdict.Info:
		c.Passed++
		c.Information++
	case verdict.Flaky:
		c.Flaky++
	case verdict.Fail:
		c.Failed++
	case verdict.Error:
		c.Errors++
	case verdict.ExpectedFail:
		c.ExpectedFailures++
	case verdict.UnexpectedPass:
		c.UnexpectedPasses++
	case verdict.DocumentedDiff:
		c.DocumentedDiffs++
	case verdict.NotApplicable:
		c.NotApplicable++
	}
}

// decideCell decides a rule's cell from its specs (verdict.Cell).
func decideCell(specs []SpecResult) (verdict.Outcome, verdict.Decision) {
	ds := make([]verdict.Decision, len(specs))
	for i, s := range specs {
		ds[i] = s.Decision
	}
	d := verdict.Cell(ds)
	return d.Outcome, d
}

// judge gives backend bi its verdict (verdict.Judge) over its cells.
func judge(b *Backend, rules []spec.Rule, cells map[string][]Cell, bi int) {
	rcs := make([]verdict.RuleCell, 0, len(rules))
	for _, r := range rules {
		c := cells[r.ID][bi]
		rcs = append(rcs, verdict.RuleCell{Rule: r, Cell: verdict.Decision{Outcome: c.Outcome, Against: c.Against,
			Unexpected: c.Unexpected, Selected: selected(c)}})
	}
	v := verdict.Judge(rcs, verdict.Backend{StartError: b.StartError, Interrupted: b.Interrupted, StoppedBy: b.StoppedBy, StoppedAnswering: b.StoppedAnswering, Filter: b.Coverage.Filter,
		Errors: b.Errors, ErrorCount: b.Counts.Errors})
	b.VerdictKind, b.Verdict, b.Coverage, b.FailingFeatures = v.Kind, v.Sentence, v.Coverage, v.FailingFeatures
}

// Tally is what verdict.Exit reads of backend b: its verdict's kind and its counts, from
// the judged backend the verdict sentence was made from, so that the two never disagree.
func Tally(b Backend) verdict.Tally {
	return verdict.Tally{Kind: b.VerdictKind, Unexpected: b.Counts.Unexpected, BaselineProblems: b.BaselineProblems, Errors: b.Counts.Errors,
		StoppedAnswering: b.StoppedAnswering != ""}
}

// Exit is the exit status of the run that report r judges (verdict.Exit over every
// backend's Tally).
func Exit(r Report, updatingBaseline bool) int {
	tallies := make([]verdict.Tally, 0, len(r.Backends))
	for _, b := range r.Backends {
		tallies = append(tallies, Tally(b))
	}
	return verdict.Exit(tallies, updatingBaseline)
}

// selected reports whether any spec of a cell was selected (not left out by the filter:
// verdict.Decide's Selected, from SpecState).
func selected(c Cell) bool {
	for _, s := range c.Specs {
		if s.Decision.Selected {
			return true
		}
	}
	return false
}

// cosmosDifference is what a rule row says about Cosmos DB for Table: its expectation in one
// line and Cosmos's answer in words, or nothing where Cosmos answers as Storage does.
func cosmosDifference(r spec.Rule) string {
	if r.Cosmos.KindOrSame() == spec.CosmosSame {
		return ""
	}
	return r.Cosmos.Summary() + ": " + r.Cosmos.Answer
}
