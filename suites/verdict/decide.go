package verdict

import (
	"fmt"
	"slices"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
)

// State is what happened to a spec, as its runner saw it.
type State string

// The states of a spec's run. One vocabulary: a state is State*, a verdict Kind*, an
// outcome (Outcome) bare; "interrupted" is StateInterrupted, KindInterrupted and Interrupted.
const (
	// StatePassed: the spec's body ran to its end and every assertion held.
	StatePassed State = "passed"
	// StateFailed: the backend answered, and an assertion on the answer failed (an answer that
	// could not be read is an answer).
	StateFailed State = "failed"
	// StateBlocked: a precondition failed: a step the spec relies on, which another rule
	// (Result.BlockedBy) covers, so the spec's own subject never ran.
	StateBlocked State = "blocked"
	// StateNoAnswer: a call got no answer (transport error, timeout, throttling that outlasted
	// its retries), or the spec itself timed out or panicked.
	StateNoAnswer State = "no-answer"
	// StateNotExpressible: the driver could not send a request the spec needs.
	StateNotExpressible State = "not-expressible"
	// StateSkipped: the backend lacks a capability the spec needs.
	StateSkipped State = "skipped"
	// StateLeftOut: the run's label filter or selection left the spec out.
	StateLeftOut State = "left-out"
	// StateInterrupted: the run was interrupted while the spec ran.
	StateInterrupted State = "interrupted"
	// StateNotStarted: the run's selection holds the spec, but the run stopped (a signal, its
	// timeout, an abort: any special failure reason Ginkgo records) before it started.
	StateNotStarted State = "not-started"
)

// Result is what a spec's run produced: its state and typed evidence.
type Result struct {
	State State `json:"state"`
	// Signature is what a failure looked like (StateFailed, StateBlocked).
	Signature fixtures.Signature `json:"signature,omitzero"`
	// BlockedBy is the rule whose precondition failed (StateBlocked).
	BlockedBy string `json:"blockedBy,omitempty"`
	// Choices is how many choices among allowed behaviours the spec recorded.
	Choices int `json:"choices,omitempty"`
	// Failure is the failure's message, kept as evidence (Decide does not read it).
	Failure string `json:"failure,omitempty"`
	// Answers are the error answers (status and code) the spec saw before it failed or was
	// blocked, oldest first, raw HTTP exchanges included: a server error among them is never
	// a profile's answer.
	Answers []fixtures.Signature `json:"answers,omitempty"`
	// Check is the named check (the spec's F.Check) whose assertion failed, "" when the
	// failing assertion was in none: a profile's difference of shape excuses that check
	// only (Expectation.Check).
	Check string `json:"check,omitempty"`
}

// ExpectationKind is what a profile expects of a rule, compared with Azure Table Storage.
type ExpectationKind string

// The kinds of expectation.
const (
	// SameAsStorage: the profile answers as Storage does (the spec as written).
	SameAsStorage ExpectationKind = "same"
	// Differs: the profile answers differently, as Expectation.Answer records.
	Differs ExpectationKind = "differs"
	// NotSupported: the profile does not support the rule's feature; the backend refuses
	// it (501 NotImplemented or 405 MethodNotAllowed unless Expectation.Answer says
	// otherwise), and the rule is not applicable.
	NotSupported ExpectationKind = "not-supported"
	// NotPromised: the profile promises nothing the rule could check (a limit it documents
	// otherwise and was never recorded at): the rule is not applicable, whatever the
	// backend answered but a server error.
	NotPromised ExpectationKind = "not-promised"
	// OrderNotPromised: the profile promises no order of results (Cosmos DB), and nothing
	// else of the rule differs: a failure of the spec's order check (Expectation.Check) is
	// the profile's answer; every other assertion (which entities come back, their values,
	// their pages) is judged as written, and a pass is a pass.
	OrderNotPromised ExpectationKind = "order-not-promised"
)

// Expectation is what a profile expects of one rule.
type Expectation struct {
	Kind ExpectationKind `json:"kind"`
	// Answer is the recorded different answer (Differs) or refusal (NotSupported): a
	// status and, when not empty, an error code, matched against the answer of the call
	// the spec failed on (its signature), never an earlier one. A Differs expectation with
	// a zero Answer is a difference of shape (a header, a format, an acceptance): it names
	// the check it excuses (Check).
	Answer fixtures.Signature `json:"answer,omitzero"`
	// Check names the spec check (F.Check) whose failure is the difference, for a
	// difference of shape and for OrderNotPromised (the order check): a failure of any
	// other assertion is a failure. A difference of shape without a Check excuses nothing.
	Check string `json:"check,omitempty"`
	// StorageAllowed is true when a backend that answers as Storage does also meets the
	// profile (a difference the profile allows rather than requires, e.g. unsorted
	// results).
	StorageAllowed bool `json:"storageAllowed,omitempty"`
	// Difference says the difference in words, with its evidence.
	Difference string `json:"difference,omitempty"`
}

// Storage is the expectation of the storage profile, for every rule.
var Storage = Expectation{Kind: SameAsStorage}

// The profiles.
const (
	ProfileStorage = "storage"
	ProfileCosmos  = "cosmos"
)

// ExpectationOf is what profile expects of the spec of rule r whose text is specText: the
// storage profile (and "") expects Storage's answer; the cosmos profile reads the rule's
// Cosmos expectation from the catalogue (spec.Cosmos: the same, a recorded or documented
// different answer, not supported, not promised; reference/spec/cosmos.go), which may
// concern some of the rule's specs only. The catalogue holds the differences; this is the
// one place that turns them into expectations.
func ExpectationOf(r spec.Rule, profile, specText string) Expectation {
	if profile != ProfileCosmos {
		return Storage
	}
	c := r.Cosmos.For(specText)
	difference := c.Answer
	if c.Evidence != "" {
		difference += " (" + c.Evidence + ", " + c.Strength + ")"
	}
	switch c.KindOrSame() {
	case spec.CosmosDiffers:
		e := Expectation{Kind: Differs, Difference: difference, StorageAllowed: c.StorageToo}
		if len(c.Statuses) > 0 {
			e.Answer = fixtures.Signature{Status: c.Statuses[0], Code: c.Code}
		} else {
			e.Check = c.Check
		}
		return e
	case spec.CosmosUnsupported:
		e := Expectation{Kind: NotSupported, Difference: difference}
		if len(c.Statuses) == 1 {
			e.Answer = fixtures.Signature{Status: c.Statuses[0], Code: c.Code}
		}
		return e
	case spec.CosmosOrderUnpromised:
		return Expectation{Kind: OrderNotPromised, Check: c.Check, Difference: difference}
	case spec.CosmosUnpromised:
		return Expectation{Kind: NotPromised, Difference: difference}
	}
	return Storage
}

// answered reports whether the failure (or block) r is the answer e expects. A refusal (an
// expected status) must be the answer of the call the spec failed on (r.Signature, raw
// exchanges included): an error answer seen earlier, which the spec took in its stride, is
// not the subject's answer. A difference of shape, and an order not promised, must be a
// failure of the check e names. A server error that is not the expected refusal, seen
// anywhere in the spec, never is an expected answer.
func (e Expectation) answered(r Result) bool {
	got := r.Signature
	refused := func(a fixtures.Signature) bool {
		switch {
		case e.Answer.Status != 0:
			return a.Status == e.Answer.Status && (e.Answer.Code == "" || a.Code == e.Answer.Code)
		case e.Kind == NotSupported:
			return a.Status == 501 || a.Status == 405
		}
		return false
	}
	serverError := func(a fixtures.Signature) bool { return a.Status >= 500 && !refused(a) }
	if serverError(got) || slices.ContainsFunc(r.Answers, serverError) {
		return false
	}
	switch {
	case e.Kind == NotPromised:
		return true
	case e.Kind == OrderNotPromised, e.Kind == Differs && e.Answer.Status == 0:
		return e.Check != "" && r.Check == e.Check
	case e.Kind == Differs, e.Kind == NotSupported:
		return refused(got)
	}
	return false
}

// Decision is what a spec's outcome is, and what it means for the run.
type Decision struct {
	Outcome Outcome `json:"outcome"`
	// Against is true when the outcome counts against the backend's conformance: a
	// failure (listed in the baseline or not) of a MUST rule.
	Against bool `json:"against,omitempty"`
	// Unexpected is true when the outcome is not what the baseline and the profile expect:
	// a failure not listed, listed with another signature, a pass of a listed spec, a
	// block not listed. An unexpected outcome fails the run (exit status 1).
	Unexpected bool `json:"unexpected,omitempty"`
	// Selected is false when the run's filter left the spec out: it is not part of what
	// the verdict covers.
	Selected bool `json:"selected"`
	// Why says, when the baseline or the profile changed the outcome, how (the listed and
	// the new failure, the profile's difference, a baseline entry the profile makes
	// unnecessary).
	Why string `json:"why,omitempty"`
}

// Decide is a spec's outcome: from what happened to it (r), its rule's level, the
// profile's expectation of the rule and the backend's baseline entry for the spec (nil
// when none lists it). In order:
//
//   - left out, skipped, not expressible, interrupted, not started: not judged (a spec
//     not started is selected: it is "not run", and the run did not finish); no answer:
//     an error, whatever the baseline lists;
//   - blocked: blocked by the rule named, expected only when the baseline lists the spec
//     as blocked by that rule;
//   - failed: the profile's documented answer is a documented difference (or, for a
//     feature the profile does not support, not applicable), whatever the baseline says;
//     else a failure the baseline lists with the same signature is an expected failure
//     (flaky when the entry is), any other a failure;
//   - passed: a profile that requires a different answer fails it; a flaky entry leaves it
//     a pass (Why says the baseline lists it as flaky), a spec-level entry makes it an
//     unexpected pass; a non-MUST rule that recorded a
//     choice is information.
//
// A baseline entry without a signature matches no failure: it says nothing a failure
// could be checked against.
func Decide(r Result, level spec.Level, exp Expectation, entry *fixtures.ExpectedFailure) Decision {
	d := decide(r, level, exp, entry)
	d.Selected = r.State != StateLeftOut
	d.Against = d.Outcome.Describe().AgainstBackend && level == spec.Must
	return d
}

func decide(r Result, level spec.Level, exp Expectation, entry *fixtures.ExpectedFailure) Decision {
	switch r.State {
	case StateLeftOut, StateSkipped, StateNotExpressible:
		return Decision{Outcome: Skipped}
	case StateInterrupted:
		return Decision{Outcome: Interrupted}
	case StateNotStarted:
		return Decision{Outcome: NotRun}
	case StateNoAnswer:
		return Decision{Outcome: Error}
	case StateBlocked:
		if (exp.Kind == NotSupported || exp.Kind == NotPromised) && exp.answered(r) {
			// Blocked by the profile's refusal of the feature, or where it promises nothing.
			return Decision{Outcome: NotApplicable, Why: exp.Difference}
		}
		if exp.Kind == Differs && exp.Answer.Status != 0 && exp.answered(r) {
			// Blocked by the very refusal the profile records (an empty key refused while
			// the spec loads its data): the profile's answer.
			return Decision{Outcome: DocumentedDiff, Why: exp.Difference}
		}
		if entry != nil && entry.Blocked != "" && entry.Blocked == r.BlockedBy {
			return Decision{Outcome: Blocked, Why: "the baseline lists it as blocked by " + r.BlockedBy}
		}
		d := Decision{Outcome: Blocked, Unexpected: true}
		if entry != nil {
			d.Why = fmt.Sprintf("the baseline lists %s; now blocked by %s", listed(*entry), r.BlockedBy)
		}
		return d
	case StateFailed:
		return decideFailure(r, exp, entry)
	case StatePassed:
		return decidePass(r, level, exp, entry)
	}
	return Decision{Outcome: Error, Why: fmt.Sprintf("unknown state %q", r.State)}
}

func decideFailure(r Result, exp Expectation, entry *fixtures.ExpectedFailure) Decision {
	sig := r.Signature
	if exp.answered(r) {
		d := Decision{Outcome: DocumentedDiff, Why: exp.Difference}
		if exp.Kind == NotSupported || exp.Kind == NotPromised {
			d.Outcome = NotApplicable
		}
		if entry != nil {
			d.Why += " (the baseline's entry for it is not needed under this profile)"
		}
		return d
	}
	switch {
	case entry == nil:
		d := Decision{Outcome: Fail, Unexpected: true}
		if exp.Kind != SameAsStorage {
			d.Why = "the profile expects " + exp.describe() + "; got " + sig.String()
		}
		return d
	case entry.Blocked != "" || !entry.Signature.Matches(sig):
		return Decision{Outcome: Fail, Unexpected: true, Why: fmt.Sprintf("the baseline lists %s; now %s", listed(*entry), sig)}
	case entry.Flaky:
		return Decision{Outcome: Flaky, Why: "flaky on this backend: " + entry.Reason}
	}
	return Decision{Outcome: ExpectedFail, Why: entry.Evidence}
}

func decidePass(r Result, level spec.Level, exp Expectation, entry *fixtures.ExpectedFailure) Decision {
	switch {
	case exp.Kind == Differs && !exp.StorageAllowed:
		return Decision{Outcome: Fail, Unexpected: true, Why: "answered as Azure Table Storage does; the profile expects " + exp.describe()}
	case exp.Kind == NotSupported:
		return Decision{Outcome: Fail, Unexpected: true, Why: "served a feature the profile does not support; the profile expects " + exp.describe()}
	case exp.Kind == NotPromised:
		// What the profile does not promise is never counted as passed.
		return Decision{Outcome: NotApplicable, Why: exp.Difference}
	case entry != nil && entry.Flaky:
		// Issue 31, item 10: a listed flaky spec that passed met its rule.
		return Decision{Outcome: Pass, Why: "the baseline lists it as flaky on this backend: " + entry.Reason}
	case entry != nil && entry.Spec != "":
		return Decision{Outcome: UnexpectedPass, Unexpected: true, Why: "the baseline lists " + listed(*entry)}
	case r.Choices > 0 && level != spec.Must:
		return Decision{Outcome: Info}
	}
	return Decision{Outcome: Pass}
}

// listed says what a baseline entry expects.
func listed(e fixtures.ExpectedFailure) string {
	if e.Blocked != "" {
		return "it as blocked by " + e.Blocked
	}
	s := "it as failing with " + e.Signature.String()
	if e.Evidence != "" {
		s += " (" + e.Evidence + ")"
	}
	return s
}

func (e Expectation) describe() string {
	s := string(e.Kind)
	if e.Answer != (fixtures.Signature{}) {
		s += " " + e.Answer.String()
	}
	if e.Check != "" {
		s += " in its " + e.Check + " check"
	}
	if e.Difference != "" {
		s += " (" + e.Difference + ")"
	}
	return s
}
