package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/provision"
)

// Flags of the benchmarks: go test -bench . ./bench -args -backend=reference-http
var (
	flagBackend   = flag.String("backend", "", "backends to benchmark: a comma list of built-in names, or one NAME=CONNECTION_STRING (default $CONFORM_BENCH_BACKEND, else reference)")
	flagDriver    = flag.String("driver", provision.DriverREST, "driver for HTTP backends: rest or sdk")
	flagLarge     = flag.Bool("large", false, "larger data sets (minutes per backend instead of seconds)")
	flagWorkers   = flag.Int("workers", 0, "workers per case (default: each case's own, 8 for most)")
	flagSeed      = flag.Uint64("seed", 0, "seed of the workers' random choices (0: a fresh one, printed)")
	flagWorkloads = flag.String("workloads", "", "workloads to run, as conform bench --workloads takes them (comma-separated groups ops, ycsb, ycsb-default, guide, families, case names or globs); default: all")
	flagRate      = flag.String("target-rate", "", "pace each run at R operations per second (or a ramp R1:R2), as conform bench --target-rate: adds the latencies from the intended start")
	flagArrival   = flag.String("arrival-rate", "", "open model: start operations at R per second (or R1:R2) whatever the workers are doing, as conform bench --arrival-rate")
	flagGrowth    = flag.String("growth-sizes", "1000,10000", "BenchmarkGrowth's table sizes, comma-separated (conform bench --workloads growth grows to 10000,100000,1000000)")
	flagCeiling   = flag.Bool("ceiling", false, "BenchmarkSDKCeiling (the reference server and a do-nothing server through aztables, client processes of its own): runs by default only when the reference is among the backends; -ceiling runs it with any, -ceiling=false never")
)

// openTimeout bounds opening a backend, including an npm install of Azurite.
const openTimeout = 6 * time.Minute

// runTimeout bounds one run of a case (loading, timed phase, verification).
const runTimeout = 5 * time.Minute

var seed uint64

// benchLimit is the pace of every run (-target-rate, -arrival-rate); its Ops is set per run.
var benchLimit Limit

// limitFromFlags reads -target-rate and -arrival-rate, which exclude each other.
func limitFromFlags(target, arrival string) (Limit, error) {
	if target != "" && arrival != "" {
		return Limit{}, fmt.Errorf("-target-rate (closed model) and -arrival-rate (open model) exclude each other")
	}
	if arrival != "" {
		from, to, err := ParseRate(arrival)
		if err != nil || from <= 0 {
			return Limit{}, fmt.Errorf("-arrival-rate %q: want a positive R or R1:R2", arrival)
		}
		return Limit{Rate: from, RateTo: to, Open: true}, nil
	}
	from, to, err := ParseRate(target)
	if err != nil {
		return Limit{}, fmt.Errorf("-target-rate: %w", err)
	}
	return Limit{Rate: from, RateTo: to}, nil
}

func TestMain(m *testing.M) {
	if os.Getenv(SDKLoadEnv) != "" { // a load client of BenchmarkSDKCeiling
		os.Exit(RunSDKLoadChild(os.Stdin, os.Stdout))
	}
	flag.Parse()
	if rest, growth := SplitGrowth(strings.Split(*flagWorkloads, ",")); *flagWorkloads != "" && !growth && len(Select(Catalog(*flagLarge), rest)) == 0 {
		fmt.Fprintf(os.Stderr, "bench: -workloads %s selects no case (conform bench --list shows them)\n", *flagWorkloads)
		os.Exit(2)
	}
	var err error
	if benchLimit, err = limitFromFlags(*flagRate, *flagArrival); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	seed = *flagSeed
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	if testing.Verbose() || flagBenchSet() {
		// Not "key: value", which benchstat would read as configuration and split tables by.
		fmt.Printf("Seed %d (replay with -args -seed=%d); tables of this run start with %s%s\n", seed, seed, TablePrefix, tableRun.id)
	}
	code := m.Run()
	closeTargets()
	os.Exit(code)
}

func flagBenchSet() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

// backendNames returns the selected backends.
func backendNames() []string {
	v := *flagBackend
	if v == "" {
		v = os.Getenv("CONFORM_BENCH_BACKEND")
	}
	if v == "" {
		return []string{provision.Reference}
	}
	if strings.Contains(v, ";") { // a connection string: one target
		return []string{v}
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// displayName is the name of a target in benchmark names: NAME of NAME=CONNECTION_STRING.
func displayName(target string) string {
	if n, _, ok := strings.Cut(target, "="); ok {
		return strings.TrimSpace(n)
	}
	return target
}

type opened struct {
	t   *provision.Target
	err error
}

var (
	targetsMu sync.Mutex
	targets   = map[string]*opened{}
)

// target opens (once per process) the backend named target with the chosen driver; the
// benchmark fails when it cannot be opened.
func target(b *testing.B, name, driverName string) *provision.Target {
	b.Helper()
	t, err := openTarget(name, driverName)
	if err != nil {
		b.Fatalf("open %s: %v", displayName(name), err)
	}
	return t
}

// openTarget opens (once per process) the backend named target with the chosen driver.
func openTarget(name, driverName string) (*provision.Target, error) {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	key := name + "\x00" + driverName
	ot, ok := targets[key]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		t, err := provision.Open(ctx, name, provision.WithDriver(driverName), provision.WithDirectSender())
		cancel()
		ot = &opened{t: t, err: err}
		targets[key] = ot
	}
	return ot.t, ot.err
}

func closeTargets() {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	for k, ot := range targets {
		if ot.t != nil {
			if err := ot.t.Close(); err != nil {
				fmt.Fprintf(os.Stderr, "bench: close %s: %v\n", displayName(strings.Split(k, "\x00")[0]), err)
			}
		}
	}
	targets = map[string]*opened{}
}

// benchFamily runs every case of family against every selected backend, as
// Benchmark<Family>/backend=NAME/<params>.
func benchFamily(b *testing.B, family string) {
	cases := CasesOf(family, *flagLarge)
	if len(cases) == 0 {
		b.Fatalf("no case of family %s", family)
	}
	if *flagWorkloads != "" {
		if cases = Select(cases, strings.Split(*flagWorkloads, ",")); len(cases) == 0 {
			b.Skipf("-workloads %s selects no %s case", *flagWorkloads, family)
		}
	}
	for _, name := range backendNames() {
		b.Run("backend="+displayName(name), func(b *testing.B) {
			t := target(b, name, *flagDriver)
			env := &Env{Backend: t.Backend, Name: displayName(name), Large: *flagLarge, Seed: seed, Workers: *flagWorkers,
				ServerInProcess: ServerInProcess(name)}
			for _, c := range cases {
				runCase(b, env, c)
			}
		})
	}
}

// notesSaid holds the cases' notes already logged: each is logged once per process, with
// the first case that carries it.
var notesSaid sync.Map

// runCase runs one case as a sub-benchmark: its data is loaded once, before the first run,
// and its tables are deleted after the last.
func runCase(b *testing.B, env *Env, c Case) {
	var load *Load
	defer func() {
		if load != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := load.Close(ctx); err != nil {
				b.Logf("%s: %v", c.Name(), err)
			}
		}
	}()
	b.Run(c.Sub(), func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
		defer cancel()
		if load == nil {
			b.StopTimer()
			l, err := Prepare(ctx, env, c)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Warm(ctx); err != nil {
				_ = l.Close(context.WithoutCancel(ctx))
				b.Fatal(err)
			}
			load = l
		}
		limit := benchLimit
		limit.Ops = b.N
		res, err := load.Run(ctx, limit, b)
		if err != nil {
			b.Fatal(err)
		}
		reportMetrics(b, res.Summary)
		if _, said := notesSaid.LoadOrStore(c.Note, true); c.Note != "" && !said {
			b.Log(c.Note)
		}
	})
}

func reportMetrics(b *testing.B, s Summary) {
	b.ReportMetric(s.OpsPerSec, "ops/s")
	b.ReportMetric(s.EntitiesPerSec, "entities/s")
	b.ReportMetric(s.Latency.P50, "p50-µs")
	b.ReportMetric(s.Latency.P99, "p99-µs")
	b.ReportMetric(s.Latency.P999, "p99.9-µs")
	b.ReportMetric(float64(s.Errors), "errors")
	b.ReportMetric(float64(s.Throttles), "throttles")
	if s.CPUPerOp > 0 {
		b.ReportMetric(s.CPUPerOp, s.CPUMetric())
	}
	if s.Intended != nil { // a paced or open run (-target-rate, -arrival-rate)
		b.ReportMetric(s.Intended.P50, "intended-p50-µs")
		b.ReportMetric(s.Intended.P99, "intended-p99-µs")
		b.ReportMetric(s.Intended.P999, "intended-p99.9-µs")
		b.ReportMetric(float64(s.Late), "late")
		b.ReportMetric(float64(s.Dropped), "dropped")
	}
}

func BenchmarkPointGet(b *testing.B)        { benchFamily(b, "PointGet") }
func BenchmarkInsert(b *testing.B)          { benchFamily(b, "Insert") }
func BenchmarkMerge(b *testing.B)           { benchFamily(b, "Merge") }
func BenchmarkReplace(b *testing.B)         { benchFamily(b, "Replace") }
func BenchmarkUpsert(b *testing.B)          { benchFamily(b, "Upsert") }
func BenchmarkDelete(b *testing.B)          { benchFamily(b, "Delete") }
func BenchmarkBatch(b *testing.B)           { benchFamily(b, "Batch") }
func BenchmarkRangeQuery(b *testing.B)      { benchFamily(b, "RangeQuery") }
func BenchmarkPartitionScan(b *testing.B)   { benchFamily(b, "PartitionScan") }
func BenchmarkTableScan(b *testing.B)       { benchFamily(b, "TableScan") }
func BenchmarkPaging(b *testing.B)          { benchFamily(b, "Paging") }
func BenchmarkParallelQueries(b *testing.B) { benchFamily(b, "ParallelQueries") }
func BenchmarkYCSB(b *testing.B)            { benchFamily(b, "YCSB") }
func BenchmarkSecondaryIndex(b *testing.B)  { benchFamily(b, "SecondaryIndex") }
func BenchmarkLogTail(b *testing.B)         { benchFamily(b, "LogTail") }
func BenchmarkDataSeries(b *testing.B)      { benchFamily(b, "DataSeries") }
func BenchmarkHotPartition(b *testing.B)    { benchFamily(b, "HotPartition") }
func BenchmarkLookup(b *testing.B)          { benchFamily(b, "Lookup") }

// BenchmarkGrowth grows one table per backend through -growth-sizes entities and, at each
// size, runs each of the growth family's operations for b.N requests:
// Growth/backend=NAME/entities=N reports each operation's p50 and p99, the load's time and,
// for a backend in this process, its heap per entity.
func BenchmarkGrowth(b *testing.B) {
	if *flagWorkloads != "" {
		if _, growth := SplitGrowth(strings.Split(*flagWorkloads, ",")); !growth {
			b.Skipf("-workloads %s does not name %s", *flagWorkloads, GrowthGroup)
		}
	}
	sizes, err := ParseGrowthSizes(*flagGrowth)
	if err != nil {
		b.Fatalf("-growth-sizes: %v", err)
	}
	for _, name := range backendNames() {
		b.Run("backend="+displayName(name), func(b *testing.B) {
			t := target(b, name, *flagDriver)
			env := &Env{Backend: t.Backend, Name: displayName(name), Seed: seed, Workers: *flagWorkers, ServerInProcess: ServerInProcess(name)}
			var memory func() uint64
			if env.ServerInProcess {
				memory = HeapBytes
			}
			ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
			g, err := NewGrower(ctx, env, memory)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_ = g.Close(ctx)
			}()
			for _, n := range sizes {
				var grown *GrowthStep
				b.Run(fmt.Sprintf("entities=%d", n), func(b *testing.B) {
					b.StopTimer()
					ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
					defer cancel()
					if grown == nil {
						step, err := g.Grow(ctx, n)
						if err != nil {
							b.Fatalf("%d entities: %s", n, step.Stopped)
						}
						grown = &step
					}
					step := *grown
					step.Ops = nil
					b.StartTimer()
					if err := g.Measure(ctx, &step, b.N, time.Time{}); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					for _, op := range step.Ops {
						if op.Stopped != "" {
							b.Fatalf("%s: %s", op.Operation, op.Stopped)
						}
						unit := strings.ReplaceAll(op.Operation, " ", "-")
						b.ReportMetric(op.Latency.P50, unit+"-p50-µs")
						b.ReportMetric(op.Latency.P99, unit+"-p99-µs")
					}
					b.ReportMetric(step.LoadElapsed.Seconds(), "load-s")
					if step.BytesPerEntity > 0 {
						b.ReportMetric(step.BytesPerEntity, "bytes/entity")
					}
				})
			}
		})
	}
}
