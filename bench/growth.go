package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// The growth family loads one table in steps of growing size and, at each step, measures
// a point read, a partition-range query, an upsert and a batch: how each operation's cost
// grows with the data (Azurite slows down as a table grows; EVIDENCE.md has no limit on a
// table's size). Its records are those of the single-operation cases (dataset), with a
// payload of growthPayload bytes dealt over growthPartitions partitions, so that a step
// only appends rows to each partition.
const (
	GrowthFamily     = "Growth"
	growthPartitions = 10
	growthPayload    = 256
)

// The growth family's operations, in report order.
const (
	GrowthPointRead  = "point read"
	GrowthRangeQuery = "range query"
	GrowthUpsert     = "upsert"
	GrowthBatch      = "batch"
)

var growthOperations = []string{GrowthPointRead, GrowthRangeQuery, GrowthUpsert, GrowthBatch}

// GrowthSizes are the growth family's steps: 10^4, 10^5 and 10^6 entities, and 10^7 with
// large (about 10 GB of the reference's memory at about 900 bytes an entity).
func GrowthSizes(large bool) []int {
	sizes := []int{10_000, 100_000, 1_000_000}
	if large {
		sizes = append(sizes, 10_000_000)
	}
	return sizes
}

// GrowthConfig says how a growth run goes.
type GrowthConfig struct {
	// Sizes are the steps' entity counts, increasing; each at least 1,000 (a partition
	// must hold a batch).
	Sizes []int
	// Requests is how many requests each operation runs at each step.
	Requests int
	// Budget bounds each step, its loading and its four operations: a step past it is
	// stopped, said so in its Stopped, and the larger steps are not run.
	Budget time.Duration
	// Memory, when set, returns how many bytes the backend holds now: the heap of this
	// process, for a reference that runs in it.
	Memory func() uint64
	// Restart, when set, restarts the backend from its data directory after each step and
	// returns how long the restart took (the reference with --growth-data).
	Restart func(ctx context.Context) (time.Duration, error)
}

// GrowthOp is one operation measured at one step.
type GrowthOp struct {
	Operation string  `json:"operation"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	Latency   Latency `json:"latency"`
	// Stopped says why the operation ran fewer requests than asked, or failed.
	Stopped string `json:"stopped,omitempty"`
}

// GrowthStep is one step of a growth run: the table's size, its loading, the operations.
type GrowthStep struct {
	Entities    int           `json:"entities"`
	Loaded      int64         `json:"loaded"`
	LoadElapsed time.Duration `json:"load_ns"`
	Ops         []GrowthOp    `json:"operations"`
	// BytesPerEntity is the backend's memory per entity (GrowthConfig.Memory), 0 unknown.
	BytesPerEntity float64 `json:"bytes_per_entity,omitempty"`
	// Restart is how long the backend took to restart from its data after the step
	// (GrowthConfig.Restart), 0 when not measured.
	Restart time.Duration `json:"restart_ns,omitempty"`
	// Stopped says why the step did not finish within its budget.
	Stopped string `json:"stopped,omitempty"`
}

// GrowthResult is a growth run on one backend.
type GrowthResult struct {
	Backend string        `json:"backend"`
	Budget  time.Duration `json:"budget_ns"`
	Steps   []GrowthStep  `json:"steps"`
	// Error says why the run could not start or went wrong (a wrong result, say).
	Error string `json:"error,omitempty"`
}

// Op returns the step's measure of operation name.
func (s GrowthStep) Op(name string) (GrowthOp, bool) {
	for _, o := range s.Ops {
		if o.Operation == name {
			return o, true
		}
	}
	return GrowthOp{}, false
}

// GrowthGroup is the workload pattern that selects the growth family (`conform bench
// --workloads growth`, go test -bench Growth -args -workloads growth).
const GrowthGroup = "growth"

// SplitGrowth takes the growth family's pattern out of patterns: the other patterns, and
// whether growth was among them.
func SplitGrowth(patterns []string) (rest []string, growth bool) {
	for _, p := range patterns {
		if strings.EqualFold(strings.TrimSpace(p), GrowthGroup) || strings.EqualFold(strings.TrimSpace(p), GrowthFamily) {
			growth = true
			continue
		}
		rest = append(rest, p)
	}
	return rest, growth
}

// ParseGrowthSizes reads a comma list of entity counts ("10000,100000" or "1e4,1e5").
func ParseGrowthSizes(v string) ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || x != math.Trunc(x) || x > 1e9 {
			return nil, fmt.Errorf("growth step %q: want a whole number of entities, e.g. 10000 or 1e4", f)
		}
		sizes = append(sizes, int(x))
	}
	return sizes, ValidateGrowthSizes(sizes)
}

// ValidateGrowthSizes checks that sizes increase and each is at least 1,000.
func ValidateGrowthSizes(sizes []int) error {
	if len(sizes) == 0 {
		return errors.New("no growth step")
	}
	for i, n := range sizes {
		if n < 1000 {
			return fmt.Errorf("growth step %d: at least 1,000 entities", n)
		}
		if i > 0 && n <= sizes[i-1] {
			return fmt.Errorf("growth steps must increase: %d after %d", n, sizes[i-1])
		}
	}
	return nil
}

// Grower is a table of the growth family that grows step by step: Grow loads it to a
// size, Measure runs the four operations on it. Close deletes it.
type Grower struct {
	env        *Env
	unmeasured Env
	progress   *Progress
	table      string
	loaded     int
	memory     func() uint64
	heap0      uint64
}

// NewGrower creates the growth table on env's backend; memory, when set, measures the
// backend's memory (GrowthConfig.Memory).
func NewGrower(ctx context.Context, env *Env, memory func() uint64) (*Grower, error) {
	g := &Grower{env: env, progress: env.Progress, table: newTableName(), memory: memory}
	if g.progress == nil {
		g.progress = &Progress{}
	}
	g.unmeasured = *env
	g.unmeasured.Backend = countingLoads{retrying{env.Backend}, g.progress}
	if err := g.unmeasured.Backend.CreateTable(ctx, g.table); err != nil {
		return nil, fmt.Errorf("create table %s: %w", g.table, err)
	}
	if memory != nil {
		g.heap0 = memory()
	}
	return g, nil
}

// Close deletes the table.
func (g *Grower) Close(ctx context.Context) error {
	return g.unmeasured.Backend.DeleteTable(ctx, g.table)
}

func (g *Grower) dataset() dataset {
	return dataset{records: g.loaded, partitions: growthPartitions, payload: growthPayload}
}

// Grow loads the table up to n entities (n larger than its size) and returns the step so
// far: what was loaded and how long it took, and Stopped when ctx ended first.
func (g *Grower) Grow(ctx context.Context, n int) (GrowthStep, error) {
	step := GrowthStep{Entities: n}
	before, began := g.progress.Loaded(), time.Now()
	d := dataset{records: n, partitions: growthPartitions, payload: growthPayload}
	err := d.loadRange(ctx, g.unmeasured.Backend, g.table, g.loaded, n)
	step.Loaded, step.LoadElapsed = g.progress.Loaded()-before, time.Since(began)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			step.Stopped = fmt.Sprintf("stopped: loading wrote %d of %d entities within the step's budget", step.Loaded, n-g.loaded)
		} else {
			step.Stopped = "loading failed: " + err.Error()
		}
		return step, err
	}
	g.loaded = n
	return step, nil
}

// Measure runs each operation for about requests requests on the table, each within its
// share of the time until deadline (none when zero), into step, and records the memory
// per entity. It fails with a *WrongResultError when a result was wrong.
func (g *Grower) Measure(ctx context.Context, step *GrowthStep, requests int, deadline time.Time) error {
	for i, name := range growthOperations {
		var share time.Duration
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				step.Stopped = fmt.Sprintf("stopped: the step's budget ran out before the %s", name)
				break
			}
			share = left / time.Duration(len(growthOperations)-i)
		}
		op, err := runGrowthOp(ctx, &g.unmeasured, g.env.Backend, g.table, g.dataset(), name, requests, share)
		step.Ops = append(step.Ops, op)
		if op.Stopped != "" && step.Stopped == "" {
			step.Stopped = "stopped: " + op.Operation + ": " + op.Stopped
		}
		var we *WrongResultError
		if errors.As(err, &we) {
			return err
		}
	}
	if g.memory != nil && g.loaded > 0 {
		step.BytesPerEntity = float64(int64(g.memory())-int64(g.heap0)) / float64(g.loaded)
	}
	return nil
}

// RunGrowth runs the growth family on env's backend in one table, deleted afterwards, and
// calls say with a line as each step is loaded and measured.
func RunGrowth(ctx context.Context, env *Env, cfg GrowthConfig, say func(string)) GrowthResult {
	res := GrowthResult{Backend: env.Name, Budget: cfg.Budget}
	if err := ValidateGrowthSizes(cfg.Sizes); err != nil {
		res.Error = err.Error()
		return res
	}
	if cfg.Requests <= 0 || cfg.Budget <= 0 {
		res.Error = "a growth run needs a positive number of requests and budget"
		return res
	}
	if say == nil {
		say = func(string) {}
	}
	g, err := NewGrower(ctx, env, cfg.Memory)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		_ = g.Close(cctx)
	}()
	for _, n := range cfg.Sizes {
		if ctx.Err() != nil {
			break
		}
		deadline := time.Now().Add(cfg.Budget)
		sctx, cancel := context.WithDeadline(ctx, deadline)
		step, err := g.Grow(sctx, n)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				step.Stopped = "interrupted while loading"
			} else if step.Stopped != "" && sctx.Err() != nil {
				step.Stopped += " of " + cfg.Budget.String()
			}
			res.Steps = append(res.Steps, step)
			say(fmt.Sprintf("%d entities: %s", n, step.Stopped))
			break
		}
		say(fmt.Sprintf("%d entities: loaded %d in %s", n, step.Loaded, step.LoadElapsed.Round(time.Millisecond)))
		err = g.Measure(sctx, &step, cfg.Requests, deadline)
		cancel()
		if err != nil {
			res.Error = fmt.Sprintf("%d entities: %v", n, err)
		}
		if cfg.Restart != nil && res.Error == "" {
			if step.Restart, err = cfg.Restart(ctx); err != nil {
				res.Error = fmt.Sprintf("%d entities: restart: %v", n, err)
			}
		}
		res.Steps = append(res.Steps, step)
		say(growthStepWords(step))
		if step.Stopped != "" || res.Error != "" {
			break
		}
	}
	return res
}

// growthStepWords is a step's line: each operation's p50 and p99.
func growthStepWords(s GrowthStep) string {
	line := fmt.Sprintf("%d entities:", s.Entities)
	for _, o := range s.Ops {
		line += fmt.Sprintf("  %s p50 %.0f µs p99 %.0f µs", o.Operation, o.Latency.P50, o.Latency.P99)
	}
	if s.BytesPerEntity > 0 {
		line += fmt.Sprintf("  %.0f bytes/entity", s.BytesPerEntity)
	}
	if s.Restart > 0 {
		line += fmt.Sprintf("  restarted in %s", s.Restart.Round(time.Millisecond))
	}
	if s.Stopped != "" {
		line += "  " + s.Stopped
	}
	return line
}

// runGrowthOp measures one operation on the table of d for about requests requests, within
// limit (none when zero).
func runGrowthOp(ctx context.Context, unmeasured *Env, measured api.Backend, table string, d dataset, name string, requests int, limit time.Duration) (GrowthOp, error) {
	op := GrowthOp{Operation: name}
	l := &Load{Case: Case{Family: GrowthFamily, Params: []Param{{"entities", fmt.Sprint(d.records)}, {"operation", name}}},
		env: unmeasured, measured: measured, table: table, wl: &workload{step: growthStep(d, name)}}
	if err := l.Warm(ctx); err != nil {
		op.Stopped = err.Error()
		return op, err
	}
	r, err := l.Run(ctx, Limit{Ops: l.StepsFor(requests), Duration: limit}, nil)
	op.Requests, op.Errors, op.OpsPerSec, op.Latency = r.Requests, r.Errors, r.OpsPerSec, r.Latency
	switch {
	case err != nil:
		op.Stopped = err.Error()
	case limit > 0 && r.Requests < int64(requests) && ctx.Err() == nil:
		op.Stopped = fmt.Sprintf("%d of %d requests within the %s left of the step's budget", r.Requests, requests, limit.Round(time.Millisecond))
	}
	return op, err
}

// growthStep returns the step of operation name on d: reads and queries check what they
// get; upserts and batches merge a Touched property into existing records, which leaves
// what the reads check unchanged.
func growthStep(d dataset, name string) func(w *Worker) error {
	touched := map[string]api.Value{propTouched: api.Bool(true)}
	switch name {
	case GrowthPointRead:
		return d.pointGetStep
	case GrowthRangeQuery:
		return d.rangeQueryStep
	case GrowthUpsert:
		return func(w *Worker) error {
			pk, rk := d.key(w.Rand.IntN(d.records))
			etag, err := w.B.UpdateEntity(w.Ctx, w.Table, api.NewEntity(pk, rk, touched), api.Merge, "")
			if err == nil && etag == "" {
				return wrong("upsert of (%s, %s) returned no ETag", pk, rk)
			}
			return err
		}
	default: // GrowthBatch
		return func(w *Worker) error {
			p := w.Rand.IntN(d.partitions)
			size := min(spec.MaxBatchOperations, d.rowsIn(p))
			row := w.Rand.IntN(d.rowsIn(p) - size + 1)
			ops := make([]api.BatchOp, size)
			for k := range ops {
				ops[k] = api.BatchOp{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity(d.pk(p), d.rk(row+k), touched)}
			}
			rs, err := w.B.SubmitBatch(w.Ctx, w.Table, ops)
			if err != nil {
				return err
			}
			if len(rs) != size {
				return wrong("a batch of %d upserts returned %d results", size, len(rs))
			}
			return nil
		}
	}
}

// loadRange inserts records from to to-1 of d, which extend each partition's rows.
func (d dataset) loadRange(ctx context.Context, b api.Backend, table string, from, to int) error {
	return loadPartitions(ctx, b, table, d.partitions, func(p int) []api.Entity {
		var es []api.Entity
		for row := max(0, (from-p+d.partitions-1)/d.partitions); row*d.partitions+p < to; row++ {
			if i := row*d.partitions + p; i >= from {
				es = append(es, d.entity(i))
			}
		}
		return es
	})
}

// HeapBytes is the heap this process holds after a garbage collection: what a reference
// running in it holds, plus the benchmark's own few megabytes.
func HeapBytes() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
