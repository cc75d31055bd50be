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
			res := classify(s, rule, b.Profile)
			count(&b.Counts, res)
			c := perRule[ruleID]
			if c == nil {
				c = &Cell{Outcome: NotRun}
				perRule[ruleID] = c
			}
			c.Specs = append(c.Specs, res)
			if res.Outcome == Error && len(b.Errors) < 20 {
				b.Errors = append(b.Errors, ruleID+": "+firstLineOf(res.Failure))
			}
		}
		for id := range cells {
			c := perRule[id]
			if c == nil {
				c = &Cell{Outcome: NotRun}
			}
			sort.SliceStable(c.Specs, func(i, j int) bool { return c.Specs[i].Text < c.Specs[j].Text })
			var d verdict.Decision
			c.Outcome, d = decideCell(c.Specs)
			c.Against, c.Unexpected = d.Against, d.Unexpected
			cells[id] = append(cells[id], *c)
		}
		b.Coverage.Filter = run.Filter
		if !run.StoppedAnswering.IsZero() {
			b.StoppedAnswering = run.StoppedAnswering.UTC().Format(time.RFC3339)
		}
		b.Interrupted = run.Interrupted || run.Ginkgo.SpecialSuiteFailureReasons != nil && interruptedReport(run.Ginkgo)
		judge(&b, rules, cells, bi, b.Interrupted)
		b.BaselineMet = run.StartError == "" && run.Ginkgo.SuiteSucceeded
		rep.Backends = append(rep.Backends, b)
	}
	for _, r := range rules {
		rep.Rules = append(rep.Rules, RuleRow{ID: r.ID, Level: string(r.Level), Area: string(r.Area), Feature: string(r.FeatureOrCore()),
			Text: r.Text, Source: r.Source, CosmosDifference: cosmosDifference(r), Cells: cells[r.ID]})
	}
	return rep
}

// interruptedReport reports whether Ginkgo says the suite was interrupted.
// WasInterrupted reports whether a Ginkgo run was interrupted (a signal, or its timeout).
func WasInterrupted(r types.Report) bool { return interruptedReport(r) }

func interruptedReport(r types.Report) bool {
	for _, reason := range r.SpecialSuiteFailureReasons {
		if strings.Contains(strings.ToLower(reason), "interrupted") {
			return true
		}
	}
	return false
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
// or failed outside it, gets its state from Ginkgo's (never from the text of its failure).
func classify(s types.SpecReport, rule spec.Rule, profile string) SpecResult {
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
	r := specState(s)
	r.Choices = len(res.Choices)
	entry := framework.BaselineOf(s)
	exp := verdict.ExpectationOf(rule, profile, res.Text)
	d := verdict.Decide(r, rule.Level, exp, entry)
	res.Decision, res.Outcome = d, d.Outcome
	var notExpressible framework.TransportEntry
	switch d.Outcome {
	case Skipped:
		res.SkipReason, res.Failure = skipReason(msg), ""
		if r.State == verdict.NotExpressible && entryValue(s, framework.EntryNotExpressible, &notExpressible) {
			// The driver's client could not send the request (EVIDENCE.md 12): not the backend's.
			res.SkipReason = "the driver cannot send this request: " + notExpressible.Error
		}
	case Blocked:
		res.BlockedBy = r.BlockedBy
		res.PreviousEvidence = d.Why
	case DocumentedDiff, NotApplicable:
		res.Difference = exp.Difference
	case ExpectedFail:
		res.Evidence = entry.Evidence
	case Flaky:
		res.Notes = append(res.Notes, d.Why)
	case UnexpectedPass:
		res.PreviousEvidence = entry.Evidence
	case Fail:
		res.PreviousEvidence = d.Why
	case Pass:
		if rule.Level == spec.Must {
			// A MUST rule's choice is a note on a pass, never information.
			res.Notes = append(res.Notes, res.Choices...)
		}
	}
	if res.Failure == "" && r.State != verdict.Passed && d.Outcome != Skipped {
		// An expected failure ended the spec without failing it: its message is the
		// signature's assertion.
		res.Failure = r.Failure
	}
	return res
}

// specState is what happened to a spec: the runner's Result when the spec concluded in
// its body, else Ginkgo's state with the framework's typed entries.
func specState(s types.SpecReport) verdict.Result {
	var blocked framework.BlockedEntry
	var sig fixtures.Signature
	if !entryValue(s, framework.EntrySignature, &sig) || sig.IsZero() {
		sig = framework.FailureSignature(s.Failure.Message, nil)
	}
	switch {
	case s.State == types.SpecStateSkipped && s.Failure.Message == "", s.State == types.SpecStatePending:
		return verdict.Result{State: verdict.LeftOut}
	case s.State == types.SpecStateSkipped:
		return verdict.Result{State: verdict.SkippedState}
	case s.State == types.SpecStateInterrupted || s.State == types.SpecStateAborted:
		return verdict.Result{State: verdict.Stopped}
	case s.State == types.SpecStateTimedout || s.State == types.SpecStatePanicked:
		return verdict.Result{State: verdict.NoAnswer, Signature: sig}
	}
	if r, ok := framework.ResultOf(s); ok {
		if r.State == verdict.Passed && s.State.Is(types.SpecStateFailureStates) && len(s.AdditionalFailures) > 0 {
			// The body passed, then a later node failed: that failure is the spec's.
			return verdict.Result{State: verdict.Failed, Signature: sig}
		}
		return r
	}
	switch {
	case s.State == types.SpecStatePassed:
		return verdict.Result{State: verdict.Passed}
	case hasEntry(s, framework.EntryTransport):
		return verdict.Result{State: verdict.NoAnswer, Signature: sig}
	case entryValue(s, framework.EntryBlocked, &blocked):
		return verdict.Result{State: verdict.BlockedState, BlockedBy: blocked.Rule, Signature: sig}
	case s.State == types.SpecStateFailed && len(s.AdditionalFailures) == 0 && hasEntry(s, framework.EntryNotExpressible):
		return verdict.Result{State: verdict.NotExpressible}
	}
	return verdict.Result{State: verdict.Failed, Signature: sig}
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
	if res.Outcome == Skipped {
		if res.SkipReason == skipReason("") {
			c.SkippedByFilter++
		} else {
			c.Selected++
			c.SkippedCapability++
		}
		return
	}
	c.Selected++
	if res.Decision.Unexpected {
		c.Unexpected++
	}
	switch res.Outcome {
	case Interrupted:
		c.Interrupted++
		return
	case Blocked:
		c.Blocked++
		return
	}
	c.Run++
	switch res.Outcome {
	case Pass:
		c.Passed++
	case Info:
		c.Passed++
		c.Information++
	case Flaky:
		c.Flaky++
	case Fail:
		c.Failed++
	case Error:
		c.Errors++
	case ExpectedFail:
		c.ExpectedFailures++
	case UnexpectedPass:
		c.UnexpectedPasses++
	case DocumentedDiff:
		c.DocumentedDiffs++
	case NotApplicable:
		c.NotApplicable++
	}
}

// decideCell decides a rule's cell from its specs (verdict.Cell).
func decideCell(specs []SpecResult) (Outcome, verdict.Decision) {
	ds := make([]verdict.Decision, len(specs))
	for i, s := range specs {
		ds[i] = s.Decision
	}
	d := verdict.Cell(ds)
	return d.Outcome, d
}

// judge gives backend bi its verdict (verdict.Judge) over its cells.
func judge(b *Backend, rules []spec.Rule, cells map[string][]Cell, bi int, interrupted bool) {
	rcs := make([]verdict.RuleCell, 0, len(rules))
	for _, r := range rules {
		c := cells[r.ID][bi]
		rcs = append(rcs, verdict.RuleCell{Rule: r, Cell: verdict.Decision{Outcome: c.Outcome, Against: c.Against,
			Unexpected: c.Unexpected, Selected: selected(c)}})
	}
	v := verdict.Judge(rcs, verdict.Backend{StartError: b.StartError, Interrupted: interrupted, StoppedAnswering: b.StoppedAnswering, Filter: b.Coverage.Filter,
		Errors: b.Errors, ErrorCount: b.Counts.Errors})
	b.VerdictKind, b.Verdict, b.Coverage, b.FailingFeatures = v.Kind, v.Sentence, v.Coverage, v.FailingFeatures
}

// selected reports whether any spec of a cell was selected (not left out by the filter).
func selected(c Cell) bool {
	for _, s := range c.Specs {
		if !(s.Outcome == Skipped && s.SkipReason == skipReason("")) {
			return true
		}
	}
	return false
}

// cosmosDifference is what a rule row says about Cosmos DB for Table: its expectation in one
// line and Cosmos's answer in words, or nothing where Cosmos answers as Storage does.
func cosmosDifference(r spec.Rule) string {
	if r.Cosmos.KindOrSame() == spec.CosmosSame {
		return r.CosmosDifference
	}
	return r.Cosmos.Summary() + ": " + r.Cosmos.Answer
}
