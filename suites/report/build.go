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
	"github.com/tableconform/conform/suites/driver/record"
	"github.com/tableconform/conform/suites/framework"
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
			c.Outcome = cellOutcome(c.Specs)
			cells[id] = append(cells[id], *c)
		}
		b.Coverage.Filter = run.Filter
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

// classify decides one spec's outcome from its state and the typed entries the framework
// attached (never from the text of its failure), and gathers its evidence.
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
	if s.State.Is(types.SpecStateFailureStates) || s.State == types.SpecStateSkipped {
		res.Failure = msg
		if s.Failure.Location.FileName != "" {
			res.Location = fmt.Sprintf("%s:%d", shortPath(s.Failure.Location.FileName), s.Failure.Location.LineNumber)
		}
	}
	var sig fixtures.Signature
	if entryValue(s, framework.EntrySignature, &sig) && !sig.IsZero() {
		res.Signature = &sig
	}
	var flaky framework.FlakyEntry
	isFlaky := entryValue(s, framework.EntryFlaky, &flaky)
	var blocked framework.BlockedEntry
	var changed framework.ChangedFailureEntry
	var unexpected framework.UnexpectedPassEntry
	var notExpressible framework.TransportEntry
	switch {
	case s.State == types.SpecStatePassed:
		res.Outcome = Pass
		var e framework.ExpectedEntry
		if entryValue(s, framework.EntryExpected, &e) {
			res.Outcome, res.Evidence, res.Failure = ExpectedFail, e.Evidence, e.Failure
		}
		if isFlaky {
			res.Outcome = Flaky
			res.Notes = append(res.Notes, "flaky on this backend: "+flaky.Reason)
		}
		if res.Outcome == Pass && len(res.Choices) > 0 {
			if rule.Level == spec.Must {
				// A MUST rule's choice is a note on a pass, never information.
				res.Notes = append(res.Notes, res.Choices...)
			} else {
				res.Outcome = Info
			}
		}
	case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
		res.Outcome, res.SkipReason, res.Failure = Skipped, skipReason(msg), ""
	case s.State == types.SpecStateInterrupted || s.State == types.SpecStateAborted:
		res.Outcome = Interrupted
	case s.State == types.SpecStateFailed && len(s.AdditionalFailures) == 0 && entryValue(s, framework.EntryNotExpressible, &notExpressible):
		// The driver's client could not send the request (EVIDENCE.md 12): not the backend's.
		res.Outcome, res.SkipReason, res.Failure = Skipped, "the driver cannot send this request: "+notExpressible.Error, ""
	case entryValue(s, framework.EntryUnexpectedPass, &unexpected):
		res.Outcome, res.PreviousEvidence = UnexpectedPass, unexpected.Evidence
	case entryValue(s, framework.EntryChangedFailure, &changed):
		res.Outcome = Fail
		res.PreviousEvidence = fmt.Sprintf("the baseline listed %s (%s); now %s", changed.Old, changed.OldEvidence, changed.New)
	case entryValue(s, framework.EntryBlocked, &blocked):
		res.Outcome, res.BlockedBy = Blocked, blocked.Rule
	case hasEntry(s, framework.EntryTransport) || s.State == types.SpecStateTimedout || s.State == types.SpecStatePanicked:
		res.Outcome = Error
	default:
		res.Outcome = Fail
	}
	if c := rule.Cosmos.For(res.Text); profile == ProfileCosmos && c.KindOrSame() != spec.CosmosSame {
		var note string
		var answers []record.Answer
		entryValue(s, framework.EntryErrorAnswers, &answers)
		res.Outcome, note = judgeCosmos(c, res.Outcome, res.Signature, answers)
		if note != "" {
			res.Difference = note
		}
	}
	return res
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
	switch res.Outcome {
	case NotApplicable:
		c.NotApplicable++
		return
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
	}
}

// cellOutcome is a rule's outcome on a backend from its specs' outcomes: the worst of them;
// a rule with specs that passed and specs that were skipped (not by the filter) is partial,
// never pass.
func cellOutcome(specs []SpecResult) Outcome {
	out := NotRun
	skipped, passed := false, false
	for _, s := range specs {
		switch {
		case s.Outcome == Skipped && s.SkipReason == skipReason(""):
			continue // left out by the filter: not part of what the verdict covers
		case s.Outcome == Skipped:
			skipped = true
		case s.Outcome == Pass || s.Outcome == Info:
			passed = true
		}
		if Worse(s.Outcome, out) {
			out = s.Outcome
		}
	}
	if out == NotRun && len(specs) > 0 {
		out = Skipped
	}
	if skipped && passed && (out == Pass || out == Info) {
		return Partial
	}
	return out
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

// judge gives backend bi its verdict over the MUST rules: "conforms" only when every MUST
// rule of the catalogue ran and passed; when fewer ran (a filter, skipped specs) and all of
// those passed, "conforms on N of M MUST rules", saying what the verdict covers. Failing
// MUST rules (outcomes that count against the backend) make it "does not conform", or
// "conforms to core" when only extended features fail; with none failing, specs without an
// answer make it "inconclusive", naming them. Documented differences of the profile do not
// count against it.
func judge(b *Backend, rules []spec.Rule, cells map[string][]Cell, bi int, interrupted bool) {
	if b.StartError != "" {
		b.VerdictKind, b.Verdict = VerdictNotRun, "not run"
		return
	}
	cov := Coverage{Filter: b.Coverage.Filter}
	coreOK := true
	features := map[string]bool{}
	for _, r := range rules {
		if r.Level != spec.Must {
			continue
		}
		c := cells[r.ID][bi]
		if c.Outcome == NotApplicable {
			cov.NotApplicable++ // outside what the profile promises: neither passed nor counted
			continue
		}
		cov.MustRules++
		if !selected(c) {
			continue
		}
		cov.Selected++
		switch {
		case c.Outcome == Pass:
			cov.Passed++
		case c.Outcome.Describe().AgainstBackend:
			cov.Failing++
			if r.FeatureOrCore() == spec.Core {
				coreOK = false
			} else {
				features[string(r.Feature)] = true
			}
		case c.Outcome == DocumentedDiff:
			cov.Passed++ // documented for the profile: not against the backend
		default:
			cov.Unjudged++
		}
	}
	b.Coverage = cov
	for f := range features {
		b.FailingFeatures = append(b.FailingFeatures, f)
	}
	sort.Strings(b.FailingFeatures)
	scope := ""
	if cov.Filter != "" {
		scope = " (filter " + cov.Filter + ")"
	}
	switch {
	case cov.Failing > 0 && coreOK:
		b.VerdictKind = ConformsToCore
		b.Verdict = fmt.Sprintf("conforms to core: %d MUST rules of extended features fail; passed %d of %d%s", cov.Failing, cov.Passed, cov.Selected, scope)
	case cov.Failing > 0:
		b.VerdictKind = DoesNotConform
		b.Verdict = fmt.Sprintf("does not conform: %d MUST rules fail; passed %d of %d%s", cov.Failing, cov.Passed, cov.Selected, scope)
	case b.Counts.Errors > 0:
		b.VerdictKind = Inconclusive
		b.Verdict = fmt.Sprintf("inconclusive: no MUST rule fails, but %d specs got no answer (transport errors: %s)", b.Counts.Errors, strings.Join(b.Errors, "; "))
	case cov.Passed == cov.MustRules && cov.MustRules > 0:
		b.VerdictKind, b.Verdict = Conforms, fmt.Sprintf("conforms: all %d MUST rules ran and passed", cov.MustRules)
		if cov.NotApplicable > 0 {
			b.Verdict += fmt.Sprintf(" (%d MUST rules not applicable to the %s profile)", cov.NotApplicable, b.Profile)
		}
	default:
		b.VerdictKind = ConformsOn
		b.Verdict = fmt.Sprintf("conforms on %d of %d MUST rules%s", cov.Passed, cov.MustRules, scope)
		if cov.Unjudged > 0 {
			b.Verdict += fmt.Sprintf("; %d selected MUST rules not judged (skipped, partial or blocked)", cov.Unjudged)
		}
	}
	if interrupted {
		b.VerdictKind = VerdictStopped
		b.Verdict = "interrupted: the run stopped before its end; so far " + b.Verdict
	}
}
