package bench

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

// stalling answers point reads from the reference, but its stallAt-th read (from 1) takes
// stall longer, and every read takes delay longer.
type stalling struct {
	api.Backend
	reads   atomic.Int64
	stallAt int64
	stall   time.Duration
	delay   time.Duration
}

func (s *stalling) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	n := s.reads.Add(1)
	if n == s.stallAt {
		time.Sleep(s.stall)
	}
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	return s.Backend.GetEntity(ctx, table, pk, rk, sel)
}

// preparedPointGet loads the quick point-read case on b; reads made while loading and
// warming up are not counted.
func preparedPointGet(t *testing.T, b *stalling, workers int) *Load {
	t.Helper()
	env := &Env{Backend: b, Name: "stalling", Seed: 5, Workers: workers, Quick: true}
	ctx := context.Background()
	l, err := Prepare(ctx, env, CasesOf("PointGet", false)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	if err := l.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	b.reads.Store(0)
	return l
}

// A backend that stalls for a second under a target rate delays the steps behind the
// stalled one: their service times stay short, but their latency from the intended start
// shows the stall (coordinated omission, as wrk2 and YCSB's intended latency correct it).
func TestAStallShowsInTheIntendedStartPercentiles(t *testing.T) {
	b := &stalling{Backend: reference.New(), stallAt: 20, stall: time.Second}
	l := preparedPointGet(t, b, 1)
	const ops = 400
	res, err := l.Run(context.Background(), Limit{Ops: ops, Rate: 200}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Intended == nil {
		t.Fatal("a paced run has no latencies from the intended start")
	}
	if res.Latency.Max < 900_000 {
		t.Fatalf("the stalled read is missing from the service times: max %v µs", res.Latency.Max)
	}
	if res.Latency.P99 > 200_000 {
		t.Fatalf("service-time p99 %v µs: only one read stalled", res.Latency.P99)
	}
	// The second's worth of steps meant to start during the stall started up to a second
	// late: half the run.
	if res.Intended.P99 < 500_000 {
		t.Fatalf("intended-start p99 %v µs hides the one-second stall (service p99 %v µs)", res.Intended.P99, res.Latency.P99)
	}
	if res.Offered != ops || res.Late < ops/4 || res.Dropped != 0 {
		t.Fatalf("offered %d, late %d, dropped %d: want %d offered, a quarter late or more, none dropped", res.Offered, res.Late, res.Dropped, ops)
	}
	if len(res.Kinds) != 1 || res.Kinds[0].Intended == nil || res.Kinds[0].Intended.P99 != res.Intended.P99 {
		t.Fatalf("per-kind intended latencies %+v", res.Kinds)
	}
	var offered int64
	for _, s := range res.Raw.Series {
		offered += s.Offered
	}
	if offered != ops {
		t.Fatalf("the per-second series offers %d steps, want %d", offered, ops)
	}
	for _, k := range res.Raw.Kinds {
		if k.intended.TotalCount() != k.Requests || k.hist.TotalCount() != k.Requests {
			t.Fatalf("%s: %d requests, histograms %d and %d", k.Kind, k.Requests, k.hist.TotalCount(), k.intended.TotalCount())
		}
	}
}

// An unpaced run has no intended starts: it keeps service times only.
func TestAnUnpacedRunHasNoIntendedLatency(t *testing.T) {
	b := &stalling{Backend: reference.New()}
	l := preparedPointGet(t, b, 2)
	res, err := l.Run(context.Background(), Limit{Ops: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Intended != nil || res.Offered != 0 || res.Late != 0 {
		t.Fatalf("intended %+v, offered %d, late %d", res.Intended, res.Offered, res.Late)
	}
}

// In an open run a stalled read holds one worker; the other arrivals start on other
// workers, which the run adds, instead of waiting behind it.
func TestAnOpenRunStartsArrivalsWhateverTheWorkersDo(t *testing.T) {
	b := &stalling{Backend: reference.New(), stallAt: 5, stall: time.Second}
	l := preparedPointGet(t, b, 1)
	const ops = 300
	// A cap far above need: a busy machine may keep finished workers from taking the next
	// arrival at once, and that is not what this test is about.
	res, err := l.Run(context.Background(), Limit{Ops: ops, Rate: 300, Open: true, MaxWorkers: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Offered != ops || res.Dropped != 0 || res.Steps != ops {
		t.Fatalf("offered %d, dropped %d, steps %d: want all %d started", res.Offered, res.Dropped, res.Steps, ops)
	}
	if res.Workers < 2 {
		t.Fatalf("%d workers: the run should have added one beside the stalled one", res.Workers)
	}
	if res.Intended == nil || res.Intended.Max < 900_000 {
		t.Fatalf("intended-start latencies %+v miss the stalled read", res.Intended)
	}
	// Waiting behind the stalled worker, as a closed run does, would put the median near
	// half a second.
	if res.Intended.P50 > 250_000 {
		t.Fatalf("intended-start p50 %v µs: arrivals waited behind the stalled read", res.Intended.P50)
	}
}

// An open run whose workers are all busy at the cap drops arrivals and counts them: the
// offered load stays what was asked, the completed load is what the workers managed.
func TestAnOpenRunAtItsCapDropsAndCounts(t *testing.T) {
	b := &stalling{Backend: reference.New(), delay: 20 * time.Millisecond}
	l := preparedPointGet(t, b, 1)
	const ops = 200
	res, err := l.Run(context.Background(), Limit{Ops: ops, Rate: 500, Open: true, MaxWorkers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Offered != ops || res.Steps+res.Dropped != ops {
		t.Fatalf("offered %d, started %d, dropped %d: want started + dropped = offered = %d", res.Offered, res.Steps, res.Dropped, ops)
	}
	// Two workers at 20 ms a read manage at most 100 reads a second of the 500 offered.
	if res.Dropped < ops/2 || res.Workers != 2 {
		t.Fatalf("dropped %d of %d with %d workers; want most dropped at the cap of 2", res.Dropped, ops, res.Workers)
	}
	var offered, dropped int64
	for _, s := range res.Raw.Series {
		offered += s.Offered
		dropped += s.Dropped
	}
	if offered != ops || dropped != res.Dropped {
		t.Fatalf("series: offered %d, dropped %d", offered, dropped)
	}
	if _, err := l.Run(context.Background(), Limit{Ops: 10, Open: true}, nil); err == nil {
		t.Fatal("an open run without a rate was accepted")
	}
}

// The latencies from the intended start and the step counts of paced shards are written,
// read back and merged like the service times: every request in both histograms, the
// counts summed, a damaged intended-start histogram refused.
func TestIntendedLatenciesMergeAcrossShards(t *testing.T) {
	start := time.Now().Truncate(time.Second)
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		m := NewMeter()
		m.RecordIntended()
		// The run began three seconds earlier: a chart draws lines over time only for runs
		// of at least minSeriesSeconds.
		m.Begin(start.Add(-minSeriesSeconds * time.Second))
		w := m.Worker(nil)
		for j := 0; j < 100; j++ {
			sent := time.Now()
			// Shard 1's steps all start 300 ms after they were meant to.
			w.intend(sent.Add(-time.Duration(i)*300*time.Millisecond), sent)
			w.record(KindGet, "p", sent.Add(-time.Millisecond), 1, nil)
		}
		w.drop(start)
		raw := m.Raw()
		res := Result{Case: "PointGet/x", Family: "PointGet", Steps: 100, Started: start, Summary: raw.Summary(time.Second)}
		loading := &LoadPhase{Entities: 1000, Elapsed: time.Duration(i+1) * time.Second, RequestsPerStep: 1}
		s := ShardResults{Format: ShardFormat, Run: ShardRun{RunID: "r1", Shard: Shard{i, 2}, Workloads: []string{"PointGet/x"}, Backend: BackendRun{Name: "b"}, Ops: 200, TargetRate: 100},
			Started: start, Finished: start.Add(time.Second), Outcomes: []ShardOutcome{{Outcome: Outcome{Result: res, Loading: loading}, Measures: raw}}}
		if _, err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := ReadShardFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	o := m.Outcomes[0]
	if o.Requests != 200 || o.Offered != 202 || o.Late != 100 || o.Dropped != 2 {
		t.Fatalf("requests %d offered %d late %d dropped %d", o.Requests, o.Offered, o.Late, o.Dropped)
	}
	if o.Intended == nil || o.Intended.P99 < 290_000 || o.Latency.P99 > 100_000 {
		t.Fatalf("intended %+v, service %+v: shard 1's 300 ms delays are lost", o.Intended, o.Latency)
	}
	if o.Loading == nil || o.Loading.Entities != 2000 || o.Loading.Elapsed != 2*time.Second {
		t.Fatalf("merged load phase %+v: want both shards' 2,000 entities and the longer 2 s", o.Loading)
	}
	if md := string(m.Markdown()); !strings.Contains(md, "intended") || !strings.Contains(md, "dropped") || !strings.Contains(md, "| PointGet/x | b | 2000 | 2.00 |") {
		t.Fatalf("bench.md of a paced merge names neither intended-start latency nor dropped steps:\n%s", md)
	}
	svg := string(m.SVG())
	if !strings.Contains(svg, "steps offered per second") || !strings.Contains(svg, "dropped</title>") || !strings.Contains(svg, "from the intended start:") {
		t.Fatalf("bench.svg of a paced merge draws neither offered load, dropped steps nor intended-start latencies")
	}
	rep := Report{Backends: []BackendRun{{Name: "b"}}, Outcomes: []Outcome{{Result: Result{Backend: "b", Case: o.Case, Summary: o.Summary}}}}
	if !strings.Contains(string(rep.SVG()), "from the intended start:") || !strings.Contains(string(rep.Markdown()), "## Latency from the intended start") {
		t.Fatal("a single run's bench.svg or bench.md leaves out the intended-start latencies")
	}
	// A damaged intended-start histogram is refused, naming it.
	raw := RawMeasures{Kinds: []RawKind{{Kind: "get", Requests: 1, hist: newHistogram(), intended: newHistogram()}}}
	_ = raw.Kinds[0].hist.RecordValue(1000)
	_ = raw.Kinds[0].intended.RecordValue(1000)
	if err := raw.Encode(); err != nil {
		t.Fatal(err)
	}
	raw.Kinds[0].IntendedEncoded = raw.Kinds[0].IntendedEncoded[:10]
	if err := raw.Decode(); err == nil || !strings.Contains(err.Error(), "intended-start") {
		t.Fatalf("a cut intended-start histogram: %v", err)
	}
}

// A workload whose step takes several requests runs fewer steps for the same requested
// count: a table scan of several pages and a point read get about the same requests.
func TestStepsForSizesByRequestsPerStep(t *testing.T) {
	env := &Env{Backend: reference.New(), Name: "reference", Seed: 3, Workers: 1, Quick: true}
	ctx := context.Background()
	for _, family := range []string{"PointGet", "Paging"} {
		l, err := Prepare(ctx, env, CasesOf(family, false)[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := l.StepsFor(300); got != 300 {
			t.Errorf("%s before the warm-up: %d steps for 300 requests, want 300", family, got)
		}
		if err := l.Warm(ctx); err != nil {
			t.Fatal(err)
		}
		steps := l.StepsFor(300)
		res, err := l.Run(ctx, Limit{Ops: steps}, nil)
		_ = l.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		perStep := l.RequestsPerStep()
		switch family {
		case "PointGet":
			if perStep != 1 || steps != 300 || res.Requests != 300 {
				t.Errorf("PointGet: %v requests per step, %d steps, %d requests", perStep, steps, res.Requests)
			}
		case "Paging":
			if perStep < 2 || steps >= 300 || res.Requests < 200 || res.Requests > 400 {
				t.Errorf("Paging: %v requests per step, %d steps, %d requests; want about 300 requests in fewer steps", perStep, steps, res.Requests)
			}
		}
	}
}

// An open run's arrivals can ramp: every step of the ramp is offered, started or dropped.
func TestAnOpenRunRamps(t *testing.T) {
	b := &stalling{Backend: reference.New()}
	l := preparedPointGet(t, b, 1)
	const ops = 300
	res, err := l.Run(context.Background(), Limit{Ops: ops, Rate: 200, RateTo: 800, Open: true, MaxWorkers: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Offered != ops || res.Steps+res.Dropped != ops || res.Intended == nil {
		t.Fatalf("offered %d, started %d, dropped %d, intended %+v", res.Offered, res.Steps, res.Dropped, res.Intended)
	}
	// At 200 rising to 800 a second, the 300 arrivals are due within 0.6 s, not the 1.5 s
	// 200 a second would take.
	if last := (Limit{Ops: ops, Rate: 200, RateTo: 800}).startOf(ops - 1); last < 550*time.Millisecond || last > 600*time.Millisecond {
		t.Fatalf("the last arrival is due at %v", last)
	}
}
