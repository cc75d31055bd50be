package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

func TestIsolationRuleIsInTheCatalogue(t *testing.T) {
	r, ok := spec.LookupRule(IsolationRule)
	if !ok || r.Level != spec.Must {
		t.Fatalf("the isolation rule %s is not a MUST rule of the catalogue (found %v, level %s)", IsolationRule, ok, r.Level)
	}
}

// A difference between a rule's outcome beside other specs and alone is blamed on the
// isolation rule only when the shared run got an answer that failed or blocked the rule
// and the run alone got another answer.
func TestBlameIsolation(t *testing.T) {
	cases := []struct {
		shared, alone verdict.Outcome
		blamed        bool
	}{
		{verdict.Fail, verdict.Pass, true},
		{verdict.Fail, verdict.Blocked, true},
		{verdict.Blocked, verdict.Pass, true},
		{verdict.Blocked, verdict.Fail, true},
		{verdict.ExpectedFail, verdict.Pass, true},
		{verdict.Fail, verdict.Fail, false},        // confirmed alone
		{verdict.Blocked, verdict.Blocked, false},  // confirmed alone
		{verdict.Error, verdict.Pass, false},       // no answer beside the others: a transport fault, no rule's
		{verdict.Error, verdict.Fail, false},       // the same: the failure alone is the rule's own
		{verdict.Fail, verdict.Error, false},       // no answer alone compares nothing
		{verdict.Fail, verdict.Interrupted, false}, // stopped alone compares nothing
		{verdict.Fail, verdict.NotRun, false},      // not run alone compares nothing
		{verdict.Pass, verdict.Fail, false},        // a pass beside the others is never run again
		{verdict.ExpectedFail, verdict.ExpectedFail, false},
	}
	for _, c := range cases {
		if got := blameIsolation(c.shared, c.alone); got != c.blamed {
			t.Errorf("blameIsolation(%s beside others, %s alone) = %v, want %v", c.shared, c.alone, got, c.blamed)
		}
	}
}

func TestConfirmationInWords(t *testing.T) {
	c := &Confirmation{Processes: 8, Rules: []Confirmed{
		{Rule: "tables.create.listed", Shared: verdict.Fail, Alone: verdict.Pass, Blamed: true},
		{Rule: "query.range", Shared: verdict.Fail, Alone: verdict.Fail},
		{Rule: "batch.atomic", Shared: verdict.Error, Alone: verdict.Pass},
		{Rule: "types.int64.round-trip", Shared: verdict.Blocked, Alone: verdict.Fail, Blamed: true},
	}}
	got := c.InWords()
	want := []string{
		"8 processes; rules that failed, were blocked or got no answer, run again by one process alone: 4; 1 rule confirmed alone, 2 passed alone, 1 ended otherwise alone",
		"tables.create.listed: fail with 8 processes, pass alone: the difference came with other specs running (blamed on tables.isolation)",
		"batch.atomic: no answer with 8 processes, pass alone",
		"types.int64.round-trip: blocked with 8 processes, fail alone: the difference came with other specs running (blamed on tables.isolation)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("InWords:\n got %q\nwant %q", got, want)
	}
	for _, c := range []*Confirmation{nil, {Processes: 1}} {
		if w := c.InWords(); w != nil {
			t.Errorf("a run of one process has no confirmation words, got %q", w)
		}
	}
	if s := (&Confirmation{Processes: 2}).Sentence(); !strings.Contains(s, "2 processes; no rule failed") {
		t.Errorf("nothing to confirm: %q", s)
	}
	if s := (&Confirmation{Processes: 2, NotConfirmed: "the run was interrupted"}).Sentence(); !strings.Contains(s, "not confirmed alone: the run was interrupted") {
		t.Errorf("not confirmed: %q", s)
	}
}

// specOf is a spec of rule r in state state, as a run writes it.
func specOf(r spec.Rule, text string, state types.SpecState, failure string) types.SpecReport {
	return types.SpecReport{
		ContainerHierarchyTexts: []string{string(r.Area)},
		LeafNodeText:            text, LeafNodeType: types.NodeTypeIt, State: state,
		LeafNodeLabels: []string{r.ID, framework.LabelLevel + string(r.Level), framework.LabelArea + string(r.Area)},
		ReportEntries:  []types.ReportEntry{{Name: framework.EntryRule, Value: types.WrapEntryValue(framework.RuleEntry{ID: r.ID, Level: string(r.Level), Area: string(r.Area)})}},
		Failure:        types.Failure{Message: failure},
	}
}

// ConfirmAlone: each rule run again alone gets its outcome alone; a failure beside the
// other processes that passes alone is a failure of the isolation rule, with both outcomes
// in its evidence; a failure confirmed alone stays the rule's.
func TestConfirmAloneBlamesDifferencesOnIsolation(t *testing.T) {
	listed, _ := spec.LookupRule("tables.create.listed")
	rng, _ := spec.LookupRule("query.range")
	point, _ := spec.LookupRule("query.point")
	isolation, _ := spec.LookupRule(IsolationRule)
	shared := Run{Ginkgo: types.Report{SuiteSucceeded: false, SpecReports: types.SpecReports{
		specOf(listed, "lists it", types.SpecStateFailed, "Query Tables listed a table of another process"),
		specOf(rng, "returns the range", types.SpecStateFailed, "got []"),
		specOf(point, "returns the entity", types.SpecStatePassed, ""),
		specOf(isolation, "keeps the neighbour", types.SpecStatePassed, ""),
	}}}
	rules := RulesToConfirm(shared)
	if want := []string{"tables.create.listed", "query.range"}; !slices.Equal(slices.Sorted(slices.Values(rules)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("RulesToConfirm = %v, want %v", rules, want)
	}
	alone := Run{Ginkgo: types.Report{SuiteSucceeded: false, SpecReports: types.SpecReports{
		specOf(listed, "lists it", types.SpecStatePassed, ""),
		specOf(rng, "returns the range", types.SpecStateFailed, "got []"),
		specOf(point, "returns the entity", types.SpecStateSkipped, ""), // left out by the rules' filter
	}}}
	merged := ConfirmAlone(shared, alone, rules, 8)
	cells := map[string]Cell{}
	for _, row := range Build([]Run{merged}, spec.Rules(), Meta{}).Rules {
		cells[row.ID] = row.Cells[0]
	}
	for id, want := range map[string]verdict.Outcome{"tables.create.listed": verdict.Pass, "query.range": verdict.Fail, "query.point": verdict.Pass, IsolationRule: verdict.Fail} {
		if got := cells[id].Outcome; got != want {
			t.Errorf("cell of %s = %s, want %s", id, got, want)
		}
	}
	var evidence []string
	for _, s := range cells[IsolationRule].Specs {
		if s.Outcome == verdict.Fail {
			evidence = append(evidence, s.Failure)
		}
	}
	if len(evidence) != 1 || !strings.Contains(evidence[0], "tables.create.listed: fail with 8 processes, pass alone: the difference came with other specs running") {
		t.Errorf("the isolation rule's failing specs say %q; want one naming tables.create.listed, both outcomes and other specs running", evidence)
	}
	c := merged.Confirmation
	if c == nil || c.Processes != 8 || len(c.Rules) != 2 {
		t.Fatalf("confirmation = %+v", c)
	}
	if d := c.Differences(); len(d) != 1 || d[0].Rule != "tables.create.listed" || !d[0].Blamed {
		t.Errorf("differences = %+v, want tables.create.listed blamed", d)
	}
	rep := Build([]Run{merged}, spec.Rules(), Meta{})
	if words := rep.Backends[0].ConfirmationWords; len(words) != 2 || !strings.HasPrefix(words[0], "8 processes;") {
		t.Errorf("the backend's confirmation words: %q", words)
	}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"report.md": md.String(), "report.html": page.String()} {
		for _, want := range []string{"8 processes; rules that failed", "tables.create.listed: fail with 8 processes, pass alone: the difference came with other specs running"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}
