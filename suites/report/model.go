package report

import (
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/verdict"
)

// Schema identifies the format of report.json.
const Schema = "conform.report/v1"

// Run is one backend's raw result, as the process that ran it writes it.
type Run struct {
	Backend    driver.Info `json:"backend"`
	Profile    string      `json:"profile"`
	Command    string      `json:"command"`
	StartError string      `json:"startError,omitempty"`
	// Filter is the label filter the run was given.
	Filter string `json:"filter,omitempty"`
	// Argument is the --backend argument that runs this backend again (a name, or
	// NAME=env:VARIABLE), for --rerun-failed; empty for a connection string given in full,
	// which is never kept.
	Argument string `json:"argument,omitempty"`
	// Interrupted is true when the run was stopped by a signal before its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// StoppedAnswering is when the backend stopped answering, when its run was stopped for
	// it: the specs that ran before are judged, the others did not run.
	StoppedAnswering time.Time    `json:"stoppedAnswering,omitzero"`
	Ginkgo           types.Report `json:"ginkgo"`
	// BaselineNote says when the run was judged against another version's baseline
	// (fixtures.BaselineChoice.Note): which was looked for, which exist, which was used.
	BaselineNote string `json:"baselineNote,omitempty"`
	// Confirmation is what running the failing rules again alone found, when more than one
	// process ran the backend's specs (ConfirmAlone).
	Confirmation *Confirmation `json:"confirmation,omitempty"`
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
	// verdict covers (verdict.Judge): "conforms", "conforms on the 39 selected MUST rules;
	// the verdict covers only the selection, ... (filter ...)", "conforms to core",
	// "does not conform", "inconclusive: ...", "interrupted: ...", "not run". VerdictKind
	// is its first part as data, and with Coverage decides how it is shown (VerdictStyleFor).
	Verdict     string       `json:"verdict"`
	VerdictKind verdict.Kind `json:"verdictKind"`
	// Coverage is what the verdict covers.
	Coverage verdict.Coverage `json:"coverage"`
	// Errors names the specs without an answer (transport errors), at most 20.
	Errors []string `json:"errors,omitempty"`
	// Interrupted is true when the run of this backend did not finish: it was
	// interrupted, cut by its timeout or aborted in any of its parts, or a selected spec
	// never started (verdict "interrupted", exit status 130).
	Interrupted bool `json:"interrupted,omitempty"`
	// StoppedBy says why the run stopped, as Ginkgo recorded it (its special failure
	// reasons, every part's).
	StoppedBy []string `json:"stoppedBy,omitempty"`
	// BaselineProblems counts the suite-level nodes that failed: what the baseline says
	// that the run showed untrue (stale entries, a rule-level entry whose rule passed).
	BaselineProblems int `json:"baselineProblems,omitempty"`
	// StoppedAnswering is when the backend stopped answering (RFC 3339, UTC), when its run
	// was stopped for it (Run.StoppedAnswering).
	StoppedAnswering string `json:"stoppedAnswering,omitempty"`
	// BaselineNote says when the backend was judged against another version's baseline
	// (Run.BaselineNote); the summary and the report show it below the verdict.
	BaselineNote string `json:"baselineNote,omitempty"`
	// FailingFeatures lists the extended features with failing MUST rules.
	FailingFeatures []string `json:"failingFeatures,omitempty"`
	// BaselineMet is true when every failure is in the baseline and no entry passed.
	BaselineMet bool   `json:"baselineMet"`
	Counts      Counts `json:"counts"`
	// Confirmation is what running the failing rules again alone found, when more than one
	// process ran the backend's specs; ConfirmationWords says it in words (one sentence,
	// then one line per rule whose outcome alone differs).
	Confirmation      *Confirmation `json:"confirmation,omitempty"`
	ConfirmationWords []string      `json:"confirmationWords,omitempty"`
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
	NotApplicable     int `json:"notApplicable,omitempty"`
	Information       int `json:"information"`
	SkippedByFilter   int `json:"skippedByFilter"`
	SkippedCapability int `json:"skippedByCapability"`
	Blocked           int `json:"blocked"`
	Flaky             int `json:"flaky"`
	Interrupted       int `json:"interrupted"`
	// NotRun counts the selected specs that never started: the run stopped first.
	NotRun int `json:"notRun,omitempty"`
	// Unexpected counts the specs whose outcome the baseline and the profile do not
	// expect (verdict.Decision.Unexpected): each fails the run.
	Unexpected int `json:"unexpected"`
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
	Outcome verdict.Outcome `json:"outcome"`
	// Against is true when a spec of the cell counts against the backend; Unexpected when
	// one's outcome is not what the baseline and the profile expect (verdict.Cell).
	Against    bool         `json:"againstBackend,omitempty"`
	Unexpected bool         `json:"unexpected,omitempty"`
	Specs      []SpecResult `json:"specs,omitempty"`
}

// SpecResult is one spec of a rule on one backend, with its evidence.
type SpecResult struct {
	Text    string          `json:"text"`
	Outcome verdict.Outcome `json:"outcome"`
	// Decision is the whole of verdict.Decide's answer for the spec.
	Decision   verdict.Decision `json:"decision"`
	Failure    string           `json:"failure,omitempty"`
	Location   string           `json:"location,omitempty"`
	History    string           `json:"history,omitempty"`
	Evidence   string           `json:"baselineEvidence,omitempty"`
	Choices    []string         `json:"choices,omitempty"`
	SkipReason string           `json:"skipReason,omitempty"`
	Difference string           `json:"documentedDifference,omitempty"`
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
	Outcome        verdict.Outcome `json:"outcome"`
	Meaning        string          `json:"meaning"`
	AgainstBackend bool            `json:"againstBackend"`
}

// Legend explains the outcomes (Outcomes, as the report carries it).
var Legend = func() []LegendRow {
	var out []LegendRow
	for _, o := range verdict.Outcomes {
		out = append(out, LegendRow{o.Outcome, o.Meaning, o.AgainstBackend})
	}
	return out
}()
