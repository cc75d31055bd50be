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
	// hist holds service times: from when a request was sent to its answer (YCSB's plain
	// measurement, wrk2's "uncorrected" latency). intended, kept only in paced and open
	// runs, holds latencies from when the request should have been sent (YCSB's
	// "Intended-" measurement, wrk2's corrected latency): see Measured.
	hist     *hdrhistogram.Histogram
	intended *hdrhistogram.Histogram
	requests int64
	entities int64
	errors   int64
	// throttles counts throttling answers (each retried or given up on); gaveUp counts
	// requests still throttled when the retries ran out.
	throttles int64
	gaveUp    int64
}

// Second is what all workers completed in one second of a run (counted from the run's
// start): requests, throttling answers and errors.
//
// In paced and open runs, Offered counts the steps whose intended start fell in that
// second, and Dropped those of them that never started (open model, every worker busy).
type Second struct {
	Requests  int64 `json:"requests"`
	Throttles int64 `json:"throttles,omitempty"`
	Errors    int64 `json:"errors,omitempty"`
	Offered   int64 `json:"offered,omitempty"`
	Dropped   int64 `json:"dropped,omitempty"`
}

func (s *Second) add(o Second) {
	s.Requests += o.Requests
	s.Throttles += o.Throttles
	s.Errors += o.Errors
	s.Offered += o.Offered
	s.Dropped += o.Dropped
}

// PartitionTally is what one partition answered: requests and throttling answers.
// Queries and table requests are filed under PartitionQuery and PartitionTable.
type PartitionTally struct {
	Partition string `json:"partition"`
	Requests  int64  `json:"requests"`
	Throttles int64  `json:"throttles"`
}

// Pseudo-partitions of requests that address no single partition, and of partitions past
// maxPartitions.
const (
	PartitionQuery = "(queries)"
	PartitionTable = "(table requests)"
	PartitionOther = "(other partitions)"
)

// maxPartitions bounds the partitions a worker tallies one by one.
const maxPartitions = 1024

// Meter hands out measuring decorators, one per worker, and merges what they measured. A
// Meter's workers are not safe for concurrent use with each other's histograms: each
// goroutine must use its own Worker.
type Meter struct {
	workers []*Measured
	start   time.Time
	// intended makes the workers keep latencies from the intended start beside service
	// times (RecordIntended).
	intended bool
}

// RecordIntended makes the meter's workers keep, beside each request's service time, its
// latency from its intended start, as Measured describes. Call it before the run starts.
func (m *Meter) RecordIntended() { m.intended = true }

// NewMeter returns an empty meter whose per-second series start now.
func NewMeter() *Meter { return &Meter{start: time.Now()} }

// Begin restarts the per-second series at start (the start of the timed phase). Call it
// before the workers start.
func (m *Meter) Begin(start time.Time) { m.start = start }

// Worker returns a decorator around b that records every request into histograms of its
// own. It must be used by one goroutine at a time; call it before the run starts.
func (m *Meter) Worker(b api.Backend) *Measured {
	w := &Measured{inner: b, meter: m, retry: sdkRetry}
	m.workers = append(m.workers, w)
	return w
}

// Raw merges every worker's tallies into encodable form: per kind its histogram and counts,
// the per-second series and the per-partition tallies. Call it after the workers stopped.
func (m *Meter) Raw() RawMeasures {
	perKind := map[Kind]*tally{}
	var series []Second
	parts := map[string]*PartitionTally{}
	var offered, late, dropped int64
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
			if t.intended != nil {
				if agg.intended == nil {
					agg.intended = newHistogram()
				}
				agg.intended.Merge(t.intended)
			}
			agg.requests += t.requests
			agg.entities += t.entities
			agg.errors += t.errors
			agg.throttles += t.throttles
			agg.gaveUp += t.gaveUp
		}
		for i, sec := range w.series {
			for len(series) <= i {
				series = append(series, Second{})
			}
			series[i].add(sec)
		}
		offered += w.offered
		late += w.late
		dropped += w.dropped
		for pk, pt := range w.partitions {
			agg := parts[pk]
			if agg == nil {
				agg = &PartitionTally{Partition: pk}
				parts[pk] = agg
			}
			agg.Requests += pt.Requests
			agg.Throttles += pt.Throttles
		}
	}
	var r RawMeasures
	for k, t := range perKind {
		r.Kinds = append(r.Kinds, RawKind{Kind: k.String(), Requests: t.requests, Entities: t.entities, Errors: t.errors,
			Throttles: t.throttles, GaveUp: t.gaveUp, hist: t.hist, intended: t.intended})
	}
	sortKinds(r.Kinds)
	r.Offered, r.Late, r.Dropped = offered, late, dropped
	r.Series = series
	for _, pt := range parts {
		r.Partitions = append(r.Partitions, *pt)
	}
	sortPartitions(r.Partitions)
	return r
}

// sortPartitions orders partitions by throttles, then requests, then name.
func sortPartitions(ps []PartitionTally) {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Throttles != b.Throttles {
			return a.Throttles > b.Throttles
		}
		if a.Requests != b.Requests {
			return a.Requests > b.Requests
		}
		return a.Partition < b.Partition
	})
}

func kindOrder(name string) int {
	for i, n := range kindNames {
		if n == name {
			return i
		}
	}
	return len(kindNames)
}

// Summary merges every worker's histograms. Call it after the workers have stopped.
func (m *Meter) Summary(elapsed time.Duration) Summary {
	return m.Raw().Summary(elapsed)
}

// Summary computes the figures of raw measures taken over elapsed.
func (r RawMeasures) Summary(elapsed time.Duration) Summary {
	var s Summary
	s.Elapsed = elapsed
	all := newHistogram()
	var allIntended *hdrhistogram.Histogram
	for _, k := range r.Kinds {
		h := k.Histogram()
		s.Kinds = append(s.Kinds, kindSummary(k, h, elapsed))
		if k.intended != nil {
			if allIntended == nil {
				allIntended = newHistogram()
			}
			allIntended.Merge(k.intended)
		}
		s.Requests += k.Requests
		s.Entities += k.Entities
		s.Errors += k.Errors
		s.Throttles += k.Throttles
		s.GaveUp += k.GaveUp
		all.Merge(h)
	}
	s.Latency = latencyOf(all)
	if allIntended != nil {
		l := latencyOf(allIntended)
		s.Intended = &l
	}
	s.Offered, s.Late, s.Dropped = r.Offered, r.Late, r.Dropped
	if secs := elapsed.Seconds(); secs > 0 {
		s.OpsPerSec = float64(s.Requests) / secs
		s.EntitiesPerSec = float64(s.Entities) / secs
	}
	return s
}

func kindSummary(k RawKind, h *hdrhistogram.Histogram, elapsed time.Duration) KindSummary {
	ks := KindSummary{Kind: k.Kind, Requests: k.Requests, Entities: k.Entities, Errors: k.Errors, Throttles: k.Throttles,
		GaveUp: k.GaveUp, Latency: latencyOf(h)}
	if k.intended != nil {
		l := latencyOf(k.intended)
		ks.Intended = &l
	}
	if secs := elapsed.Seconds(); secs > 0 {
		ks.OpsPerSec = float64(k.Requests) / secs
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
	Throttles int64   `json:"throttles,omitempty"`
	GaveUp    int64   `json:"gave_up_throttled,omitempty"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Latency is the service time; Intended, in paced and open runs, the latency from the
	// intended start (Measured).
	Latency  Latency  `json:"latency"`
	Intended *Latency `json:"intended_latency,omitempty"`
}

// Summary is what a run measured: every request of every worker, merged.
type Summary struct {
	Elapsed  time.Duration `json:"elapsed_ns"`
	Requests int64         `json:"requests"`
	Entities int64         `json:"entities"`
	Errors   int64         `json:"errors"`
	// Throttles counts throttling answers (429, 503 ServerBusy, 500 OperationTimedOut), each
	// retried as the SDKs retry (EVIDENCE.md E-sdk-retry); GaveUp counts the requests still
	// throttled when the retries ran out. Neither is an error.
	Throttles      int64   `json:"throttles,omitempty"`
	GaveUp         int64   `json:"gave_up_throttled,omitempty"`
	OpsPerSec      float64 `json:"ops_per_sec"`
	EntitiesPerSec float64 `json:"entities_per_sec"`
	// Latency is the service time of the requests: from when each was sent to its answer
	// (YCSB's measurement, wrk2's "uncorrected" latency).
	Latency Latency `json:"latency"`
	// Intended, set for paced (Limit.Rate) and open (Limit.Open) runs, is the latency from
	// each step's intended start (YCSB's "Intended-" measurement, wrk2's corrected latency):
	// a step that starts late because earlier ones were slow is charged its wait, which
	// Latency leaves out (coordinated omission).
	Intended *Latency `json:"intended_latency,omitempty"`
	// Offered counts the steps a paced or open run meant to start; Late those that started
	// more than LateAfter after their intended start; Dropped those an open run could not
	// start because every worker, up to Limit.MaxWorkers, was busy.
	Offered int64 `json:"offered,omitempty"`
	Late    int64 `json:"late,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
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
// request, the entities returned by a query and the operations of a batch. A throttling
// answer is retried as the SDKs retry (retryPolicy) and counted as a throttle; the latency
// recorded is the whole call's, retries and waits included, as an application sees it.
//
// When its meter records intended latencies (RecordIntended), each request is also
// recorded from its intended start: the first request of a step from the step's intended
// start (set by the runner through intend), the step's later requests from when they were
// sent, since they follow the first without waiting. Both histograms hold every request.
type Measured struct {
	inner      api.Backend
	meter      *Meter
	retry      retryPolicy
	tallies    [numKinds]*tally
	series     []Second
	partitions map[string]*PartitionTally
	// intended is the intended start of the step under way, until its first request.
	intended time.Time
	// Step counts of paced and open runs (Summary.Offered, Late, Dropped).
	offered, late, dropped int64
}

// LateAfter is how far past its intended start a step may start before it counts as late.
const LateAfter = 10 * time.Millisecond

// intend records that the next step was meant to start at intended and starts now: it
// is offered in intended's second, and late when now is more than LateAfter past it.
func (m *Measured) intend(intended, now time.Time) {
	m.intended = intended
	m.offered++
	m.second(intended).Offered++
	if now.Sub(intended) > LateAfter {
		m.late++
	}
}

// drop records a step meant to start at intended that never started.
func (m *Measured) drop(intended time.Time) {
	m.offered++
	m.dropped++
	sec := m.second(intended)
	sec.Offered++
	sec.Dropped++
}

// tallyOf returns the worker's tally of kind k, creating it.
func (m *Measured) tallyOf(k Kind) *tally {
	t := m.tallies[k]
	if t == nil {
		t = &tally{hist: newHistogram()}
		if m.meter != nil && m.meter.intended {
			t.intended = newHistogram()
		}
		m.tallies[k] = t
	}
	return t
}

// clampNanos is d in nanoseconds within the histograms' bounds.
func clampNanos(d time.Duration) int64 {
	return max(histMinNanos, min(d.Nanoseconds(), histMaxNanos))
}

var _ api.Backend = (*Measured)(nil)

// record files one request: its kind, the partition it addressed, when it began, the
// entities it carried and its outcome. A throttling outcome is a request given up on,
// not an error.
func (m *Measured) record(k Kind, pk string, start time.Time, entities int, err error) {
	now := time.Now()
	t := m.tallyOf(k)
	_ = t.hist.RecordValue(clampNanos(now.Sub(start))) // in range by construction
	if t.intended != nil {
		from := start
		if !m.intended.IsZero() && m.intended.Before(start) {
			from = m.intended
		}
		m.intended = time.Time{}
		_ = t.intended.RecordValue(clampNanos(now.Sub(from)))
	}
	t.requests++
	sec := m.second(now)
	sec.Requests++
	m.partition(pk).Requests++
	switch {
	case err == nil:
		t.entities += int64(entities)
	case Throttled(err):
		t.gaveUp++
	default:
		t.errors++
		sec.Errors++
	}
}

// throttled files one throttling answer to a request of kind k on partition pk.
func (m *Measured) throttled(k Kind, pk string) {
	t := m.tallyOf(k)
	t.throttles++
	m.second(time.Now()).Throttles++
	m.partition(pk).Throttles++
}

// MaxSeconds bounds a per-second series: a run (or a merge of shards) longer than a day
// counts its later seconds in the last one.
const MaxSeconds = 86400

func (m *Measured) second(now time.Time) *Second {
	i := 0
	if m.meter != nil {
		i = min(max(0, int(now.Sub(m.meter.start)/time.Second)), MaxSeconds-1)
	}
	for len(m.series) <= i {
		m.series = append(m.series, Second{})
	}
	return &m.series[i]
}

func (m *Measured) partition(pk string) *PartitionTally {
	if m.partitions == nil {
		m.partitions = map[string]*PartitionTally{}
	}
	p := m.partitions[pk]
	if p == nil {
		if len(m.partitions) >= maxPartitions {
			pk = PartitionOther
			if p = m.partitions[pk]; p != nil {
				return p
			}
		}
		p = &PartitionTally{Partition: pk}
		m.partitions[pk] = p
	}
	return p
}

// do performs one request through call, retrying throttling answers, and records it.
func (m *Measured) do(ctx context.Context, k Kind, pk string, call func() (int, error)) error {
	start := time.Now()
	for try := 1; ; try++ {
		n, err := call()
		if err == nil || !Throttled(err) {
			m.record(k, pk, start, n, err)
			return err
		}
		m.throttled(k, pk)
		wait, again := m.retry.wait(err, try)
		if !again {
			m.record(k, pk, start, n, err)
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			m.record(k, pk, start, n, err)
			return err
		case <-t.C:
		}
	}
}

// CreateTable is measured as a table request.
func (m *Measured) CreateTable(ctx context.Context, name string) error {
	return m.do(ctx, KindTable, PartitionTable, func() (int, error) { return 0, m.inner.CreateTable(ctx, name) })
}

// DeleteTable is measured as a table request.
func (m *Measured) DeleteTable(ctx context.Context, name string) error {
	return m.do(ctx, KindTable, PartitionTable, func() (int, error) { return 0, m.inner.DeleteTable(ctx, name) })
}

// QueryTables is measured as a table request.
func (m *Measured) QueryTables(ctx context.Context, q api.TableQuery) (p api.TablePage, err error) {
	err = m.do(ctx, KindTable, PartitionTable, func() (int, error) { p, err = m.inner.QueryTables(ctx, q); return 0, err })
	return p, err
}

// InsertEntity is measured as an insert of one entity.
func (m *Measured) InsertEntity(ctx context.Context, table string, e api.Entity) (out api.Entity, err error) {
	err = m.do(ctx, KindInsert, e.PartitionKey, func() (int, error) { out, err = m.inner.InsertEntity(ctx, table, e); return 1, err })
	return out, err
}

// UpdateEntity is measured as an update of one entity.
func (m *Measured) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (etag string, err error) {
	err = m.do(ctx, KindUpdate, e.PartitionKey, func() (int, error) {
		etag, err = m.inner.UpdateEntity(ctx, table, e, mode, ifMatch)
		return 1, err
	})
	return etag, err
}

// DeleteEntity is measured as a delete of one entity.
func (m *Measured) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.do(ctx, KindDelete, pk, func() (int, error) { return 1, m.inner.DeleteEntity(ctx, table, pk, rk, ifMatch) })
}

// GetEntity is measured as a read of one entity.
func (m *Measured) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (e api.Entity, err error) {
	err = m.do(ctx, KindGet, pk, func() (int, error) { e, err = m.inner.GetEntity(ctx, table, pk, rk, sel); return 1, err })
	return e, err
}

// QueryEntities is measured as one query page; its entities are those returned.
func (m *Measured) QueryEntities(ctx context.Context, table string, q api.Query) (p api.Page, err error) {
	err = m.do(ctx, KindQuery, PartitionQuery, func() (int, error) {
		p, err = m.inner.QueryEntities(ctx, table, q)
		return len(p.Entities), err
	})
	return p, err
}

// SubmitBatch is measured as one batch request; its entities are its operations, its
// partition that of its first operation (a batch holds one partition).
func (m *Measured) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) (r []api.BatchResult, err error) {
	pk := ""
	if len(ops) > 0 {
		pk = ops[0].Entity.PartitionKey
	}
	err = m.do(ctx, KindBatch, pk, func() (int, error) { r, err = m.inner.SubmitBatch(ctx, table, ops); return len(ops), err })
	return r, err
}
