package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/bench"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

// slowLoads is the reference with every transaction and point read slowed down.
type slowLoads struct{ api.Backend }

func (s slowLoads) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	time.Sleep(80 * time.Millisecond)
	return s.Backend.SubmitBatch(ctx, table, ops)
}

func (s slowLoads) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	time.Sleep(time.Millisecond)
	return s.Backend.GetEntity(ctx, table, pk, rk, sel)
}

// A workload says what it is doing while it loads and while it runs, and reports its load
// phase (entities and time) apart from its run; --ops counts requests.
func TestBenchWorkloadSaysWhatItDoes(t *testing.T) {
	defer func(d time.Duration) { benchProgressEvery = d }(benchProgressEvery)
	benchProgressEvery = 20 * time.Millisecond
	var out lockedBuffer
	env := &bench.Env{Backend: slowLoads{reference.New()}, Name: "slow", Seed: 1, Workers: 2, Quick: true}
	c := bench.CasesOf("PointGet", false)[0]
	oc := benchOne(context.Background(), &out, env, c, bench.Limit{Ops: 200}, 1)
	if oc.Error != "" {
		t.Fatal(oc.Error)
	}
	text := out.String()
	for _, want := range []string{"... loading, ", "entities written", "... running, ", "operations done", "loaded 160 entities in ", "200 requests are 200 steps of 1 request each"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the output:\n%s", want, text)
		}
	}
	if oc.Loading == nil || oc.Loading.Entities != 160 || oc.Loading.Elapsed <= 0 || oc.Loading.RequestsPerStep != 1 {
		t.Fatalf("load phase %+v", oc.Loading)
	}
	if oc.Requests != 200 {
		t.Fatalf("%d requests, want the 200 of --ops", oc.Requests)
	}
	rep := bench.Report{Backends: []bench.BackendRun{{Name: "slow"}}, Outcomes: []bench.Outcome{oc}}
	if md := string(rep.Markdown()); !strings.Contains(md, "## Load and run phases") || !strings.Contains(md, "| 160 |") {
		t.Errorf("bench.md does not report the load phase apart:\n%s", md)
	}
}
