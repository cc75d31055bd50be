package report

import (
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/suites/driver"
)

// Schema identifies the format of report.json.
const Schema = "conform.report/v1"

// Outcome is the result of a spec, or of a rule on one backend.
type Outcome string

// The outcomes a cell can show.
const (
	Pass           Outcome = "pass"
	Fail           Outcome = "fail"
	Error          Outcome = "error"
	Skipped        Outcome = "skipped"
	ExpectedFail   Outcome = "expected-failure"
	UnexpectedPass Outcome = "unexpected-pass"
	Info           Outcome = "info"
	DocumentedDiff Outcome = "documented-difference"
	NotRun         Outcome = "not-run"
)

// severity orders outcomes when a rule's specs disagree: a rule shows its worst spec.
var severity = map[Outcome]int{
	NotRun: 0, Skipped: 1, Pass: 2, Info: 3, ExpectedFail: 4, DocumentedDiff: 5, Error: 6, Fail: 7, UnexpectedPass: 8,
}

// Worse reports whether a is worse than b.
func Worse(a, b Outcome) bool { return severity[a] > severity[b] }

// Run is one backend's raw result, as the process that ran it writes it.
type Run struct {
	Backend    driver.Info  `json:"backend"`
	Profile    string       `json:"profile"`
	Command    string       `json:"command"`
	StartError string       `json:"startError,omitempty"`
	Ginkgo     types.Report `json:"ginkgo"`
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
	// Verdict is "conforms", "conforms to core" or "does not conform" (for the profile).
	Verdict string `json:"verdict"`
	// FailingFeatures lists the extended features with failing MUST rules.
	FailingFeatures []string `json:"failingFeatures,omitempty"`
	// BaselineMet is true when every failure is in the baseline and no entry passed.
	BaselineMet bool   `json:"baselineMet"`
	Counts      Counts `json:"counts"`
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
	RunTime    float64  `json:"runTimeSeconds"`
}

// LegendRow explains one outcome in words.
type LegendRow struct {
	Outcome Outcome `json:"outcome"`
	Meaning string  `json:"meaning"`
}

// Legend says exactly what each outcome of a spec, or of a rule's cell, means.
var Legend = []LegendRow{
	{Pass, "the specs ran and the backend did what the rule says"},
	{Info, "the documentation allows more than one behaviour (a MAY or SHOULD rule): the backend chose one, named in the cell; not a failure"},
	{DocumentedDiff, "the spec failed, and Microsoft documents this difference for the backend's profile (Cosmos DB); the cell says the difference; it does not count against the verdict"},
	{ExpectedFail, "the spec failed as the backend's checked-in baseline expects (a known divergence); the evidence shows the baseline entry beside this run's failure"},
	{UnexpectedPass, "the spec passed although the backend's baseline expects it to fail: the baseline entry is stale, and the run fails until it is removed"},
	{Fail, "the backend answered, and the answer breaks the rule; no baseline entry expects it"},
	{Error, "no usable answer (the connection dropped or timed out): nothing was judged, and the evidence names the error"},
	{Skipped, "not run on this backend: it lacks a capability the spec needs, the driver cannot send the request, or a filter left it out"},
	{NotRun, "no spec of the rule was in this run for this backend"},
}
