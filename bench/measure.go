package bench

import (
	"context"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tableconform/conform/reference/api"
)

// Kind is the kind of one request, as the decorator files it.
type Kind int

// The request kinds a workload issues.
const (
	KindGet Kind = iota
	KindInsert
	KindUpdate
	KindDelete
	KindQuery
	KindBatch
	KindTable
	numKinds
)

var kindNames = [numKinds]string{"get", "insert", "update", "delete", "query", "batch", "table"}

func (k Kind) String() string {
	if k >= 0 && k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// Latencies are recorded in nanoseconds between these bounds with three significant
// digits: a request faster than 100 ns or slower than two minutes is clamped to the bound.
const (
	histMinNanos = 100
	histMaxNanos = int64(2 * time.Minute)
	histDigits   = 3
)

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMinNanos, histMaxNanos, histDigits)
}

// tally is what one worker measured for one kind of request.
type tally struct {
	hist     *hdrhistogram.Histogram
	requests int64
	entities int64
	errors   int64
}

// Meter hands out measuring decorators, one per worker, and merges what they measured. A
// Meter's workers are not safe for concurrent use with each other's histograms: each
// goroutine must use its own Worker.
type Meter struct {
	workers []*Measured
}

// NewMeter returns an empty meter.
func NewMeter() *Meter { return &Meter{} }

// Worker returns a decorator around b that records every request into histograms of its
// own. It must be used by one goroutine at a time; call it before the run starts.
func (m *Meter) Worker(b api.Backend) *Measured {
	w := &Measured{inner: b}
	m.workers = append(m.workers, w)
	return w
}

// Summary merges every worker's histograms. Call it after the workers have stopped.
func (m *Meter) Summary(elapsed time.Duration) Summary {
	var s Summary
	s.Elapsed = elapsed
	all := newHistogram()
	perKind := map[Kind]*tally{}
	for _, w := range m.workers {
		for k := range w.tallies {
			t := w.tallies[k]
			if t == nil {
				continue
			}
			agg := perKind[Kind(k)]
			if agg == nil {
				agg = &tally{hist: newHistogram()}
				perKind[Kind(k)] = agg
			}
			agg.hist.Merge(t.hist)
			agg.requests += t.requests
			agg.entities += t.entities
			agg.errors += t.errors
			all.Merge(t.hist)
		}
	}
	for k, t := range perKind {
		s.Kinds = append(s.Kinds, kindSummary(k, t, elapsed))
		s.Requests += t.requests
		s.Entities += t.entities
		s.Errors += t.errors
	}
	sort.Slice(s.Kinds, func(i, j int) bool { return s.Kinds[i].Kind < s.Kinds[j].Kind })
	s.Latency = latencyOf(all)
	if secs := elapsed.Seconds(); secs > 0 {
		s.OpsPerSec = float64(s.Requests) / secs
		s.EntitiesPerSec = float64(s.Entities) / secs
	}
	return s
}

func kindSummary(k Kind, t *tally, elapsed time.Duration) KindSummary {
	ks := KindSummary{Kind: k.String(), Requests: t.requests, Entities: t.entities, Errors: t.errors, Latency: latencyOf(t.hist)}
	if secs := elapsed.Seconds(); secs > 0 {
		ks.OpsPerSec = float64(t.requests) / secs
	}
	return ks
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	return Latency{
		P50:  us(h.ValueAtQuantile(50)),
		P99:  us(h.ValueAtQuantile(99)),
		P999: us(h.ValueAtQuantile(99.9)),
		Max:  us(h.Max()),
		Mean: h.Mean() / 1e3,
	}
}

// Latency holds latency percentiles in microseconds.
type Latency struct {
	P50  float64 `json:"p50_us"`
	P99  float64 `json:"p99_us"`
	P999 float64 `json:"p999_us"`
	Max  float64 `json:"max_us"`
	Mean float64 `json:"mean_us"`
}

// KindSummary is what a run measured for one kind of request.
type KindSummary struct {
	Kind      string  `json:"kind"`
	Requests  int64   `json:"requests"`
	Entities  int64   `json:"entities"`
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	Latency   Latency `json:"latency"`
}

// Summary is what a run measured: every request of every worker, merged.
type Summary struct {
	Elapsed        time.Duration `json:"elapsed_ns"`
	Requests       int64         `json:"requests"`
	Entities       int64         `json:"entities"`
	Errors         int64         `json:"errors"`
	OpsPerSec      float64       `json:"ops_per_sec"`
	EntitiesPerSec float64       `json:"entities_per_sec"`
	Latency        Latency       `json:"latency"`
	// CPUPerOp is the CPU time this process spent per request, in microseconds, and CPUScope
	// says what it counts: CPUClient, or CPUClientServer when the server runs in this
	// process (reference, reference-http). Unlike throughput it does not depend on how much
	// of the machine other processes take.
	CPUPerOp float64       `json:"cpu_us_per_op"`
	CPUScope string        `json:"cpu_scope,omitempty"`
	Kinds    []KindSummary `json:"kinds"`
}

// What Summary.CPUPerOp counts.
const (
	CPUClient       = "client"
	CPUClientServer = "client+server"
)

// setCPU records the process CPU time spent during the run; serverInProcess says the
// server ran in this process too.
func (s *Summary) setCPU(cpu time.Duration, serverInProcess bool) {
	if s.Requests > 0 && cpu > 0 {
		s.CPUPerOp = float64(cpu.Nanoseconds()) / 1e3 / float64(s.Requests)
		s.CPUScope = CPUClient
		if serverInProcess {
			s.CPUScope = CPUClientServer
		}
	}
}

// CPUMetric is the benchmark unit of CPUPerOp, named for what it counts:
// "client-cpu-µs/op" or "client+server-cpu-µs/op".
func (s *Summary) CPUMetric() string { return s.CPUScope + "-cpu-µs/op" }

// Measured is an api.Backend decorator that records the latency, entity count and outcome of
// every request into its worker's histograms. Entities count one per single-entity
// request, the entities returned by a query and the operations of a batch.
type Measured struct {
	inner   api.Backend
	tallies [numKinds]*tally
}

var _ api.Backend = (*Measured)(nil)

func (m *Measured) record(k Kind, start time.Time, entities int, err error) {
	d := time.Since(start).Nanoseconds()
	t := m.tallies[k]
	if t == nil {
		t = &tally{hist: newHistogram()}
		m.tallies[k] = t
	}
	d = max(histMinNanos, min(d, histMaxNanos))
	_ = t.hist.RecordValue(d) // in range by construction
	t.requests++
	if err != nil {
		t.errors++
		return
	}
	t.entities += int64(entities)
}

// CreateTable is measured as a table request.
func (m *Measured) CreateTable(ctx context.Context, name string) error {
	start := time.Now()
	err := m.inner.CreateTable(ctx, name)
	m.record(KindTable, start, 0, err)
	return err
}

// DeleteTable is measured as a table request.
func (m *Measured) DeleteTable(ctx context.Context, name string) error {
	start := time.Now()
	err := m.inner.DeleteTable(ctx, name)
	m.record(KindTable, start, 0, err)
	return err
}

// QueryTables is measured as a table request.
func (m *Measured) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	start := time.Now()
	p, err := m.inner.QueryTables(ctx, q)
	m.record(KindTable, start, 0, err)
	return p, err
}

// InsertEntity is measured as an insert of one entity.
func (m *Measured) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	start := time.Now()
	out, err := m.inner.InsertEntity(ctx, table, e)
	m.record(KindInsert, start, 1, err)
	return out, err
}

// UpdateEntity is measured as an update of one entity.
func (m *Measured) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	start := time.Now()
	etag, err := m.inner.UpdateEntity(ctx, table, e, mode, ifMatch)
	m.record(KindUpdate, start, 1, err)
	return etag, err
}

// DeleteEntity is measured as a delete of one entity.
func (m *Measured) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	start := time.Now()
	err := m.inner.DeleteEntity(ctx, table, pk, rk, ifMatch)
	m.record(KindDelete, start, 1, err)
	return err
}

// GetEntity is measured as a read of one entity.
func (m *Measured) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	start := time.Now()
	e, err := m.inner.GetEntity(ctx, table, pk, rk, sel)
	m.record(KindGet, start, 1, err)
	return e, err
}

// QueryEntities is measured as one query page; its entities are those returned.
func (m *Measured) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	start := time.Now()
	p, err := m.inner.QueryEntities(ctx, table, q)
	m.record(KindQuery, start, len(p.Entities), err)
	return p, err
}

// SubmitBatch is measured as one batch request; its entities are its operations.
func (m *Measured) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	start := time.Now()
	r, err := m.inner.SubmitBatch(ctx, table, ops)
	m.record(KindBatch, start, len(ops), err)
	return r, err
}
