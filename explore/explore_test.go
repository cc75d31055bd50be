package explore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/inproc"
	"github.com/tableconform/conform/suites/driver/mutant"
)

// exploreMutant explores the mutant name against the reference, each in process, until the
// first difference or ops operations.
func exploreMutant(t *testing.T, name string, ops int) Result {
	t.Helper()
	m, ok := mutant.Lookup(name)
	if !ok {
		t.Fatalf("no mutant %q", name)
	}
	x := &Explorer{Explored: m.Wrap(inproc.New()), Against: inproc.New(), ExploredName: "mutant:" + name, AgainstName: "reference",
		Options: Options{Seed: 1, Ops: ops, MaxDifferences: 1, ShrinkTime: 3 * time.Second}}
	return x.Run(context.Background())
}

// maxShrunkOps is the most operations a mutant's difference may keep after shrinking: a
// handful.
const maxShrunkOps = 5

// sampleMutants are one mutant of each area explore draws from, run by make test: a wrong
// merge, a batch fault, a type fault, a missing-entity fault, a paging fault and a filter
// fault.
var sampleMutants = []string{"merge-as-replace", "batch-duplicate-row-collapsed", "booleans-as-int32",
	"delete-missing-succeeds", "continuation-dropped", "bare-property-truthy"}

func TestExploreFindsAndShrinksASampleOfMutants(t *testing.T) {
	for _, name := range sampleMutants {
		t.Run(name, func(t *testing.T) {
			res := exploreMutant(t, name, 3000)
			if len(res.Differences) == 0 {
				t.Fatalf("no difference in %d sequences, %d operations", res.Sequences, res.Operations)
			}
			d := res.Differences[0]
			if len(d.Ops) > maxShrunkOps {
				t.Errorf("shrunk to %d operations, more than %d:\n%s", len(d.Ops), maxShrunkOps, d.Script(res.Explored, res.Against, res.Config.Tables))
			}
			if !d.Last().Differs() {
				t.Errorf("the last step of the reproduction does not differ:\n%s", d.Script(res.Explored, res.Against, res.Config.Tables))
			}
		})
	}
}

func TestExploreFindsNoDifferenceBetweenTheReferenceAndItself(t *testing.T) {
	ops := 20000
	if testing.Short() {
		ops = 3000
	}
	x := &Explorer{Explored: inproc.New(), Against: inproc.New(), ExploredName: "reference", AgainstName: "reference",
		Options: Options{Seed: 3, Ops: ops}}
	res := x.Run(context.Background())
	for _, d := range res.Differences {
		t.Errorf("a difference between the reference and itself:\n%s", d.Script(res.Explored, res.Against, res.Config.Tables))
	}
	if res.Sequences == 0 || res.Inconclusive > 0 || res.Operations < int64(ops) {
		t.Errorf("ran %d sequences, %d operations, %d inconclusive; want %d operations, all answered", res.Sequences, res.Operations, res.Inconclusive, ops)
	}
	if res.Stopped != "operations spent" {
		t.Errorf("stopped: %s", res.Stopped)
	}
}

func TestTheSameSeedRunsTheSameSequences(t *testing.T) {
	first := exploreMutant(t, "merge-as-replace", 3000)
	second := exploreMutant(t, "merge-as-replace", 3000)
	if len(first.Differences) != 1 || len(second.Differences) != 1 {
		t.Fatalf("differences: %d, then %d", len(first.Differences), len(second.Differences))
	}
	// The sequences drawn are the same; how far shrinking gets in its time may not be.
	a, b := first.Differences[0], second.Differences[0]
	if a.Seed != b.Seed || a.ShrunkFrom != b.ShrunkFrom || a.Signature != b.Signature || first.Operations != second.Operations {
		t.Errorf("two runs of seed 1 differ:\n%s\n%s", a.Script("x", "y", 2), b.Script("x", "y", 2))
	}
}

func TestADifferenceIsMatchedAgainstTheCatalogue(t *testing.T) {
	res := exploreMutant(t, "merge-as-replace", 3000)
	if len(res.Differences) == 0 {
		t.Fatal("no difference")
	}
	d := res.Differences[0]
	m, _ := mutant.Lookup("merge-as-replace")
	if !slices.Contains(m.Breaks, d.Rule) {
		if _, also := m.AlsoFails[d.Rule]; !also {
			t.Errorf("matched %q (%s); the mutant breaks %v", d.Rule, d.Coverage, m.Breaks)
		}
	}
	if !strings.HasPrefix(d.Coverage, "rule "+d.Rule+" covers this") {
		t.Errorf("coverage %q", d.Coverage)
	}
}

func TestNoRuleNamedWhenNoneCoversTheDifference(t *testing.T) {
	// An Insert whose answer differs in a way no rule's words name: the area is said, no rule.
	step := StepResult{Op: opInsert(), Line: "t0 insert", Explored: Answer{Lines: []string{"returned x", "ETag"}}, Against: Answer{Lines: []string{"returned y", "ETag"}}}
	area, rule := Match(Difference{Steps: []StepResult{step}, Ops: []gen.Op{step.Op}})
	if rule != "" || area == "" {
		t.Errorf("Match = %q, %q; want an area and no rule", area, rule)
	}
}

func TestAStatusDifferenceNamesTheRuleOfItsCode(t *testing.T) {
	op := opInsert()
	step := StepResult{Op: op, Line: op.String(),
		Explored: Answer{Lines: []string{"returned x", "ETag"}},
		Against:  Answer{Error: "409 EntityAlreadyExists", Status: 409, Code: "EntityAlreadyExists"}}
	_, rule := Match(Difference{Steps: []StepResult{step}, Ops: []gen.Op{op}})
	if rule != "modify.insert.conflict" {
		t.Errorf("Match named %q, want modify.insert.conflict", rule)
	}
}

func TestErrorsThatDifferOnlyInTheFailedIndexAreTold(t *testing.T) {
	s := StepResult{Explored: Answer{Error: "400 InvalidDuplicateRow at operation 0"}, Against: Answer{Error: "400 InvalidDuplicateRow at operation 1"}}
	if got := what(s); got != "failed operation index" {
		t.Errorf("what = %q", got)
	}
}

func TestEntitiesInAnotherOrderAreAnOrderDifference(t *testing.T) {
	s := StepResult{ReadBack: true, Explored: Answer{Lines: []string{"a", "b"}}, Against: Answer{Lines: []string{"b", "a"}}}
	if got := what(s); got != "order" {
		t.Errorf("what = %q", got)
	}
}

func TestEntityLinesTellLongStringsApart(t *testing.T) {
	long := strings.Repeat("s", 100)
	a := entityLine(api.NewEntity("p", "r", map[string]api.Value{"A": api.String(long + "a")}))
	b := entityLine(api.NewEntity("p", "r", map[string]api.Value{"A": api.String(long + "b")}))
	if a == b {
		t.Errorf("two strings that differ at their end render alike: %s", a)
	}
}

// A backend that stops answering ends the run at its operation bound, inconclusive: the calls
// without an answer count, and no difference is made of them.
func TestABackendThatStopsAnsweringEndsTheRun(t *testing.T) {
	m, _ := mutant.Lookup("dies-after-calls")
	x := &Explorer{Explored: m.Wrap(inproc.New()), Against: inproc.New(), ExploredName: "mutant:dies-after-calls", AgainstName: "reference",
		Options: Options{Seed: 1, Ops: 200}}
	done := make(chan Result, 1)
	go func() { done <- x.Run(context.Background()) }()
	select {
	case res := <-done:
		if len(res.Differences) != 0 || res.Inconclusive == 0 || res.Stopped != "operations spent" {
			t.Errorf("%d differences, %d inconclusive sequences, stopped: %s; want none, some, operations spent", len(res.Differences), res.Inconclusive, res.Stopped)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not end at its operation bound")
	}
}

// Options that set only part of the configuration take the defaults for the rest, rather
// than running sequences on no table.
func TestAPartialConfigurationTakesTheDefaults(t *testing.T) {
	x := &Explorer{Explored: inproc.New(), Against: inproc.New(), ExploredName: "a", AgainstName: "b",
		Options: Options{Seed: 2, Ops: 100, Config: gen.Config{NoLimits: true}}}
	res := x.Run(context.Background())
	if res.Config.Tables != gen.DefaultConfig.Tables || res.Sequences == 0 || len(res.Differences) != 0 {
		t.Errorf("tables %d, %d sequences, %d differences", res.Config.Tables, res.Sequences, len(res.Differences))
	}
}

func opInsert() gen.Op {
	return gen.Op{Kind: gen.Insert, Entity: api.NewEntity("p0", "r0", map[string]api.Value{"A": api.Int32(1)})}
}
