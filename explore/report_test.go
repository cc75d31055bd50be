package explore

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/inproc"
)

// A difference whose sequence uses every kind of operation and value.
func everyKindOfDifference() Difference {
	props := map[string]api.Value{"S": api.String(strings.Repeat("s", 100)), "B": api.BinaryString("\x00\xff"), "T": api.Bool(true),
		"D": api.DateTimeTicks(1), "F": api.Double(math.Inf(-1)), "G": api.Guid("00000000-0000-0000-0000-000000000000"),
		"I": api.Int32(-1), "L": api.Int64(math.MaxInt64), "N": api.Null(api.EdmInt64), "U": api.Null(0)}
	e := api.NewEntity("p'0", "r\"0", props)
	ops := []gen.Op{
		{Kind: gen.CreateTable, Table: 1}, {Kind: gen.ListTables}, {Kind: gen.Insert, Entity: e},
		{Kind: gen.Upsert, Entity: e, Mode: api.Merge}, {Kind: gen.Update, Entity: e, IfMatch: gen.MatchStale},
		{Kind: gen.Get, Entity: e, Select: []string{"S"}},
		{Kind: gen.Query, Query: gen.QuerySpec{Filter: "S eq 'x'", Top: api.TopOf(0), Select: []string{"B"}, Pages: 2}},
		{Kind: gen.Batch, Steps: []gen.Step{{Kind: api.BatchMerge, Entity: e, IfMatch: gen.MatchAny}, {Kind: api.BatchDelete, Entity: e, IfMatch: gen.MatchCurrent}}},
		{Kind: gen.Delete, Entity: e}, {Kind: gen.DeleteTable, Table: 1},
	}
	d := Difference{Summary: "s", Seed: 9, Ops: ops, Coverage: "no rule covers this; area query"}
	for _, op := range ops {
		d.Steps = append(d.Steps, StepResult{Op: op, Line: op.String()})
	}
	d.Steps[len(d.Steps)-1].Explored = Answer{Error: "404 TableNotFound"}
	return d
}

// The Go test written for a difference is Go: it parses.
func TestTheGoTestOfADifferenceParses(t *testing.T) {
	src := "package x\n\n" + everyKindOfDifference().GoTest("ExploreDifference1", "reference", 2)
	if _, err := parser.ParseFile(token.NewFileSet(), "difference_test.go", src, 0); err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
}

// The script marks the step that differs, and only it.
func TestTheScriptMarksTheStepThatDiffers(t *testing.T) {
	script := everyKindOfDifference().Script("x", "y", 2)
	var marked []string
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(line, "!") {
			marked = append(marked, line)
		}
	}
	if len(marked) != 1 || !strings.Contains(marked[0], "delete-table") {
		t.Errorf("marked %q, want the last step:\n%s", marked, script)
	}
}

// A difference falls under a baseline entry only for the entry's rule and answer.
func TestAKnownDivergenceNeedsTheRuleAndTheAnswer(t *testing.T) {
	b := fixtures.Baseline{Backend: "azurite", Version: "3.35.0", Expected: []fixtures.ExpectedFailure{
		{Rule: "modify.insert.conflict", Signature: fixtures.Signature{Status: 409, Code: "Conflict"}}}}
	d := Difference{Rule: "modify.insert.conflict", Steps: []StepResult{{Explored: Answer{Status: 409, Code: "Conflict"}}}}
	if known, _ := knownDivergence(b, d); !known {
		t.Error("the listed rule and answer are not known")
	}
	d.Steps[0].Explored.Code = "EntityAlreadyExists"
	if known, _ := knownDivergence(b, d); known {
		t.Error("another answer under the listed rule is known")
	}
	d.Steps[0].Explored.Code, d.Rule = "Conflict", "modify.insert.stores"
	if known, _ := knownDivergence(b, d); known {
		t.Error("another rule is known")
	}
}

// A progress line comes every ProgressEvery, with the counts.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	x := &Explorer{Explored: inproc.New(), Against: inproc.New(), ExploredName: "a", AgainstName: "b",
		Options: Options{Seed: 5, Duration: 300 * time.Millisecond, Progress: &out, ProgressEvery: 50 * time.Millisecond}}
	x.Run(context.Background())
	if !strings.Contains(out.String(), "sequences,") || !strings.Contains(out.String(), "differences") {
		t.Errorf("no progress line:\n%s", out.String())
	}
}

// A difference that a MAY rule covers is known: the rule allows either answer.
func TestADifferenceAMayRuleAllowsIsKnown(t *testing.T) {
	op := gen.Op{Kind: gen.Batch, Steps: []gen.Step{{Kind: api.BatchInsert, Entity: api.NewEntity("p0", "r0", nil)}}}
	step := StepResult{Op: op, Line: op.String(),
		Explored: Answer{Lines: []string{"1 results", "result 0: 204 ETag"}},
		Against:  Answer{Lines: []string{"1 results", "result 0: 201 ETag"}}}
	d := (&Explorer{ExploredName: "x", AgainstName: "y"}).difference(sequenceRun{steps: []StepResult{step}, diffAt: 0}, 1, 1, 0)
	if d.Rule != "batch.results.insert-status" || !d.Known || !strings.Contains(d.Coverage, "MAY") {
		t.Errorf("rule %q, known %v, coverage %q; want batch.results.insert-status, known, a MAY rule", d.Rule, d.Known, d.Coverage)
	}
}

// A server fault is never one of the answers a MAY rule allows.
func TestAServerFaultIsNotAllowedByAMayRule(t *testing.T) {
	op := gen.Op{Kind: gen.Batch, Steps: []gen.Step{{Kind: api.BatchInsert, Entity: api.NewEntity("p0", "r0", nil)}}}
	step := StepResult{Op: op, Line: op.String(),
		Explored: Answer{Error: "500 InternalError", Status: 500, Code: "InternalError"},
		Against:  Answer{Lines: []string{"1 results", "result 0: 201 ETag"}}}
	d := (&Explorer{ExploredName: "x", AgainstName: "y"}).difference(sequenceRun{steps: []StepResult{step}, diffAt: 0}, 1, 1, 0)
	if d.Known {
		t.Errorf("a 500 is known: %s", d.Coverage)
	}
}

// Errors that differ only in the failed operation are matched by the index, not the code.
func TestAFailedIndexDifferenceNamesTheIndexRule(t *testing.T) {
	op := gen.Op{Kind: gen.Batch, Steps: []gen.Step{{Kind: api.BatchMerge, Entity: api.NewEntity("p0", "r0", nil), IfMatch: gen.MatchAny}}}
	step := StepResult{Op: op, Line: op.String(),
		Explored: Answer{Error: "404 ResourceNotFound at operation 0", Status: 404, Code: "ResourceNotFound"},
		Against:  Answer{Error: "404 ResourceNotFound", Status: 404, Code: "ResourceNotFound"}}
	if _, rule := Match(Difference{Steps: []StepResult{step}, Ops: []gen.Op{op}}); rule != "batch.failure.index" {
		t.Errorf("Match named %q, want batch.failure.index", rule)
	}
}
