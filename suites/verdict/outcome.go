package verdict

// Outcome is the result of a spec, or of a rule on one backend.
type Outcome string

// The outcomes a spec or a cell can show; Outcomes describes each.
const (
	Pass           Outcome = "pass"
	Fail           Outcome = "fail"
	Error          Outcome = "error"
	Blocked        Outcome = "blocked"
	Skipped        Outcome = "skipped"
	Partial        Outcome = "partial"
	ExpectedFail   Outcome = "expected-failure"
	Flaky          Outcome = "flaky"
	UnexpectedPass Outcome = "unexpected-pass"
	Info           Outcome = "info"
	DocumentedDiff Outcome = "documented-difference"
	NotApplicable  Outcome = "not-applicable"
	Interrupted    Outcome = "interrupted"
	NotRun         Outcome = "not-run"
)

// OutcomeInfo describes an outcome for the legend, the verdict and the comparison of runs.
type OutcomeInfo struct {
	Outcome Outcome `json:"outcome"`
	// Meaning is the legend's sentence.
	Meaning string `json:"meaning"`
	// AgainstBackend is true when the outcome, on a MUST rule, counts against the
	// backend's conformance.
	AgainstBackend bool `json:"againstBackend"`
	// NoAnswer is true when the rule's behaviour was not observed (nothing is known).
	NoAnswer bool `json:"noAnswer"`
	// severity orders outcomes when a rule's specs disagree: a cell shows its worst spec.
	// Every outcome that counts against the backend ranks above every one that does not,
	// except an unexpected pass (which says the baseline is stale).
	severity int
	// rank orders outcomes from good to bad for `conform report --diff`; comparable is
	// false for outcomes that judge nothing (no answer, blocked, skipped, not run).
	rank       int
	comparable bool
}

// Outcomes lists every outcome, from the least to the most severe.
var Outcomes = []OutcomeInfo{
	{NotRun, "the run stopped (a signal, its timeout) before the spec started, or no spec of the rule ran on this backend", false, true, 0, 0, false},
	{Skipped, "not run: the backend lacks a capability the rule needs, the driver cannot send the request, or a filter left it out", false, true, 1, 0, false},
	{Pass, "the backend behaves as the rule says (a MUST rule that records a choice shows it as a note)", false, false, 2, 0, true},
	{Info, "the documentation allows several behaviours (MAY or SHOULD); the cell says which one the backend chose", false, false, 3, 0, true},
	{NotApplicable, "the backend's profile does not support the feature, and the backend refused it as the profile documents (501 or 405): neither passed nor failed", false, false, 4, 1, true},
	{DocumentedDiff, "answers as the backend's profile documents where it differs from Azure Table Storage (e.g. Cosmos DB)", false, false, 5, 1, true},
	{Partial, "the specs that ran passed, but some of the rule's selected specs were skipped, not run or interrupted: the rule is not shown to hold", false, true, 6, 1, false},
	{Interrupted, "the run was interrupted while the spec ran", false, true, 7, 0, false},
	{Blocked, "not judged: something the spec relies on, which another rule covers (named), failed first, so this rule's subject never ran", false, true, 8, 0, false},
	{Error, "no answer: the connection dropped or timed out, or the service kept throttling (not a failure of the rule)", false, true, 9, 0, false},
	{Flaky, "the baseline lists the spec as flaky on this backend, with the reason, and it failed as listed (a listed flaky spec that passed is a pass, with a note)", true, false, 10, 2, true},
	{ExpectedFail, "fails, as the backend's checked-in baseline expects (with its evidence)", true, false, 11, 2, true},
	{Fail, "the backend answered, and the answer breaks the rule (also when the answer could not be read)", true, false, 12, 4, true},
	{UnexpectedPass, "passes although the baseline expects a failure: the baseline is stale", false, false, 13, 3, true},
}

// Describe returns o's description (the zero OutcomeInfo for an unknown outcome).
func (o Outcome) Describe() OutcomeInfo {
	for _, i := range Outcomes {
		if i.Outcome == o {
			return i
		}
	}
	return OutcomeInfo{Outcome: o}
}

// Worse reports whether a is worse than b (a cell shows its worst spec).
func Worse(a, b Outcome) bool { return a.Describe().severity > b.Describe().severity }

// Change is how a rule's cell changed between two runs.
type Change string

// The changes Compare tells apart.
const (
	Same          Change = "same"
	Improved      Change = "better"
	Regressed     Change = "worse"
	ChangedChoice Change = "changed-choice"
	Incomparable  Change = "incomparable"
	// BaselineEdited: the backend did the same both times, and only what its baseline
	// expects changed (a failure newly listed, a stale entry removed).
	BaselineEdited Change = "baseline-edited"
)

// behaviour is what the backend did, apart from what its baseline expects of it: "failed"
// for a failure, listed or not; "passed" for a pass, expected or not; "" otherwise.
func behaviour(o Outcome) string {
	switch o {
	case Fail, ExpectedFail, Flaky:
		return "failed"
	case Pass, UnexpectedPass:
		return "passed"
	}
	return ""
}

// Compare says how a cell changed from old to new, given what the backend did in each in
// words (its failure or recorded choices, masked of per-run values, without the outcome's
// own word; equal words are no change): a change from or to an outcome that judges nothing
// cannot be compared; a change between a failure and a listed failure with the same words,
// or between a pass and an unexpected pass, is the baseline's edit, not the backend's
// (issue 34, item 10: listed as "got better"); otherwise a higher rank is worse (a
// regression), a lower one better, and the same rank is a changed choice.
func Compare(old, new Outcome, oldWords, newWords string) Change {
	if old == new && oldWords == newWords {
		return Same
	}
	o, n := old.Describe(), new.Describe()
	switch {
	case !o.comparable || !n.comparable:
		return Incomparable
	case old != new && behaviour(old) != "" && behaviour(old) == behaviour(new) && (behaviour(old) == "passed" || oldWords == newWords):
		return BaselineEdited
	case n.rank > o.rank:
		return Regressed
	case n.rank < o.rank:
		return Improved
	}
	return ChangedChoice
}

// Comparable reports whether o judges something, so that a change from or to it can be
// compared.
func Comparable(o Outcome) bool { return o.Describe().comparable }
