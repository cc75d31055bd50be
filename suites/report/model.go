package report

import (
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
)

// Schema identifies the format of report.json.
const Schema = "conform.report/v1"

// Outcome is the result of a spec, or of a rule on one backend.
type Outcome string

// The outcomes a spec or cell can show; Outcomes describes each.
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
	Interrupted    Outcome = "interrupted"
	NotRun         Outcome = "not-run"
	NotApplicable  Outcome = "not-applicable"
)

// OutcomeInfo describes an outcome for the legend and the verdict.
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
	severity int
}

// Outcomes lists every outcome, from the least to the most severe.
var Outcomes = []OutcomeInfo{
	{NotRun, "no spec of the rule ran on this backend", false, true, 0},
	{NotApplicable, "not applicable to the backend's profile: the feature is not supported there (and the backend refused it as that service does) or the service promises nothing here; never counted as passed", false, true, 1},
	{Skipped, "not run: the backend lacks a capability the rule needs, the driver cannot send the request, or a filter left it out", false, true, 1},
	{Pass, "the backend behaves as the rule says (a MUST rule that records a choice shows it as a note)", false, false, 2},
	{Info, "the documentation allows several behaviours (MAY or SHOULD); the cell says which one the backend chose", false, false, 3},
	{Partial, "the specs that ran passed, but some of the rule's specs were skipped: the rule is not shown to hold", false, true, 4},
	{Flaky, "the baseline lists the spec as flaky on this backend, with the reason: it passed or failed as listed", true, false, 5},
	{ExpectedFail, "fails, as the backend's checked-in baseline expects (with its evidence)", true, false, 6},
	{DocumentedDiff, "fails, and Microsoft documents this difference for the backend's profile (e.g. Cosmos DB)", false, false, 7},
	{Interrupted, "the run was interrupted before or while the spec ran", false, true, 8},
	{Blocked, "not judged: the spec's setup failed on a behaviour another rule covers (named), so this rule never ran", false, true, 9},
	{Error, "no answer: the connection dropped or timed out (a transport error, not a failure of the rule)", false, true, 10},
	{Fail, "the backend answered, and the answer breaks the rule (also when the answer could not be read)", true, false, 11},
	{UnexpectedPass, "passes although the baseline expects a failure: the baseline is stale", false, false, 12},
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

// Worse reports whether a is worse than b.
func Worse(a, b Outcome) bool { return a.Describe().severity > b.Describe().severity }

// Run is one backend's raw result, as the process that ran it writes it.
type Run struct {
	Backend    driver.Info `json:"backend"`
	Profile    string      `json:"profile"`
	Command    string      `json:"command"`
	StartError string      `json:"startError,omitempty"`
	// Filter is the label filter the run was given.
	Filter string `json:"filter,omitempty"`
	// Interrupted is true when the run was stopped by a signal before its end.
	Interrupted bool         `json:"interrupted,omitempty"`
	Ginkgo      types.Report `json:"ginkgo"`
}

// Report is the conformance report: every backend of a run side by side.
type Report struct {
	Schema    string      `json:"schema"`
	Conform   string      `json:"conformVersion"`
	Generated time.Time   `json:"generated"`
	Command   string      `json:"command"`
	Backends  []Backend   `json:"backends"`
	Rules     []RuleRow   `json:"rules"`
	Legend    []LegendRow `json:"legend"`
	// Corpus is each backend's agreement with the recorded real traffic (corpus.go).
	Corpus []CorpusAgreement `json:"corpus,omitempty"`
}

// Backend is one backend's column: what it is and how it did.
type Backend struct {
	driver.Info
	Profile    string    `json:"profile"`
	Date       time.Time `json:"date"`
	Command    string    `json:"command"`
	StartError string    `json:"startError,omitempty"`
	// Verdict says, in words, whether the backend conforms (for the profile) and what the
	// verdict covers: "conforms", "conforms on 23 of 303 MUST rules (filter ...)",
	// "conforms to core", "does not conform", "inconclusive: ...", "interrupted: ...",
	// "not run". VerdictKind is its first part as data.
	Verdict     string      `json:"verdict"`
	VerdictKind VerdictKind `json:"verdictKind"`
	// Coverage is what the verdict covers.
	Coverage Coverage `json:"coverage"`
	// Errors names the specs without an answer (transport errors), at most 20.
	Errors []string `json:"errors,omitempty"`
	// Interrupted is true when the run of this backend was interrupted.
	Interrupted bool `json:"interrupted,omitempty"`
	// FailingFeatures lists the extended features with failing MUST rules.
	FailingFeatures []string `json:"failingFeatures,omitempty"`
	// BaselineMet is true when every failure is in the baseline and no entry passed.
	BaselineMet bool   `json:"baselineMet"`
	Counts      Counts `json:"counts"`
}

// VerdictKind is the kind of a backend's verdict.
type VerdictKind string

// The verdicts.
const (
	Conforms       VerdictKind = "conforms"         // every MUST rule of the catalogue ran and passed
	ConformsOn     VerdictKind = "conforms-on"      // every MUST rule that ran passed, but not all of them ran (filter, skips)
	ConformsToCore VerdictKind = "conforms-to-core" // only MUST rules of extended features fail
	DoesNotConform VerdictKind = "does-not-conform" // a core MUST rule fails
	Inconclusive   VerdictKind = "inconclusive"     // nothing fails, but some specs got no answer
	VerdictStopped VerdictKind = "interrupted"      // the run was interrupted
	VerdictNotRun  VerdictKind = "not-run"          // the backend could not be started
)

// Coverage says which MUST rules a verdict covers.
type Coverage struct {
	// MustRules is the number of MUST rules in the catalogue that apply to the profile.
	MustRules int `json:"mustRules"`
	// Selected is the number of MUST rules with at least one spec selected (not left out
	// by the filter).
	Selected int `json:"selected"`
	// Passed is the number of selected MUST rules whose every spec ran and passed.
	Passed int `json:"passed"`
	// Failing is the number of selected MUST rules that fail (against the backend).
	Failing int `json:"failing"`
	// Unjudged is the number of selected MUST rules neither passed nor failing (skipped,
	// partial, blocked, errors, interrupted).
	Unjudged int `json:"unjudged"`
	// NotApplicable is the number of MUST rules that do not apply to the profile (not in
	// MustRules).
	NotApplicable int `json:"notApplicable,omitempty"`
	// Filter is the label filter of the run, if any.
	Filter string `json:"filter,omitempty"`
}

// Counts are honest spec counts for one backend.
type Counts struct {
	Selected          int `json:"selected"`
	Run               int `json:"run"`
	Passed            int `json:"passed"`
	Failed            int `json:"failed"`
	Errors            int `json:"errors"`
	ExpectedFailures  int `json:"expectedFailures"`
	UnexpectedPasses  int `json:"unexpectedPasses"`
	DocumentedDiffs   int `json:"documentedDifferences"`
	Information       int `json:"information"`
	SkippedByFilter   int `json:"skippedByFilter"`
	SkippedCapability int `json:"skippedByCapability"`
	Blocked           int `json:"blocked"`
	Flaky             int `json:"flaky"`
	Interrupted       int `json:"interrupted"`
	NotApplicable     int `json:"notApplicable,omitempty"`
}

// RuleRow is one rule and its cell for every backend, in the order of Report.Backends.
type RuleRow struct {
	ID               string `json:"id"`
	Level            string `json:"level"`
	Area             string `json:"area"`
	Feature          string `json:"feature"`
	Text             string `json:"text"`
	Source           string `json:"source"`
	CosmosDifference string `json:"cosmosDifference,omitempty"`
	Cells            []Cell `json:"cells"`
}

// Cell is a rule's result on one backend.
type Cell struct {
	Outcome Outcome      `json:"outcome"`
	Specs   []SpecResult `json:"specs,omitempty"`
}

// SpecResult is one spec of a rule on one backend, with its evidence.
type SpecResult struct {
	Text       string   `json:"text"`
	Outcome    Outcome  `json:"outcome"`
	Failure    string   `json:"failure,omitempty"`
	Location   string   `json:"location,omitempty"`
	History    string   `json:"history,omitempty"`
	Evidence   string   `json:"baselineEvidence,omitempty"`
	Choices    []string `json:"choices,omitempty"`
	SkipReason string   `json:"skipReason,omitempty"`
	Difference string   `json:"documentedDifference,omitempty"`
	// Signature is what the failure looked like (status and code, or masked assertion),
	// as baselines record it.
	Signature *fixtures.Signature `json:"signature,omitempty"`
	// BlockedBy names the rule whose failure blocked the spec's setup.
	BlockedBy string `json:"blockedBy,omitempty"`
	// Notes are choices a MUST rule's spec recorded, and a flaky entry's reason.
	Notes []string `json:"notes,omitempty"`
	// PreviousEvidence is the baseline's evidence of a listed spec that now fails
	// differently (or passes).
	PreviousEvidence string  `json:"previousEvidence,omitempty"`
	RunTime          float64 `json:"runTimeSeconds"`
}

// LegendRow explains one outcome in words.
type LegendRow struct {
	Outcome        Outcome `json:"outcome"`
	Meaning        string  `json:"meaning"`
	AgainstBackend bool    `json:"againstBackend"`
}

// Legend explains the outcomes (Outcomes, as the report carries it).
var Legend = func() []LegendRow {
	var out []LegendRow
	for _, o := range Outcomes {
		out = append(out, LegendRow{o.Outcome, o.Meaning, o.AgainstBackend})
	}
	return out
}()
