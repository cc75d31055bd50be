package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// TablePrefix starts every table a benchmark creates: the framework's prefix
// (suites/framework.TablePrefix), so that `conform clean` finds what a crashed run left.
const TablePrefix = "cf"

// DefaultWorkers is how many workers a workload runs unless it fixes its own number.
const DefaultWorkers = 8

// Sampling of results: every sampleEvery-th step of a worker (and its first) is checked in
// depth; at most maxLaterChecks read-backs per worker run after the timed phase.
const (
	sampleEvery    = 16
	maxLaterChecks = 16
)

// MaxErrorRate is the share of failed steps above which a run fails: past it the figures
// describe error handling, not the workload. Below it, errors are counted and reported
// (a throttling service answers 503 ServerBusy under a hot partition; EVIDENCE.md 9).
const MaxErrorRate = 0.10

// tableRun names the tables this process creates (UseRun).
var tableRun = struct {
	id      string
	sharded bool
	shard   int
}{id: newRunID()}

func newRunID() string {
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b [8]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = digits[int(c)%len(digits)]
	}
	return string(out)
}

var tableSeq atomic.Int64

// newTableName returns a fresh table name: TablePrefix, the run id, "b" and a sequence
// number (letters and digits only, at most 63 characters; EVIDENCE.md 1.1).
// A shard's tables carry its index before a 6-digit sequence number (UseRun).
func newTableName() string {
	if tableRun.sharded {
		return fmt.Sprintf("%s%sb%d%06d", TablePrefix, tableRun.id, tableRun.shard, tableSeq.Add(1))
	}
	return fmt.Sprintf("%s%sb%d", TablePrefix, tableRun.id, tableSeq.Add(1))
}

// Param is one parameter of a case, shown in its name as key=value.
type Param struct {
	Key, Value string
}

// Case is one benchmarked load: a family (the Benchmark function, e.g. "PointGet"), the
// parameters that name its sub-benchmark, and how to set it up.
type Case struct {
	Family string
	Params []Param
	// Workers is the default number of concurrent workers (DefaultWorkers when zero).
	Workers int
	// FixedWorkers keeps Workers even when Env.Workers asks for another number (the
	// parallel-queries case is defined by its worker count).
	FixedWorkers bool
	// Note is a caveat printed with the results.
	Note string
	// Large marks cases that run only when large runs are asked for.
	Large bool
	// Tags group cases for selection ("ops", "ycsb", "guide").
	Tags []string

	setup func(ctx context.Context, env *Env, table string) (*workload, error)
}

// Sub returns the parameters as a benchmark sub-name: "partitions=16/payload=1KiB".
func (c Case) Sub() string {
	parts := make([]string, len(c.Params))
	for i, p := range c.Params {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, "/")
}

// Name returns Family and Sub joined: "PointGet/partitions=16/payload=1KiB".
func (c Case) Name() string {
	if len(c.Params) == 0 {
		return c.Family
	}
	return c.Family + "/" + c.Sub()
}

// HasTag reports whether c carries tag t.
func (c Case) HasTag(t string) bool {
	for _, x := range c.Tags {
		if x == t {
			return true
		}
	}
	return false
}

// Env is where a case runs: the backend (unmeasured: loading and verification go through it
// directly), the backend's name, the run's seed and size.
type Env struct {
	Backend api.Backend
	Name    string
	// Large selects the larger data sets.
	Large bool
	// Seed makes the workers' random choices reproducible; runs print it.
	Seed uint64
	// Workers overrides each case's default worker count when positive.
	Workers int
	// ServerInProcess says the backend's server runs in this process (reference,
	// reference-http), so that the CPU time measured is the client's and the server's.
	ServerInProcess bool
	// Quick shrinks every data set to a few hundred entities, keeping the case names: for
	// tests of the workloads themselves, never for measurement.
	Quick bool
	// Progress, when set, counts the entities loaded and the steps run, for progress lines.
	Progress *Progress
}

// Progress counts what a workload has done so far, read by another goroutine for progress
// lines: the entities its loading wrote and the steps its runs took.
type Progress struct {
	loaded atomic.Int64
	steps  atomic.Int64
}

// Loaded is how many entities the loading has written so far.
func (p *Progress) Loaded() int64 { return p.loaded.Load() }

// Steps is how many steps the runs have taken so far, warm-up included.
func (p *Progress) Steps() int64 { return p.steps.Load() }

// countingLoads is a backend that counts in p the entities written through it by inserts
// and transactions, as loading writes them.
type countingLoads struct {
	api.Backend
	p *Progress
}

func (c countingLoads) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	out, err := c.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		c.p.loaded.Add(1)
	}
	return out, err
}

func (c countingLoads) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	res, err := c.Backend.SubmitBatch(ctx, table, ops)
	if err == nil {
		c.p.loaded.Add(int64(len(ops)))
	}
	return res, err
}

// workload is a prepared case.
type workload struct {
	// before prepares for a run of n steps (n <= 0 when a duration bounds the run) and
	// returns the most steps the run may take (0: unbounded). It runs untimed. Optional.
	before func(ctx context.Context, n int) (int, error)
	// step performs one operation of the workload through w.B.
	step func(w *Worker) error
	// tables are extra tables the workload created, deleted with its own.
	tables []string
}

// Worker is one worker's handle during a run.
type Worker struct {
	ID    int
	Rand  *mrand.Rand
	B     api.Backend // measured
	Ctx   context.Context
	Table string

	measured *Measured
	steps    int64
	writes   int64
	failed   int64
	firstErr error
	checks   []func(ctx context.Context, b api.Backend) error
	choosers map[Distribution]chooser
}

// chooser returns the worker's own chooser of distribution d (validated by the caller).
func (w *Worker) chooser(d Distribution) chooser {
	c := w.choosers[d]
	if c == nil {
		c, _ = newChooser(d)
		if c == nil {
			c = uniformChooser{}
		}
		if w.choosers == nil {
			w.choosers = map[Distribution]chooser{}
		}
		w.choosers[d] = c
	}
	return c
}

// deep reports whether this step's results are checked in depth.
func (w *Worker) deep() bool { return w.steps%sampleEvery == 0 }

// later queues a check that runs after the timed phase through the unmeasured backend.
// Of a worker's writes, the first and every sampleEvery-th after it are read back.
func (w *Worker) later(check func(ctx context.Context, b api.Backend) error) {
	if w.writes%sampleEvery == 0 && len(w.checks) < maxLaterChecks {
		w.checks = append(w.checks, check)
	}
	w.writes++
}

// WrongResultError reports a result that contradicts what the workload wrote: the backend
// answered, but wrongly.
type WrongResultError struct {
	Case   string
	Detail string
}

func (e *WrongResultError) Error() string {
	if e.Case == "" {
		return "wrong result: " + e.Detail
	}
	return e.Case + ": wrong result: " + e.Detail
}

func wrong(format string, args ...any) error {
	return &WrongResultError{Detail: fmt.Sprintf(format, args...)}
}

// Load is a case prepared on a backend: its table created and its data loaded. It can be
// run any number of times; Close deletes its tables.
type Load struct {
	Case Case
	// env's Backend retries throttling (loading, verification, clean-up); measured is the
	// backend itself, which the measuring decorator wraps and retries as it counts.
	env      *Env
	measured api.Backend
	table    string
	wl       *workload
	runs     int
	// requestsPerStep is how many requests a step took in the warm-up (0 before it).
	requestsPerStep float64
}

// Prepare creates the case's table on env's backend and loads its data. ctx bounds the
// loading only.
func Prepare(ctx context.Context, env *Env, c Case) (*Load, error) {
	if c.setup == nil {
		return nil, fmt.Errorf("%s: case has no setup", c.Name())
	}
	measured := env.Backend
	unmeasured := *env
	unmeasured.Backend = retrying{env.Backend}
	if env.Progress != nil {
		unmeasured.Backend = countingLoads{unmeasured.Backend, env.Progress}
	}
	env = &unmeasured
	table := newTableName()
	if err := env.Backend.CreateTable(ctx, table); err != nil {
		return nil, fmt.Errorf("%s: create table %s: %w", c.Name(), table, err)
	}
	wl, err := c.setup(ctx, env, table)
	if err != nil {
		_ = env.Backend.DeleteTable(context.WithoutCancel(ctx), table)
		return nil, fmt.Errorf("%s: load: %w", c.Name(), err)
	}
	return &Load{Case: c, env: env, measured: measured, table: table, wl: wl}, nil
}

// Close deletes the load's tables.
func (l *Load) Close(ctx context.Context) error {
	var errs []error
	for _, t := range append([]string{l.table}, l.wl.tables...) {
		if err := l.env.Backend.DeleteTable(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("delete table %s: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// WarmupOps is how many operations Warm runs: a few per worker, so that every worker's
// connection is open and both sides' pools and caches are warm before anything is measured.
func (l *Load) WarmupOps() int { return 8 * l.Workers() }

// Warm runs the load for WarmupOps operations, unmeasured, as a run before the first
// measured one; its results are checked like any run's.
func (l *Load) Warm(ctx context.Context) error {
	res, err := l.Run(ctx, Limit{Ops: l.WarmupOps()}, nil)
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if res.Steps > 0 {
		l.requestsPerStep = float64(res.Requests) / float64(res.Steps)
	}
	return nil
}

// RequestsPerStep is how many requests a step of the load took in its warm-up: 1 for a
// point read, the pages of a scan, a read and a write for a read-modify-write. It is 0
// before Warm.
func (l *Load) RequestsPerStep() float64 { return l.requestsPerStep }

// StepsFor is how many steps make about requests requests (at least one), by the warm-up's
// requests per step; before Warm, one step per request. `conform bench --ops` counts
// requests, so that a table scan of many pages and a point read get the same number of
// requests, not of steps.
func (l *Load) StepsFor(requests int) int {
	if l.requestsPerStep <= 1 {
		return max(1, requests)
	}
	return max(1, int(math.Round(float64(requests)/l.requestsPerStep)))
}

// Workers returns how many workers a run of the load uses.
func (l *Load) Workers() int {
	w := l.Case.Workers
	if w <= 0 {
		w = DefaultWorkers
	}
	if l.env.Workers > 0 && !l.Case.FixedWorkers {
		w = l.env.Workers
	}
	return w
}

// Limit bounds a run: by a number of steps (testing.B's b.N), by a duration, or both.
// Rate, when positive, paces the run at that many steps per second over all its workers
// (`conform bench --target-rate`): step n starts no earlier than n/Rate seconds into the
// run. With RateTo too, the pace ramps linearly from Rate to RateTo over the run (its
// Duration, else the time its Ops take at the mean rate), so that one run shows the rate
// where throttling starts.
//
// A paced run is a closed model: a worker takes the next step only when its last one is
// done, so a slow backend delays later steps (they are counted late) and the offered load
// falls to what the workers complete. Open makes it an open model (`conform bench
// --arrival-rate`, k6's arrival-rate executors): step n is started at its intended time
// whatever the workers are doing, by an idle worker or a new one, up to MaxWorkers
// (DefaultMaxWorkers when zero); a step that finds every worker busy at the cap is
// dropped and counted. Either way the run records each request's latency from its
// intended start beside its service time (Summary.Intended).
type Limit struct {
	Ops        int
	Duration   time.Duration
	Rate       float64
	RateTo     float64
	Open       bool
	MaxWorkers int
}

// DefaultMaxWorkers is the most workers an open run grows to unless Limit.MaxWorkers says.
const DefaultMaxWorkers = 256

// paced reports whether the run's steps have intended starts.
func (l Limit) paced() bool { return l.Rate > 0 }

// startOf is when step n (from 0) may start, counted from the run's start, under the
// limit's pace; zero when the run is not paced.
func (l Limit) startOf(n int64) time.Duration {
	if l.Rate <= 0 {
		return 0
	}
	if l.RateTo <= 0 || l.RateTo == l.Rate {
		return time.Duration(float64(n) / l.Rate * float64(time.Second))
	}
	span := l.Duration.Seconds()
	if span <= 0 {
		span = 2 * float64(l.Ops) / (l.Rate + l.RateTo)
	}
	if span <= 0 {
		return 0
	}
	// The steps started by t <= span are r0·t + a·t²/2 with a = (r1−r0)/span; past the
	// span the pace stays at r1.
	r0, r1 := l.Rate, l.RateTo
	if inSpan := (r0 + r1) / 2 * span; float64(n) >= inSpan {
		return time.Duration((span + (float64(n)-inSpan)/r1) * float64(time.Second))
	}
	a := (r1 - r0) / span
	t := (math.Sqrt(r0*r0+2*a*float64(n)) - r0) / a
	return time.Duration(t * float64(time.Second))
}

// Timer is the part of testing.B a run uses to exclude preparation and verification from
// the measured time. A nil Timer is allowed.
type Timer interface {
	ResetTimer()
	StartTimer()
	StopTimer()
}

// Result is what one run measured.
type Result struct {
	Backend string  `json:"backend"`
	Case    string  `json:"case"`
	Family  string  `json:"family"`
	Params  []Param `json:"params"`
	Workers int     `json:"workers"`
	// Steps counts the workload's operations; a step may take several requests (a
	// read-modify-write, a scan over pages).
	Steps int64  `json:"steps"`
	Note  string `json:"note,omitempty"`
	// Started is when the timed phase began, by this machine's clock.
	Started time.Time `json:"started"`
	Summary
	// Raw is what the run measured in mergeable form (histograms, series, partitions).
	Raw RawMeasures `json:"-"`
}

// Run drives the load until limit is reached and returns what the decorator measured. It
// fails with a *WrongResultError when a sampled result is wrong, and with an error when
// more than MaxErrorRate of the steps failed.
func (l *Load) Run(ctx context.Context, limit Limit, t Timer) (Result, error) {
	if t == nil {
		t = nopTimer{}
	}
	if limit.Ops <= 0 && limit.Duration <= 0 {
		return Result{}, fmt.Errorf("%s: a run needs a number of operations or a duration", l.Case.Name())
	}
	if limit.Open && !limit.paced() {
		return Result{}, fmt.Errorf("%s: an open run needs an arrival rate", l.Case.Name())
	}
	t.StopTimer()
	l.runs++
	bound := limit.Ops
	if l.wl.before != nil {
		n, err := l.wl.before(ctx, limit.Ops)
		if err != nil {
			return Result{}, fmt.Errorf("%s: prepare run: %w", l.Case.Name(), err)
		}
		if n > 0 && (bound <= 0 || n < bound) {
			bound = n
		}
	}
	nw := l.Workers()
	meter := NewMeter()
	if limit.paced() {
		meter.RecordIntended()
	}
	var workers []*Worker
	newWorker := func() *Worker {
		i := len(workers)
		seed := l.env.Seed ^ fnv64(uint64(l.runs)<<20|uint64(i))
		m := meter.Worker(l.measured)
		w := &Worker{ID: i, Rand: mrand.New(mrand.NewPCG(seed, uint64(i))), B: m, measured: m, Ctx: ctx, Table: l.table}
		workers = append(workers, w)
		return w
	}
	for range nw {
		newWorker()
	}
	var (
		stop     atomic.Bool
		mu       sync.Mutex
		wrongErr error
		wg       sync.WaitGroup
	)
	// step runs one step on w and reports whether the run must stop (a wrong result).
	progress := l.env.Progress
	step := func(w *Worker) bool {
		err := l.wl.step(w)
		w.steps++
		if progress != nil {
			progress.steps.Add(1)
		}
		if err == nil || Throttled(err) { // a throttled step is counted by the meter, never as a failure
			return false
		}
		var we *WrongResultError
		if errors.As(err, &we) {
			mu.Lock()
			if wrongErr == nil {
				wrongErr = err
			}
			mu.Unlock()
			stop.Store(true)
			return true
		}
		w.failed++
		if w.firstErr == nil {
			w.firstErr = err
		}
		return false
	}
	var deadline time.Time
	t.ResetTimer()
	t.StartTimer()
	start, cpu0 := time.Now(), processCPU()
	meter.Begin(start)
	if limit.Duration > 0 {
		deadline = start.Add(limit.Duration)
	}
	if limit.Open {
		nw = l.arrive(ctx, limit, bound, start, deadline, workers[:nw], newWorker, step, &stop, &wg)
	} else {
		var issued atomic.Int64
		for _, w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					n := issued.Add(1)
					if bound > 0 && n > int64(bound) {
						break
					}
					var at time.Time
					if limit.paced() {
						at = start.Add(limit.startOf(n - 1))
						if !pace(ctx, at, deadline) {
							break
						}
					}
					if !deadline.IsZero() && time.Now().After(deadline) {
						break
					}
					if ctx.Err() != nil {
						break
					}
					if limit.paced() {
						w.measured.intend(at, time.Now())
					}
					if step(w) {
						break
					}
				}
			}()
		}
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	t.StopTimer()

	var (
		steps, failed int64
		firstErr      error
	)
	for _, w := range workers {
		steps += w.steps
		failed += w.failed
		if firstErr == nil {
			firstErr = w.firstErr
		}
	}
	raw := meter.Raw()
	res := Result{Backend: l.env.Name, Case: l.Case.Name(), Family: l.Case.Family, Params: l.Case.Params,
		Workers: nw, Steps: steps, Note: l.Case.Note, Started: start, Summary: raw.Summary(elapsed), Raw: raw}
	res.setCPU(cpu, l.env.ServerInProcess)
	if wrongErr != nil {
		return res, l.named(wrongErr)
	}
	if err := l.verify(ctx, workers); err != nil {
		return res, err
	}
	if steps > 0 && float64(failed) > MaxErrorRate*float64(steps) {
		return res, fmt.Errorf("%s: %d of %d operations failed (more than %.0f%%); first: %w", l.Case.Name(), failed, steps, MaxErrorRate*100, firstErr)
	}
	if ctx.Err() != nil && (bound <= 0 || steps < int64(bound)) && deadline.IsZero() {
		return res, fmt.Errorf("%s: run interrupted after %d operations: %w", l.Case.Name(), steps, ctx.Err())
	}
	return res, nil
}

// arrive runs an open run (Limit.Open): it starts step n at its intended time on an idle
// worker, or on a new one while there are fewer than the cap, and drops it otherwise. It
// returns, with the number of workers it ran, when the arrivals end (bound steps offered,
// the deadline, ctx done or stop); the caller waits on wg for the steps under way.
func (l *Load) arrive(ctx context.Context, limit Limit, bound int, start, deadline time.Time, initial []*Worker,
	newWorker func() *Worker, step func(*Worker) bool, stop *atomic.Bool, wg *sync.WaitGroup) (workers int) {
	type arrival struct{ at time.Time }
	arrivals := make(chan arrival) // unbuffered: a send succeeds only on an idle worker
	defer close(arrivals)
	maxWorkers := limit.MaxWorkers
	if maxWorkers <= 0 {
		maxWorkers = DefaultMaxWorkers
	}
	maxWorkers = max(maxWorkers, len(initial))
	dispatcher := newWorker().measured // counts the dropped steps; never runs one
	running := 0
	serve := func(w *Worker, first *arrival) {
		running++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if first != nil {
				w.measured.intend(first.at, time.Now())
				if step(w) {
					return
				}
			}
			for a := range arrivals {
				if stop.Load() {
					continue // drain: the run is over
				}
				w.measured.intend(a.at, time.Now())
				if step(w) {
					return
				}
			}
		}()
	}
	for _, w := range initial {
		serve(w, nil)
	}
	for n := int64(0); bound <= 0 || n < int64(bound); n++ {
		at := start.Add(limit.startOf(n))
		if stop.Load() || !pace(ctx, at, deadline) {
			break
		}
		select {
		case arrivals <- arrival{at}:
			continue
		default:
		}
		if running < maxWorkers {
			serve(newWorker(), &arrival{at})
			continue
		}
		dispatcher.drop(at)
	}
	return running
}

// verify runs the read-backs the workers queued, through the unmeasured backend.
func (l *Load) verify(ctx context.Context, workers []*Worker) error {
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	for _, w := range workers {
		for _, check := range w.checks {
			if err := check(vctx, l.env.Backend); err != nil {
				var we *WrongResultError
				if errors.As(err, &we) {
					return l.named(err)
				}
				return fmt.Errorf("%s: verify: %w", l.Case.Name(), err)
			}
		}
		w.checks = nil
	}
	return nil
}

func (l *Load) named(err error) error {
	var we *WrongResultError
	if errors.As(err, &we) && we.Case == "" {
		return &WrongResultError{Case: l.Case.Name(), Detail: we.Detail}
	}
	return err
}

// pace waits until at, and reports false when the run should stop first (ctx is done, or
// at lies past a deadline).
func pace(ctx context.Context, at, deadline time.Time) bool {
	if !deadline.IsZero() && at.After(deadline) {
		return false
	}
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

type nopTimer struct{}

func (nopTimer) ResetTimer() {}
func (nopTimer) StartTimer() {}
func (nopTimer) StopTimer()  {}
