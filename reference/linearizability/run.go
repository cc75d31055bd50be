package linearizability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Workload is what Run does.
type Workload struct {
	// Table is the table the clients use; it must exist and be empty.
	Table string
	// Clients is how many clients run at once (default 16).
	Clients int
	// OpsPerClient bounds each client's operations (default 40).
	OpsPerClient int
	// Partitions and Rows size the key space (defaults 4 and 3; Rows at most MaxRows):
	// fewer keys mean more contention.
	Partitions int
	Rows       int
	// Seed makes the choice of operations repeatable (the interleaving is not).
	Seed uint64
	// OpTimeout bounds one operation (default 10 s). An operation that fails other than
	// with a service error ends Run with that error: its effect would be unknown.
	OpTimeout time.Duration
}

func (w Workload) withDefaults() Workload {
	if w.Clients <= 0 {
		w.Clients = 16
	}
	if w.OpsPerClient <= 0 {
		w.OpsPerClient = 40
	}
	if w.Partitions <= 0 {
		w.Partitions = 4
	}
	if w.Rows <= 0 || w.Rows > MaxRows {
		w.Rows = 3
	}
	if w.OpTimeout <= 0 {
		w.OpTimeout = 10 * time.Second
	}
	return w
}

// History is a recorded run: every operation with its call and return times.
type History struct {
	Operations []porcupine.Operation
}

// PartitionKey is the PartitionKey of partition p.
func PartitionKey(p int) string { return fmt.Sprintf("p%d", p) }

// RowKey is the RowKey of row r.
func RowKey(r int) string { return fmt.Sprintf("r%d", r) }

// Run drives w against b from w.Clients goroutines and returns the history.
func Run(ctx context.Context, b api.Backend, w Workload) (History, error) {
	w = w.withDefaults()
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var (
		mu   sync.Mutex
		ops  []porcupine.Operation
		errs []error
		wg   sync.WaitGroup
	)
	for client := range w.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.Seed, uint64(client)))
			seen := map[[2]int]string{} // the ETag this client last saw of each row
			for i := range w.OpsPerClient {
				in := nextInput(rng, w, seen, int64(client)*1_000_000+int64(i)+1)
				call := now()
				out, err := perform(ctx, b, w, in)
				ret := now()
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("client %d, %s: %w", client, describe(in, Output{OK: true}), err))
					mu.Unlock()
					return
				}
				remember(seen, in, out)
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return History{Operations: ops}, errors.Join(errs...)
}

// nextInput chooses an operation: reads, inserts, conditional replaces and deletes with
// the ETag the client last saw (or *), upserts, and transactions of two or three of them
// on distinct rows of one partition. value is unique to the operation.
func nextInput(rng *rand.Rand, w Workload, seen map[[2]int]string, value int64) Input {
	p := rng.IntN(w.Partitions)
	single := func(row int, kinds ...OpKind) Step {
		k := kinds[rng.IntN(len(kinds))]
		s := Step{Kind: k, Row: row, Value: value}
		if (k == OpReplace || k == OpDelete) && rng.IntN(5) != 0 {
			s.ETag = seen[[2]int{p, row}]
		}
		return s
	}
	r := rng.IntN(100)
	switch {
	case r < 25:
		return Input{Partition: p, Step: Step{Kind: OpGet, Row: rng.IntN(w.Rows)}}
	case r < 85:
		return Input{Partition: p, Step: single(rng.IntN(w.Rows), OpInsert, OpInsert, OpReplace, OpReplace, OpReplace, OpDelete, OpUpsert)}
	}
	n := min(w.Rows, 2+rng.IntN(2))
	rows := rng.Perm(w.Rows)[:n]
	in := Input{Partition: p, Step: Step{Kind: OpBatch}}
	for _, row := range rows {
		s := single(row, OpInsert, OpReplace, OpDelete, OpUpsert)
		s.Value = value*10 + int64(row)
		in.Steps = append(in.Steps, s)
	}
	return in
}

// remember keeps the ETags an answer showed.
func remember(seen map[[2]int]string, in Input, out Output) {
	if !out.OK {
		return
	}
	if in.Kind == OpBatch {
		for i, s := range in.Steps {
			if i < len(out.ETags) && out.ETags[i] != "" {
				seen[[2]int{in.Partition, s.Row}] = out.ETags[i]
			}
		}
		return
	}
	if out.ETag != "" {
		seen[[2]int{in.Partition, in.Row}] = out.ETag
	}
}

func ifMatch(etag string) string {
	if etag == "" {
		return api.IfMatchAny
	}
	return etag
}

func entity(p int, s Step) api.Entity {
	return api.NewEntity(PartitionKey(p), RowKey(s.Row), map[string]api.Value{"v": api.Int64(s.Value)})
}

// perform runs one operation and turns its answer into an Output. Only service errors
// (*spec.Error) are answers; anything else is returned as an error.
func perform(ctx context.Context, b api.Backend, w Workload, in Input) (Output, error) {
	ctx, cancel := context.WithTimeout(ctx, w.OpTimeout)
	defer cancel()
	out := Output{OK: true, FailedIndex: -1}
	var err error
	pk := PartitionKey(in.Partition)
	switch in.Kind {
	case OpGet:
		var e api.Entity
		if e, err = b.GetEntity(ctx, w.Table, pk, RowKey(in.Row), nil); err == nil {
			out.Value, out.ETag = e.Properties["v"].Int(), e.ETag
		}
	case OpInsert:
		var e api.Entity
		if e, err = b.InsertEntity(ctx, w.Table, entity(in.Partition, in.Step)); err == nil {
			out.ETag = e.ETag
		}
	case OpReplace:
		out.ETag, err = b.UpdateEntity(ctx, w.Table, entity(in.Partition, in.Step), api.Replace, ifMatch(in.ETag))
	case OpUpsert:
		out.ETag, err = b.UpdateEntity(ctx, w.Table, entity(in.Partition, in.Step), api.Replace, "")
	case OpDelete:
		err = b.DeleteEntity(ctx, w.Table, pk, RowKey(in.Row), ifMatch(in.ETag))
	case OpBatch:
		ops := make([]api.BatchOp, len(in.Steps))
		for i, s := range in.Steps {
			op := api.BatchOp{Entity: entity(in.Partition, s), IfMatch: s.ETag}
			switch s.Kind {
			case OpInsert:
				op.Kind = api.BatchInsert
			case OpReplace:
				op.Kind = api.BatchReplace
			case OpDelete:
				op.Kind = api.BatchDelete
			case OpUpsert:
				op.Kind, op.IfMatch = api.BatchInsertOrReplace, ""
			}
			ops[i] = op
		}
		var res []api.BatchResult
		if res, err = b.SubmitBatch(ctx, w.Table, ops); err == nil {
			if len(res) != len(ops) {
				return Output{}, fmt.Errorf("%d results for %d operations", len(res), len(ops))
			}
			for i, r := range res {
				if ops[i].Kind == api.BatchDelete {
					out.ETags = append(out.ETags, "")
				} else {
					out.ETags = append(out.ETags, r.ETag)
				}
			}
		}
	}
	if err != nil {
		var se *spec.Error
		if !errors.As(err, &se) {
			return Output{}, err
		}
		out = Output{Status: se.Status, FailedIndex: -1}
		if in.Kind == OpBatch && se.Indexed {
			out.FailedIndex = se.FailedIndex
		}
	}
	return out, nil
}

// Result is the verdict of Check.
type Result struct {
	// Linearizable is true when an order was found.
	Linearizable bool
	// Verdict is porcupine's: Ok, Illegal, or Unknown when the search timed out.
	Verdict porcupine.CheckResult
	// Visualization is the HTML file written when the history is not shown linearizable.
	Visualization string
	// HistoryFile is the JSON of the history written with it.
	HistoryFile string
}

// Check searches h for a linearization, for at most timeout. When none is found it writes
// name.html (porcupine's visualization) and name.json (the operations) to dir, creating
// dir when needed (nothing is written when dir is empty).
func Check(h History, timeout time.Duration, dir, name string) (Result, error) {
	m := Model()
	verdict, info := porcupine.CheckOperationsVerbose(m, h.Operations, timeout)
	res := Result{Linearizable: verdict == porcupine.Ok, Verdict: verdict}
	if res.Linearizable || dir == "" {
		return res, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	res.Visualization = filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(m, info, res.Visualization); err != nil {
		return res, fmt.Errorf("write visualization: %w", err)
	}
	data, err := json.MarshalIndent(h.Operations, "", " ")
	if err != nil {
		return res, err
	}
	res.HistoryFile = filepath.Join(dir, name+".json")
	return res, os.WriteFile(res.HistoryFile, data, 0o644)
}
