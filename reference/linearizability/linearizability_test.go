package linearizability_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/linearizability"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// artifactDir is where failing histories go: $CONFORM_LINEARIZABILITY_DIR, else a
// directory of the test.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("CONFORM_LINEARIZABILITY_DIR"); d != "" {
		return d
	}
	return t.TempDir()
}

func runAndCheck(t *testing.T, b api.Backend, w linearizability.Workload, name string) linearizability.Result {
	t.Helper()
	c := ctx(t)
	if err := b.CreateTable(c, w.Table); err != nil {
		t.Fatal(err)
	}
	h, err := linearizability.Run(c, b, w)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(h.Operations) != w.Clients*w.OpsPerClient {
		t.Fatalf("%d operations recorded, want %d", len(h.Operations), w.Clients*w.OpsPerClient)
	}
	res, err := linearizability.Check(h, 30*time.Second, artifactDir(t), name)
	if err != nil {
		t.Fatal(err)
	}
	failed, conflicts := 0, 0
	for _, op := range h.Operations {
		if out := op.Output.(linearizability.Output); !out.OK {
			failed++
			if out.Status == 409 || out.Status == 412 {
				conflicts++
			}
		}
	}
	t.Logf("%s: %d operations, %d refused (%d conflicts or failed conditions): %s", name, len(h.Operations), failed, conflicts, res.Verdict)
	if conflicts == 0 {
		t.Errorf("the workload produced no conflicts: it does not exercise the conditions")
	}
	return res
}

var workload = linearizability.Workload{Table: "linear", Clients: 16, OpsPerClient: 40, Partitions: 3, Rows: 3, Seed: 7}

func TestReferenceInProcessIsLinearizable(t *testing.T) {
	res := runAndCheck(t, reference.New(), workload, "reference")
	if !res.Linearizable {
		t.Errorf("the reference is not linearizable (%s); see %s", res.Verdict, res.Visualization)
	}
}

func TestReferenceServerIsLinearizable(t *testing.T) {
	srv := tableserver.New(reference.New())
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b, err := rest.New("DefaultEndpointsProtocol=http;AccountName="+tableserver.DevAccountName+";AccountKey="+tableserver.DevAccountKey+
		";TableEndpoint="+ts.URL+"/"+tableserver.DevAccountName, rest.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	res := runAndCheck(t, b, workload, "reference-http")
	if !res.Linearizable {
		t.Errorf("the reference server is not linearizable (%s); see %s", res.Verdict, res.Visualization)
	}
}

// nonAtomicConditions checks If-Match itself, by a read, and then writes
// unconditionally: two writers holding the same ETag can both succeed.
type nonAtomicConditions struct{ api.Backend }

func (n nonAtomicConditions) check(ctx context.Context, table, pk, rk, ifMatch string) error {
	if ifMatch == api.IfMatchAny || ifMatch == "" {
		return nil
	}
	e, err := n.GetEntity(ctx, table, pk, rk, nil)
	if err != nil {
		return err
	}
	if e.ETag != ifMatch {
		return spec.ErrUpdateCondition.New()
	}
	time.Sleep(time.Millisecond) // the window between the check and the write
	return nil
}

func (n nonAtomicConditions) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := n.check(ctx, table, e.PartitionKey, e.RowKey, ifMatch); err != nil {
		return "", err
	}
	if ifMatch != "" {
		ifMatch = api.IfMatchAny
	}
	return n.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (n nonAtomicConditions) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if err := n.check(ctx, table, pk, rk, ifMatch); err != nil {
		return err
	}
	return n.Backend.DeleteEntity(ctx, table, pk, rk, api.IfMatchAny)
}

// staleReads answers reads from a cache that it refreshes only every few milliseconds.
type staleReads struct {
	api.Backend
	mu    sync.Mutex
	cache map[api.Key]cached
}

type cached struct {
	e   api.Entity
	err error
	at  time.Time
}

func (s *staleReads) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	k := api.Key{PartitionKey: pk, RowKey: rk}
	s.mu.Lock()
	c, ok := s.cache[k]
	s.mu.Unlock()
	if ok && time.Since(c.at) < 20*time.Millisecond {
		return c.e, c.err
	}
	e, err := s.Backend.GetEntity(ctx, table, pk, rk, sel)
	s.mu.Lock()
	s.cache[k] = cached{e: e, err: err, at: time.Now()}
	s.mu.Unlock()
	return e, err
}

// TestBrokenBackendsAreCaught: the check must find that a backend which checks ETag
// conditions apart from the write, or which serves stale reads, is not linearizable, and
// must write the visualization of the history.
func TestBrokenBackendsAreCaught(t *testing.T) {
	contended := linearizability.Workload{Table: "broken", Clients: 16, OpsPerClient: 20, Partitions: 4, Rows: 1, Seed: 11}
	for _, tc := range []struct {
		name string
		wrap func(api.Backend) api.Backend
	}{
		{"non-atomic-conditions", func(b api.Backend) api.Backend { return nonAtomicConditions{b} }},
		{"stale-reads", func(b api.Backend) api.Backend { return &staleReads{Backend: b, cache: map[api.Key]cached{}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The interleaving is the scheduler's: try a few seeds before concluding.
			for attempt := range 3 {
				w := contended
				w.Seed += uint64(attempt)
				res := runAndCheck(t, tc.wrap(reference.New()), w, tc.name)
				if res.Linearizable {
					continue
				}
				if res.Verdict != porcupine.Illegal {
					t.Errorf("verdict %s, want %s", res.Verdict, porcupine.Illegal)
				}
				for _, f := range []string{res.Visualization, res.HistoryFile} {
					if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
						t.Errorf("no history written at %q: %v", f, err)
					}
				}
				return
			}
			t.Fatalf("the check found nothing wrong with %s in 3 runs", tc.name)
		})
	}
}

// TestModelRejectsALostUpdate: two replaces conditioned on the same ETag cannot both
// succeed one after the other; a transaction that failed changes nothing.
func TestModelRejectsALostUpdate(t *testing.T) {
	op := func(client int, in linearizability.Input, out linearizability.Output, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret}
	}
	ins := linearizability.Input{Step: linearizability.Step{Kind: linearizability.OpInsert, Value: 1}}
	rep := func(v int64) linearizability.Input {
		return linearizability.Input{Step: linearizability.Step{Kind: linearizability.OpReplace, Value: v, ETag: "e1"}}
	}
	ok := func(etag string) linearizability.Output {
		return linearizability.Output{OK: true, FailedIndex: -1, ETag: etag}
	}
	lost := []porcupine.Operation{op(0, ins, ok("e1"), 0, 1), op(1, rep(2), ok("e2"), 2, 3), op(2, rep(3), ok("e3"), 4, 5)}
	if res, _ := linearizability.Check(linearizability.History{Operations: lost}, time.Second, "", ""); res.Linearizable {
		t.Error("a lost update was accepted")
	}
	precondition := linearizability.Output{Status: 412, FailedIndex: -1}
	fine := []porcupine.Operation{op(0, ins, ok("e1"), 0, 1), op(1, rep(2), ok("e2"), 2, 3), op(2, rep(3), precondition, 4, 5)}
	if res, _ := linearizability.Check(linearizability.History{Operations: fine}, time.Second, "", ""); !res.Linearizable {
		t.Error("a correct history was refused")
	}
	batch := linearizability.Input{Step: linearizability.Step{Kind: linearizability.OpBatch}, Steps: []linearizability.Step{
		{Kind: linearizability.OpUpsert, Row: 1, Value: 9}, {Kind: linearizability.OpInsert, Row: 0, Value: 8},
	}}
	get1 := linearizability.Input{Step: linearizability.Step{Kind: linearizability.OpGet, Row: 1}}
	half := []porcupine.Operation{
		op(0, ins, ok("e1"), 0, 1),
		op(1, batch, linearizability.Output{Status: 409, FailedIndex: 1}, 2, 3),
		op(2, get1, linearizability.Output{OK: true, FailedIndex: -1, Value: 9, ETag: "e9"}, 4, 5),
	}
	if res, _ := linearizability.Check(linearizability.History{Operations: half}, time.Second, "", ""); res.Linearizable {
		t.Error("a half-applied transaction was accepted")
	}
}
