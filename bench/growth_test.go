package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

// The growth family loads one table in steps and measures the four operations at each,
// with the reference's memory per entity.
func TestGrowthMeasuresEachStep(t *testing.T) {
	env := &Env{Backend: reference.New(), Name: "reference", Seed: 2, Workers: 2}
	var lines []string
	restarts := 0
	restart := func(context.Context) (time.Duration, error) { restarts++; return 5 * time.Millisecond, nil }
	res := RunGrowth(context.Background(), env, GrowthConfig{Sizes: []int{1000, 3000}, Requests: 40, Budget: time.Minute, Memory: HeapBytes, Restart: restart},
		func(s string) { lines = append(lines, s) })
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if len(res.Steps) != 2 || res.Steps[0].Loaded != 1000 || res.Steps[1].Loaded != 2000 || restarts != 2 || res.Steps[1].Restart != 5*time.Millisecond {
		t.Fatalf("steps %+v", res.Steps)
	}
	for _, s := range res.Steps {
		if s.Stopped != "" || len(s.Ops) != 4 {
			t.Fatalf("%d entities: stopped %q, %d operations", s.Entities, s.Stopped, len(s.Ops))
		}
		for _, name := range growthOperations {
			op, ok := s.Op(name)
			if !ok || op.Requests < 40 || op.Errors != 0 || op.Latency.P50 <= 0 || op.Latency.P99 < op.Latency.P50 {
				t.Fatalf("%d entities, %s: %+v", s.Entities, name, op)
			}
		}
		// About 300 bytes of user data an entity: the store holds at least that.
		if s.BytesPerEntity < 256 {
			t.Fatalf("%d entities: %v bytes per entity", s.Entities, s.BytesPerEntity)
		}
	}
	if len(lines) != 4 || !strings.Contains(lines[3], "3000 entities:  point read p50") {
		t.Fatalf("lines %q", lines)
	}
	rep := Report{Backends: []BackendRun{{Name: "reference"}}, Growth: []GrowthResult{res}}
	md := string(rep.Markdown())
	for _, want := range []string{"## Cost as the data grows", "| reference | 3,000 |", "bytes per entity", "| 0.01 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	svg := string(rep.SVG())
	if !strings.Contains(svg, "cost as the data grows") || strings.Count(svg, "<polyline") < 8 {
		t.Errorf("bench.svg draws no growth panels (%d lines)", strings.Count(svg, "<polyline"))
	}
	// Beside workloads' bars, the growth panels come below them.
	rep.Outcomes = []Outcome{{Result: Result{Backend: "reference", Case: "PointGet/x=1", Summary: Summary{Requests: 1, OpsPerSec: 10, Latency: Latency{P99: 5}}}}}
	if svg := string(rep.SVG()); !strings.Contains(svg, "throughput and p99") || !strings.Contains(svg, "cost as the data grows") {
		t.Error("bench.svg of workloads and the growth family lacks one of them")
	}
}

// slowBatches takes 50 ms a transaction.
type slowBatches struct{ api.Backend }

func (s slowBatches) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	select {
	case <-time.After(50 * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Backend.SubmitBatch(ctx, table, ops)
}

// A step that exceeds its budget is stopped and says so; the larger steps are not run.
func TestGrowthStopsAStepPastItsBudget(t *testing.T) {
	env := &Env{Backend: slowBatches{reference.New()}, Name: "slow", Seed: 2, Workers: 2}
	res := RunGrowth(context.Background(), env, GrowthConfig{Sizes: []int{1000, 100_000, 1_000_000}, Requests: 20, Budget: 2 * time.Second}, nil)
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	if len(res.Steps) != 2 {
		t.Fatalf("%d steps, want the first and the stopped second", len(res.Steps))
	}
	if s := res.Steps[1]; !strings.Contains(s.Stopped, "within the step's budget of 2s") || s.Loaded >= 99_000 || len(s.Ops) != 0 {
		t.Fatalf("second step: %+v", s)
	}
	rep := Report{Backends: []BackendRun{{Name: "slow"}}, Growth: []GrowthResult{res}}
	if md := string(rep.Markdown()); !strings.Contains(md, "stopped: loading wrote") {
		t.Errorf("bench.md does not say the step was stopped:\n%s", md)
	}
	if err := ValidateGrowthSizes([]int{1000, 1000}); err == nil {
		t.Error("steps that do not increase were accepted")
	}
	if err := ValidateGrowthSizes([]int{10}); err == nil {
		t.Error("a step of 10 entities was accepted")
	}
}
