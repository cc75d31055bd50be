package reference

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// The benchmarks run over one table of a million employee entities (1000 partitions of
// 1000), built once per test binary. Targets on a 2-core machine: Get >= 1,000,000 ops/s on
// one core, Insert >= 250,000 ops/s, a 1000-entity partition scan < 300 µs, a million
// entities resident in < 1 GiB.
//
// Every benchmark reports ops per wall-clock second ("ops/s") and per CPU second of the
// whole process, the collector's threads included ("ops/cpu-s"): on a shared machine the
// second is the figure for one core. BenchmarkGet runs with GOMAXPROCS=1, so that the
// reads and the collector share one core; BenchmarkGetParallel reads from every core.
//
// The read benchmarks come first and see the table as loaded, its entities in key order;
// the write benchmarks then change it (every Merge moves its entity to the end of the
// arena, so a partition read after many merges is scattered until the next compaction).
//
// REFERENCE_BENCH_PARTITIONS=N builds N partitions of 1000 instead (for instruction counts
// under a simulator, where a million entities take minutes to load).
// REFERENCE_BENCH_CHURN=N merges N random employees after loading, so that every benchmark
// sees a table that has been updated rather than one laid out in key order.

const (
	benchTable   = "Employees"
	benchPerPart = 1000
)

var (
	benchOnce          sync.Once
	benchSvc           *Service
	benchBytesPerEntry float64
	benchPartitions    = benchPartitionCount()
	benchEntities      = benchPartitions * benchPerPart
	benchPKs           []string // benchPK(p) for every partition
	benchRKs           []string // benchRK(r) for every row of a partition
)

func benchPartitionCount() int {
	if n, err := strconv.Atoi(os.Getenv("REFERENCE_BENCH_PARTITIONS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// churnEmployees merges REFERENCE_BENCH_CHURN random employees of the table.
func churnEmployees(tb testing.TB, s *Service, name string) {
	n, _ := strconv.Atoi(os.Getenv("REFERENCE_BENCH_CHURN"))
	ctx := context.Background()
	for i := range n {
		p, r := (i*7919+i/benchPartitions)%benchPartitions, (i*104729)%benchPerPart
		e := api.NewEntity(benchPK(p), benchRK(r), map[string]api.Value{"Age": api.Int32(int32(i % 90))})
		if _, err := s.UpdateEntity(ctx, name, e, api.Merge, api.IfMatchAny); err != nil {
			tb.Fatal(err)
		}
	}
}

func benchPK(p int) string { return fmt.Sprintf("Department%04d", p) }
func benchRK(r int) string { return fmt.Sprintf("%08d", r) }

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"}
)

// employee returns the six-property entity of employee r in partition p.
func employee(p, r int) api.Entity {
	first, last := firstNames[r%len(firstNames)], lastNames[(r/8)%len(lastNames)]
	return api.NewEntity(benchPK(p), benchRK(r), map[string]api.Value{
		"FirstName": api.String(first),
		"LastName":  api.String(last),
		"Email":     api.String(fmt.Sprintf("%s.%s%d@contoso.com", first, last, r)),
		"Age":       api.Int32(int32(20 + r%45)),
		"HireDate":  api.DateTime(time.Date(2000+r%25, time.Month(1+r%12), 1+r%28, 9, 0, 0, 0, time.UTC)),
		"Salary":    api.Double(40000 + float64(r%1000)*37.5),
	})
}

// loadEmployees stores the employees in a new table of s (Insert Or Replace, which answers
// only an ETag, so loading does not pay for decoding each entity back).
func loadEmployees(tb testing.TB, s *Service, name string) {
	ctx := context.Background()
	if err := s.CreateTable(ctx, name); err != nil {
		tb.Fatal(err)
	}
	for p := 0; p < benchPartitions; p++ {
		for r := 0; r < benchPerPart; r++ {
			if _, err := s.UpdateEntity(ctx, name, employee(p, r), api.Replace, ""); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// benchService returns the shared employee service, and the heap bytes per entity measured
// while building it.
func benchService(tb testing.TB) *Service {
	benchOnce.Do(func() {
		benchPKs = make([]string, benchPartitions)
		for p := range benchPKs {
			benchPKs[p] = benchPK(p)
		}
		benchRKs = make([]string, benchPerPart)
		for r := range benchRKs {
			benchRKs[r] = benchRK(r)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := New(WithDeleteHold(0))
		loadEmployees(tb, s, benchTable)
		runtime.GC()
		runtime.ReadMemStats(&after)
		benchBytesPerEntry = float64(after.HeapAlloc-before.HeapAlloc) / float64(benchEntities)
		churnEmployees(tb, s, benchTable)
		benchSvc = s
	})
	if benchSvc == nil {
		tb.Fatal("the benchmark table could not be built")
	}
	return benchSvc
}

// cpuClock measures the CPU time of this process (all threads, the collector's included),
// so that a benchmark on a shared machine can report what one core achieves.
type cpuClock struct{ start time.Duration }

func startCPUClock() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) elapsed() time.Duration { return processCPU() - c.start }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportOpsPerSecond reports ops per wall-clock second and per CPU second ("ops/cpu-s",
// the figure for one core when other processes share the machine).
func reportOpsPerSecond(b *testing.B, ops int, cpu cpuClock) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(ops)/s, "ops/s")
	}
	if c := cpu.elapsed().Seconds(); c > 0 {
		b.ReportMetric(float64(ops)/c, "ops/cpu-s")
	}
}

// measureStart and measureEnd bracket each benchmark's timed loop, so that an instruction
// counter can count the loop alone, whatever the load of the machine, e.g.
//
//	valgrind --tool=callgrind --zero-before='*reference.measureStart' \
//	    --dump-before='*reference.measureEnd' reference.test -test.bench Get -test.benchtime 2000x
//
// (with GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1, which valgrind needs), then divide the
// last dump's instruction total by b.N.
//
//go:noinline
func measureStart() {}

//go:noinline
func measureEnd() {}

// oneCore runs the rest of a benchmark with GOMAXPROCS=1 and returns the restore function.
func oneCore() func() {
	old := runtime.GOMAXPROCS(1)
	return func() { runtime.GOMAXPROCS(old) }
}

// BenchmarkResidentBytesPerEntity reports the heap held per entity of the million-entity
// table (target: a million entities in < 1 GiB, i.e. < 1073 bytes each).
func BenchmarkResidentBytesPerEntity(b *testing.B) {
	benchService(b)
	for range b.N {
	}
	b.ReportMetric(benchBytesPerEntry, "bytes/entity")
	b.ReportMetric(benchBytesPerEntry*1e6/(1<<20), "MiB/1M-entities")
}

// getKeys returns keys of existing employees spread over the table.
func getKeys() [][2]string {
	keys := make([][2]string, 4096)
	for i := range keys {
		keys[i] = [2]string{benchPKs[(i*7919)%benchPartitions], benchRKs[(i*104729)%benchPerPart]}
	}
	return keys
}

// BenchmarkGet reads random entities by key on one core (GOMAXPROCS=1; target >= 1,000,000
// ops/s).
func BenchmarkGet(b *testing.B) {
	s := benchService(b)
	defer oneCore()()
	ctx := context.Background()
	keys := getKeys()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	for i := range b.N {
		k := keys[i%len(keys)]
		e, err := s.GetEntity(ctx, benchTable, k[0], k[1], nil)
		if err != nil || e.RowKey != k[1] {
			b.Fatalf("get %v: %v", k, err)
		}
	}
	measureEnd()
	reportOpsPerSecond(b, b.N, cpu)
}

// BenchmarkGetParallel reads random entities by key from every core.
func BenchmarkGetParallel(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	keys := getKeys()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			k := keys[i%len(keys)]
			i += 7
			e, err := s.GetEntity(ctx, benchTable, k[0], k[1], nil)
			if err != nil || e.RowKey != k[1] {
				b.Errorf("get %v: %v", k, err)
				return
			}
		}
	})
	measureEnd()
	reportOpsPerSecond(b, b.N, cpu)
}

// BenchmarkPartitionScan queries one whole partition of 1000 entities (target < 300 µs).
func BenchmarkPartitionScan(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	for i := range b.N {
		pk := benchPKs[(i*13)%benchPartitions]
		page, err := s.QueryEntities(ctx, benchTable, api.Query{Filter: "PartitionKey eq '" + pk + "'"})
		if err != nil || len(page.Entities) < benchPerPart || page.Entities[0].PartitionKey != pk {
			b.Fatalf("scan %s: %d entities, %v", pk, len(page.Entities), err)
		}
	}
	measureEnd()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/scan")
	b.ReportMetric(float64(cpu.elapsed().Microseconds())/float64(b.N), "cpu-µs/scan")
	reportOpsPerSecond(b, b.N, cpu)
}

// BenchmarkInsert inserts new employees into the million-entity table (target >= 250,000
// ops/s).
func BenchmarkInsert(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	template := employee(0, 0)
	prefix := fmt.Sprintf("new%d-", time.Now().UnixNano())
	rk := make([]byte, 0, 64)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	for i := range b.N {
		e := template
		e.PartitionKey = benchPKs[i%benchPartitions]
		rk = strconv.AppendInt(append(rk[:0], prefix...), int64(1_000_000_000+i), 10)
		e.RowKey = string(rk)
		if _, err := s.InsertEntity(ctx, benchTable, e); err != nil {
			b.Fatal(err)
		}
	}
	measureEnd()
	reportOpsPerSecond(b, b.N, cpu)
}

// BenchmarkMerge merges one property into existing employees.
func BenchmarkMerge(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	props := map[string]api.Value{}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	for i := range b.N {
		props["Age"] = api.Int32(int32(i % 100))
		e := api.NewEntity(benchPKs[i%benchPartitions], benchRKs[(i*31)%benchPerPart], props)
		if _, err := s.UpdateEntity(ctx, benchTable, e, api.Merge, api.IfMatchAny); err != nil {
			b.Fatal(err)
		}
	}
	measureEnd()
	reportOpsPerSecond(b, b.N, cpu)
}

// BenchmarkBatch100 runs transactions of 100 merges in one partition.
func BenchmarkBatch100(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	ops := make([]api.BatchOp, 100)
	props := make([]map[string]api.Value, len(ops))
	for j := range props {
		props[j] = map[string]api.Value{}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPUClock()
	measureStart()
	for i := range b.N {
		pk := benchPKs[i%benchPartitions]
		for j := range ops {
			props[j]["Age"] = api.Int32(int32(i % 100))
			ops[j] = api.BatchOp{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity(pk, benchRKs[j*10], props[j])}
		}
		results, err := s.SubmitBatch(ctx, benchTable, ops)
		if err != nil || len(results) != len(ops) {
			b.Fatal(err)
		}
	}
	measureEnd()
	b.ReportMetric(float64(b.N*len(ops))/b.Elapsed().Seconds(), "entities/s")
	if c := cpu.elapsed().Seconds(); c > 0 {
		b.ReportMetric(float64(b.N*len(ops))/c, "entities/cpu-s")
	}
	reportOpsPerSecond(b, b.N, cpu)
}
