package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// IsolationRule is the rule a difference between a rule's outcome beside other specs and
// its outcome alone is blamed on: an operation on one table never changes another
// (E-tables-independent). Specs read only what they created, so another process's specs
// can change a spec's outcome only through a backend that lets operations on one table
// reach another.
const IsolationRule = "tables.isolation"

// Confirmation is what the solo confirmation of a run with more than one process found:
// every rule that failed, was blocked or got no answer beside the other processes' specs
// was run again by one process, alone, and its cell is the outcome alone.
type Confirmation struct {
	// Processes is how many processes ran the backend's specs at the same time.
	Processes int `json:"processes"`
	// Rules are the rules run again alone, in catalogue order.
	Rules []Confirmed `json:"rules,omitempty"`
	// NotConfirmed says why the rules could not be run again alone (the process could not
	// start, the run was interrupted); their cells keep the shared outcome.
	NotConfirmed string `json:"notConfirmed,omitempty"`
}

// Confirmed is one rule's outcome beside other specs (Shared) and alone (Alone).
type Confirmed struct {
	Rule   string          `json:"rule"`
	Shared verdict.Outcome `json:"shared"`
	Alone  verdict.Outcome `json:"alone"`
	// Blamed is true when the difference is blamed on IsolationRule (blameIsolation).
	Blamed bool `json:"blamedOnIsolation,omitempty"`
}

// confirmOutcomes are the cell outcomes a rule is run again alone for: it failed (whether
// or not its baseline expects it), was blocked, or got no answer.
var confirmOutcomes = []verdict.Outcome{verdict.Fail, verdict.ExpectedFail, verdict.Blocked, verdict.Error}

// blameIsolation decides whether a rule whose outcome beside other specs was shared and
// alone is alone shows a fault of isolation: the backend answered differently while other
// specs ran. A shared failure or block that did not stay as it was alone counts; a shared
// run that got no answer (a transport fault, throttling) says nothing about the backend's
// rules, and an alone run that got none or was stopped compares nothing.
func blameIsolation(shared, alone verdict.Outcome) bool {
	if shared == alone {
		return false
	}
	switch alone {
	case verdict.Error, verdict.Interrupted, verdict.NotRun, verdict.Skipped:
		return false
	}
	return shared == verdict.Fail || shared == verdict.ExpectedFail || shared == verdict.Blocked
}

// outcomeWords are the words of a cell's outcome in a confirmation's sentences.
func outcomeWords(o verdict.Outcome) string {
	switch o {
	case verdict.Fail:
		return "fail"
	case verdict.ExpectedFail:
		return "fail (as the baseline expects)"
	case verdict.Error:
		return "no answer"
	case verdict.Pass, verdict.Info:
		return "pass"
	case verdict.Blocked:
		return "blocked"
	case verdict.NotRun:
		return "not run"
	}
	return string(o)
}

// Words says how the rule's outcome alone compares with its outcome beside other specs,
// e.g. "tables.create.listed: fail with 8 processes, pass alone: the difference came with
// other specs running".
func (c Confirmed) Words(processes int) string {
	s := fmt.Sprintf("%s: %s with %d processes, %s alone", c.Rule, outcomeWords(c.Shared), processes, outcomeWords(c.Alone))
	switch {
	case c.Blamed:
		return s + ": the difference came with other specs running (blamed on " + IsolationRule + ")"
	case c.Shared != c.Alone:
		return s
	}
	return s + ": confirmed"
}

// Differences are the rules whose outcome alone differs from their outcome beside other
// specs.
func (c Confirmation) Differences() []Confirmed {
	var out []Confirmed
	for _, r := range c.Rules {
		if r.Shared != r.Alone {
			out = append(out, r)
		}
	}
	return out
}

// Sentence states how many processes ran and what the confirmation alone found, e.g.
// "8 processes; 12 failing rules confirmed alone, 2 passed alone".
func (c Confirmation) Sentence() string {
	if c.Processes <= 1 {
		return ""
	}
	s := fmt.Sprintf("%d processes", c.Processes)
	if c.NotConfirmed != "" {
		return s + "; the failing rules were not confirmed alone: " + c.NotConfirmed
	}
	if len(c.Rules) == 0 {
		return s + "; no rule failed, was blocked or got no answer, so none was run again alone"
	}
	same, passed, other := 0, 0, 0
	for _, r := range c.Rules {
		switch {
		case r.Shared == r.Alone:
			same++
		case r.Alone == verdict.Pass || r.Alone == verdict.Info:
			passed++
		default:
			other++
		}
	}
	parts := []string{plural(same, "rule") + " confirmed alone"}
	if passed > 0 {
		parts = append(parts, fmt.Sprintf("%d passed alone", passed))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d ended otherwise alone", other))
	}
	return fmt.Sprintf("%s; rules that failed, were blocked or got no answer, run again by one process alone: %d; %s", s,
		len(c.Rules), strings.Join(parts, ", "))
}

// RulesToConfirm lists, in catalogue order, the rules of run whose cell failed, was
// blocked or got no answer: the rules a run with more than one process runs again alone.
func RulesToConfirm(run Run) []string {
	var ids []string
	for id, o := range ruleOutcomes(run) {
		if slices.Contains(confirmOutcomes, o) {
			ids = append(ids, id)
		}
	}
	return inCatalogueOrder(ids)
}

// ConfirmAlone merges alone, the run of the rules RulesToConfirm(shared) named by one
// process, into shared, the run of processes processes at the same time: each of those
// rules' cells is its outcome alone. Every rule whose outcome alone differs from its
// shared outcome is recorded with both (Confirmation); a difference blamed on isolation
// (blameIsolation) is added to IsolationRule's cell as a failing spec whose evidence says,
// in words, which rule, both outcomes and that the difference came with other specs
// running.
func ConfirmAlone(shared, alone Run, rules []string, processes int) Run {
	before := ruleOutcomes(shared)
	merged := MergeRuns(shared, alone)
	after := ruleOutcomes(merged)
	c := &Confirmation{Processes: processes}
	for _, id := range inCatalogueOrder(rules) {
		r := Confirmed{Rule: id, Shared: before[id], Alone: after[id]}
		r.Blamed = id != IsolationRule && blameIsolation(r.Shared, r.Alone)
		c.Rules = append(c.Rules, r)
		if r.Blamed {
			merged.Ginkgo.SpecReports = append(merged.Ginkgo.SpecReports, isolationFailure(r, processes))
		}
	}
	merged.Confirmation = c
	return merged
}

// isolationFailure is the failing spec of IsolationRule that carries one difference.
func isolationFailure(c Confirmed, processes int) types.SpecReport {
	r, _ := spec.LookupRule(IsolationRule)
	return types.SpecReport{
		ContainerHierarchyTexts: []string{"Solo confirmation"},
		LeafNodeType:            types.NodeTypeIt,
		LeafNodeText:            "of " + c.Rule,
		LeafNodeLabels: []string{r.ID, framework.LabelLevel + string(r.Level), framework.LabelArea + string(r.Area),
			framework.LabelFeature + string(r.FeatureOrCore())},
		State: types.SpecStateFailed,
		Failure: types.Failure{Message: c.Words(processes) + ": with one process alone the rule's specs got other answers than " +
			"beside the other processes' specs, which read and write only tables of their own"},
	}
}

// ruleOutcomes maps each rule with a spec in run to its cell's outcome.
func ruleOutcomes(run Run) map[string]verdict.Outcome {
	rep := Build([]Run{run}, spec.Rules(), Meta{})
	out := map[string]verdict.Outcome{}
	for _, row := range rep.Rules {
		if len(row.Cells) == 1 && len(row.Cells[0].Specs) > 0 {
			out[row.ID] = row.Cells[0].Outcome
		}
	}
	return out
}

func inCatalogueOrder(ids []string) []string {
	pos := map[string]int{}
	for i, r := range spec.Rules() {
		pos[r.ID] = i
	}
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b string) int { return pos[a] - pos[b] })
	return out
}

// InWords is the confirmation in words: Sentence, then Words of each rule whose outcome
// alone differs from its outcome beside other specs; nothing for a run of one process.
func (c *Confirmation) InWords() []string {
	if c == nil || c.Processes <= 1 {
		return nil
	}
	out := []string{c.Sentence()}
	for _, r := range c.Differences() {
		out = append(out, r.Words(c.Processes))
	}
	return out
}
