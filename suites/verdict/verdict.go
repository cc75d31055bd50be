package verdict

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tableconform/conform/reference/spec"
)

// Cell is a rule's result on one backend, from its specs' decisions: the worst outcome,
// except that a rule with specs that passed (or answered as the profile documents, or are
// not applicable) and selected specs that did not run (skipped, not run, interrupted) is
// partial: what did not run is not shown to hold, so the cell never counts as passed. A
// cell counts against the backend when any of its specs does, and is unexpected when any
// of them is, whatever outcome it shows.
func Cell(specs []Decision) Decision {
	c := Decision{Outcome: NotRun}
	unrun, held := false, false
	for _, s := range specs {
		if !s.Selected {
			continue // left out by the filter: not part of what the verdict covers
		}
		c.Selected = true
		c.Against = c.Against || s.Against
		c.Unexpected = c.Unexpected || s.Unexpected
		switch s.Outcome {
		case Skipped, NotRun, Interrupted:
			unrun = true
		case Pass, Info, DocumentedDiff, NotApplicable:
			held = true
		}
		if Worse(s.Outcome, c.Outcome) {
			c.Outcome = s.Outcome
		}
	}
	if !c.Selected && len(specs) > 0 {
		c.Outcome = Skipped
	}
	if unrun && held && !Worse(c.Outcome, Partial) {
		c.Outcome = Partial
	}
	return c
}

// Kind is the kind of a backend's verdict.
type Kind string

// The verdicts.
const (
	Conforms        Kind = "conforms"         // every applicable MUST rule of the catalogue ran and passed
	ConformsOn      Kind = "conforms-on"      // every MUST rule that ran passed, but not all of them ran (filter, skips, blocks)
	ConformsToCore  Kind = "conforms-to-core" // only MUST rules of extended features fail
	DoesNotConform  Kind = "does-not-conform" // a core MUST rule fails
	Inconclusive    Kind = "inconclusive"     // nothing fails, but some specs got no answer
	KindInterrupted Kind = "interrupted"      // the run did not finish (a signal, its timeout, a selected spec not started)
	KindNotRun      Kind = "not-run"          // the backend could not be started
)

// Coverage says which MUST rules a verdict covers.
type Coverage struct {
	// MustRules is the number of MUST rules in the catalogue.
	MustRules int `json:"mustRules"`
	// Selected is the number of MUST rules with at least one spec selected (not left out
	// by the filter).
	Selected int `json:"selected"`
	// Passed is the number of selected MUST rules whose every spec ran and passed, or
	// answered as the profile documents (also where the baseline expected a failure).
	Passed int `json:"passed"`
	// Failing is the number of selected MUST rules that fail (against the backend).
	Failing int `json:"failing"`
	// FailingUnexpected is how many of the failing rules fail in a way the baseline does
	// not list.
	FailingUnexpected int `json:"failingUnexpected,omitempty"`
	// FailingExtended is how many of the failing rules belong to extended features
	// (spec.Rule.Feature); the others are core rules.
	FailingExtended int `json:"failingExtended,omitempty"`
	// NotApplicable is the number of selected MUST rules the profile does not support.
	NotApplicable int `json:"notApplicable,omitempty"`
	// Unjudged is the number of selected MUST rules neither passed, failing nor not
	// applicable (skipped, partly run, blocked, no answer, interrupted).
	Unjudged int `json:"unjudged"`
	// Core counts the core MUST rules alone (the same fields, over spec.Core's rules):
	// "conforms to core" is said only when every applicable one of them ran and passed.
	Core CoreCoverage `json:"core,omitzero"`
	// Filter is the label filter of the run, if any.
	Filter string `json:"filter,omitempty"`
}

// CoreCoverage counts the core MUST rules: in the catalogue, selected, passed (or
// answered as the profile documents), and not applicable to the profile.
type CoreCoverage struct {
	MustRules     int `json:"mustRules"`
	Selected      int `json:"selected"`
	Passed        int `json:"passed"`
	NotApplicable int `json:"notApplicable,omitempty"`
}

// Partial reports whether the verdict covers only a selection of the catalogue's MUST
// rules (a filter, or a run of some rules only).
func (c Coverage) Partial() bool { return c.Selected < c.MustRules }

// complete reports whether every core MUST rule that applies to the profile ran and
// passed.
func (c CoreCoverage) complete() bool {
	return c.MustRules > 0 && c.Selected == c.MustRules && c.Passed == c.MustRules-c.NotApplicable
}

// RuleCell is one rule's cell on a backend, as Judge reads it.
type RuleCell struct {
	Rule spec.Rule
	Cell Decision
}

// Backend is what Judge knows of a backend's run beside its cells.
type Backend struct {
	// StartError is set when the backend could not be started or reached.
	StartError string
	// Interrupted is true when the run did not finish: a signal, its timeout or an abort
	// stopped it, or a selected spec never started.
	Interrupted bool
	// StoppedBy says why, when Ginkgo recorded it (its special failure reasons).
	StoppedBy []string
	// StoppedAnswering is when the backend stopped answering (RFC 3339), when its run was
	// stopped for it before its end: the specs that ran before are judged, the others did
	// not run.
	StoppedAnswering string
	// Filter is the run's label filter.
	Filter string
	// Errors names the specs that got no answer (their count is len(Errors) unless
	// ErrorCount is larger).
	Errors     []string
	ErrorCount int
}

// Verdict is a backend's verdict: its kind, the sentence the report shows, and what it
// covers.
type Verdict struct {
	Kind            Kind
	Sentence        string
	Coverage        Coverage
	FailingFeatures []string
}

// Judge gives a backend its verdict over the MUST rules, and its sentence claims only what
// ran:
//
//   - "conforms" only when every MUST rule of the catalogue that applies to the profile
//     ran and passed (a documented difference of the profile is a pass; a rule the profile
//     does not support is neither passed nor failed);
//   - "conforms on" when every MUST rule that ran passed but fewer ran (a filter, skipped
//     or blocked specs), saying how many;
//   - "conforms to core" when only MUST rules of extended features fail and every core
//     MUST rule ran and passed; when some core rule did not run, core conformance is not
//     claimed and the backend does not conform;
//   - "does not conform" when a MUST rule fails, saying how many of the failing rules
//     belong to extended features and whether the baseline lists every one of them;
//   - "inconclusive" when none fails but specs got no answer, naming them.
//
// Whenever the verdict covers a selection only (Coverage.Partial), the sentence says so,
// with the filter; a filter that selects every MUST rule is named too.
func Judge(cells []RuleCell, b Backend) Verdict {
	if b.StartError != "" {
		return Verdict{Kind: KindNotRun, Sentence: "not run"}
	}
	cov := Coverage{Filter: b.Filter}
	stoppedEarly := b.Interrupted || b.StoppedAnswering != ""
	features := map[string]bool{}
	for _, rc := range cells {
		r, c := rc.Rule, rc.Cell
		if r.Level != spec.Must {
			continue
		}
		core := r.FeatureOrCore() == spec.Core
		cov.MustRules++
		if core {
			cov.Core.MustRules++
		}
		if !c.Selected && (b.Filter != "" || !stoppedEarly) {
			continue
		}
		// An unfiltered run selects every rule: one whose specs never ran because the run
		// stopped first (no process of it reported them) is not judged, not left out of a
		// selection (issue 34, item 10: "the verdict covers only the selection" on an
		// unfiltered, interrupted run).
		cov.Selected++
		if core {
			cov.Core.Selected++
		}
		switch {
		case c.Against:
			cov.Failing++
			if c.Unexpected {
				cov.FailingUnexpected++
			}
			if !core {
				cov.FailingExtended++
				features[string(r.Feature)] = true
			}
		case c.Outcome == Pass || c.Outcome == DocumentedDiff || c.Outcome == UnexpectedPass:
			// An unexpected pass behaved as the rule says; what it says of the baseline
			// fails the run (Exit), not the rule.
			cov.Passed++
			if core {
				cov.Core.Passed++
			}
		case c.Outcome == NotApplicable:
			cov.NotApplicable++
			if core {
				cov.Core.NotApplicable++
			}
		default:
			cov.Unjudged++
		}
	}
	v := Verdict{Coverage: cov}
	for f := range features {
		v.FailingFeatures = append(v.FailingFeatures, f)
	}
	sort.Strings(v.FailingFeatures)
	v.Kind, v.Sentence = sentence(cov, v.FailingFeatures, b)
	switch {
	case cov.Partial():
		v.Sentence += "; " + selectionOnly(cov)
	case cov.Filter != "":
		v.Sentence += " (filter " + cov.Filter + ", which selects every MUST rule)"
	}
	switch {
	case b.StoppedAnswering != "":
		// The specs the stop left are not run, which makes the run one that did not finish;
		// why it did not is the backend's going, so the verdict is inconclusive (exit 3).
		v.Kind = Inconclusive
		v.Sentence = "inconclusive: the backend stopped answering at " + b.StoppedAnswering + ", so its run stopped before its end; so far " + v.Sentence
	case b.Interrupted:
		v.Kind = KindInterrupted
		why := ""
		if len(b.StoppedBy) > 0 {
			why = " (" + strings.Join(b.StoppedBy, "; ") + ")"
		}
		v.Sentence = "interrupted" + why + ": the run stopped before its end; so far " + v.Sentence
	}
	return v
}

// sentence is the verdict's kind and its sentence, before what a selection adds. Every
// sentence that counts rules counts them over one denominator, the applicable MUST rules
// (those selected, less those the profile does not support): passed, failing and not
// judged add up to it.
func sentence(cov Coverage, features []string, b Backend) (Kind, string) {
	applicable := cov.Selected - cov.NotApplicable
	rules := fmt.Sprintf("%d applicable MUST rules", applicable)
	if cov.Partial() {
		rules = fmt.Sprintf("the %d selected applicable MUST rules", applicable)
	}
	notApplicable := ""
	if cov.NotApplicable > 0 {
		notApplicable = fmt.Sprintf(" (%d not applicable to the profile)", cov.NotApplicable)
	}
	errors := b.ErrorCount
	if errors < len(b.Errors) {
		errors = len(b.Errors)
	}
	unjudged := ""
	if cov.Unjudged > 0 {
		why := []string{"skipped", "partly run", "blocked"}
		if errors > 0 {
			why = append(why, "no answer")
		}
		if b.Interrupted {
			why = append(why, "interrupted")
		}
		last := len(why) - 1
		unjudged = fmt.Sprintf("; %d applicable MUST rules not judged (%s or %s)", cov.Unjudged, strings.Join(why[:last], ", "), why[last])
	}
	passed := fmt.Sprintf("passed %d of %s%s%s", cov.Passed, rules, notApplicable, unjudged)
	listed := ""
	if cov.Failing > 0 && cov.FailingUnexpected == 0 {
		listed = ", each as its baseline lists"
	}
	named := strings.Join(features, ", ")
	switch {
	case cov.Failing > 0 && cov.Failing == cov.FailingExtended && cov.Core.complete():
		return ConformsToCore, fmt.Sprintf("conforms to core: all %d core MUST rules ran and passed; %d MUST rules of extended features fail (%s)%s; %s",
			cov.Core.MustRules-cov.Core.NotApplicable, cov.Failing, named, listed, passed)
	case cov.Failing > 0 && cov.Failing == cov.FailingExtended:
		return DoesNotConform, fmt.Sprintf("does not conform: %d MUST rules of extended features fail (%s)%s; %s", cov.Failing, named, listed, passed)
	case cov.Failing > 0 && cov.FailingExtended > 0:
		return DoesNotConform, fmt.Sprintf("does not conform: %d MUST rules fail (%d core, %d of extended features: %s)%s; %s",
			cov.Failing, cov.Failing-cov.FailingExtended, cov.FailingExtended, named, listed, passed)
	case cov.Failing > 0:
		return DoesNotConform, fmt.Sprintf("does not conform: %d MUST rules fail%s; %s", cov.Failing, listed, passed)
	case errors > 0 && b.StoppedAnswering != "":
		// Judge says why; the specs without an answer are the backend's going.
		return Inconclusive, fmt.Sprintf("no MUST rule fails, but %d specs got no answer; %s", errors, passed)
	case errors > 0:
		return Inconclusive, fmt.Sprintf("inconclusive: no MUST rule fails, but %d specs got no answer (transport errors: %s); %s", errors, someErrors(b.Errors, errors), passed)
	case cov.Passed == applicable && applicable > 0 && !cov.Partial():
		return Conforms, fmt.Sprintf("conforms: all %s ran and passed%s", rules, notApplicable)
	case cov.Passed == 0 && cov.Unjudged == 0:
		// Nothing judged (a filter of SHOULD and MAY rules only): nothing is claimed.
		return ConformsOn, "no MUST rule judged, so no conformance is claimed" + notApplicable
	case cov.Passed == applicable:
		return ConformsOn, fmt.Sprintf("conforms on %s%s", rules, notApplicable)
	}
	return ConformsOn, fmt.Sprintf("conforms on %d of %s%s%s", cov.Passed, rules, notApplicable, unjudged)
}

// Bounds of the transport errors a verdict's sentence names: a dead backend's hundreds of
// errors once made a summary line of thousands of characters (issue 31).
const (
	sentenceErrors   = 3
	sentenceErrorLen = 120
)

// someErrors names the first sentenceErrors of errors, each cut at sentenceErrorLen
// characters, then how many more there are of all.
func someErrors(errors []string, all int) string {
	var named []string
	for i, e := range errors {
		if i == sentenceErrors {
			break
		}
		if len(e) > sentenceErrorLen {
			e = e[:sentenceErrorLen] + "..."
		}
		named = append(named, e)
	}
	s := strings.Join(named, "; ")
	if more := all - len(named); more > 0 {
		s += fmt.Sprintf("; and %d more", more)
	}
	return s
}

// selectionOnly says that a verdict covers only the selected MUST rules, which, and how
// many the filter left out.
func selectionOnly(cov Coverage) string {
	s := fmt.Sprintf("the verdict covers only the selection, %d of the catalogue's %d MUST rules", cov.Selected, cov.MustRules)
	if cov.Filter != "" {
		return s + fmt.Sprintf(" (filter %s); %d left out by the filter", cov.Filter, cov.MustRules-cov.Selected)
	}
	return s + fmt.Sprintf("; %d not selected", cov.MustRules-cov.Selected)
}

// Exit statuses of `conform run` and `conform replay`.
const (
	ExitOK           = 0
	ExitFailed       = 1
	ExitUsage        = 2
	ExitInconclusive = 3
	ExitInterrupted  = 130
)

// Tally is what Exit reads of one backend's run: its verdict's kind and the counts of the
// same judged backend (one function builds it from the report's backend), so that the
// exit status and the verdict never disagree.
type Tally struct {
	// Kind is the backend's verdict (Judge): KindNotRun when it could not be started or
	// reached, KindInterrupted when its run did not finish.
	Kind Kind
	// Unexpected counts the specs whose decision is unexpected (Decision.Unexpected).
	Unexpected int
	// BaselineProblems counts what the baseline says that the run showed untrue (stale
	// entries, a rule-level entry whose rule passed).
	BaselineProblems int
	// Errors counts the specs that got no answer.
	Errors int
	// StoppedAnswering is true when the backend stopped answering and its run was stopped
	// for it (Backend.StoppedAnswering).
	StoppedAnswering bool
}

// Exit is the exit status of `conform run` over its backends' verdicts: 2 when one could
// not be started or reached; 130 when a run did not finish (interrupted, cut by its
// timeout, a selected spec never started); 3 when a backend stopped answering and its run
// was stopped for it (the verdict is inconclusive, whatever the specs before showed); 1
// when anything is unexpected (unless the run rewrites the baselines, which makes failures
// expected); 3 when some spec got no answer; 0 only when everything selected ran and met
// the baseline and the profile.
func Exit(backends []Tally, updatingBaseline bool) int {
	failed, errored, interrupted, stopped := false, false, false, false
	for _, b := range backends {
		if b.Kind == KindNotRun {
			return ExitUsage
		}
		interrupted = interrupted || b.Kind == KindInterrupted
		stopped = stopped || b.StoppedAnswering
		failed = failed || b.Unexpected+b.BaselineProblems > 0
		errored = errored || b.Errors > 0 || b.Kind == Inconclusive
	}
	switch {
	case interrupted:
		return ExitInterrupted
	case stopped:
		return ExitInconclusive
	case failed && !updatingBaseline:
		return ExitFailed
	case errored:
		return ExitInconclusive
	}
	return ExitOK
}

// UnexpectedSentence says how many specs were not as the baseline and the profile expect
// and what that does to the run, as Exit decides it: each fails the run, except in a run
// that rewrites the baselines (--update-baseline), which records them instead (issue 34,
// item 10: "each fails the run" above an exit status 0).
func UnexpectedSentence(n int, updatingBaseline bool) string {
	specs := fmt.Sprintf("%d specs", n)
	if n == 1 {
		specs = "1 spec"
	}
	if updatingBaseline {
		return specs + " not as the baseline and the profile expect: --update-baseline rewrites the baseline to expect them, so they do not fail this run"
	}
	return specs + " not as the baseline and the profile expect (each fails the run)"
}

// Replay is what ReplayExit reads of a replay.
type Replay struct {
	Agree, Disagree int
	// Stopped says why the replay stopped before its last recording, if it did.
	Stopped string
}

// ReplayExit is the exit status of `conform replay`: 1 when an exchange disagrees; 3
// (inconclusive) when it stopped early or compared no exchange at all; 0 only when every
// recording was replayed and at least one exchange was compared, and all agreed.
func ReplayExit(r Replay) int {
	switch {
	case r.Disagree > 0:
		return ExitFailed
	case r.Stopped != "" || r.Agree == 0:
		return ExitInconclusive
	}
	return ExitOK
}
