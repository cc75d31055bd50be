package bench

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/provision"
)

var flagCeilingAzurite = flag.Bool("ceiling.azurite", false, "BenchmarkSDKCeiling: also run Azurite (npm), reported as the reference's throughput over Azurite's")

var ceilingSaidOnce sync.Once

// ceilingWarmup is how many untimed operations each load client sends before its timed
// phase: enough for every worker's connection to be open and the server's pools warm.
const ceilingWarmup = 8 * CeilingWorkers

// ceilingNoop names the do-nothing server among the ceiling's targets.
const ceilingNoop = "noop"

// ceilingTarget is a server the ceiling's client drives. In-process targets run in this
// process, whose CPU time and allocations are then the server's alone (the client runs in
// a process of its own).
type ceilingTarget struct {
	name      string
	endpoint  string
	canned    bool
	inProcess bool
}

// ceilingPhase is what one phase of one target measured.
type ceilingPhase struct {
	load         SDKLoadResult
	serverCPU    time.Duration
	serverAllocs uint64
}

func (p ceilingPhase) opsPerSec() float64 { return p.load.Summary.OpsPerSec }

func (p ceilingPhase) perRequest(v float64) float64 {
	if p.load.Summary.Requests == 0 {
		return 0
	}
	return v / float64(p.load.Summary.Requests)
}

func (p ceilingPhase) answerBytesPerRequest() float64 {
	if p.load.Answers == 0 {
		return 0
	}
	return float64(p.load.AnswerBytes) / float64(p.load.Answers)
}

// BenchmarkSDKCeiling measures the reference server through the official Go SDK (aztables,
// CeilingWorkers workers, in a process of its own) against the ceiling: a do-nothing server
// that replays, byte for byte, the answers the reference gave to the same requests. b.N
// counts operations: each target answers b.N operations per iteration of the framework,
// after ceilingWarmup untimed ones. Per operation it reports the reference's throughput as
// a share of the do-nothing server's ("ref/noop"), and the server's CPU time and
// allocations per request for both, so that benchstat can compare commits:
//
//	go test ./bench -run '^$' -bench SDKCeiling -count 6 | tee new.txt
//
// It runs when the selected backends include the reference (the default) or with -ceiling;
// with -ceiling and -backend=azurite (or -ceiling.azurite) Azurite is driven too. The
// targets take turns in alternating order, so that a machine whose load drifts treats them
// alike.
func BenchmarkSDKCeiling(b *testing.B) {
	if run, why := ceilingSelected(); !run {
		b.Skip(why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	ref := servedAsServe(ctx, provision.ReferenceHTTP, tableserver.New(reference.New()))
	defer ref.Close()
	refEndpoint := ref.URL + "/" + wire.DevAccountName
	answers, err := CaptureCeilingAnswers(ctx, refEndpoint)
	if err != nil {
		b.Fatal(err)
	}
	noop := labelledServer(ctx, ceilingNoop, ReplayHandler(answers))
	defer noop.Close()
	targets := []ceilingTarget{
		{name: ceilingNoop, endpoint: noop.URL + "/" + wire.DevAccountName, canned: true, inProcess: true},
		{name: provision.ReferenceHTTP, endpoint: refEndpoint, inProcess: true},
	}
	if *flagCeilingAzurite || slices.Contains(backendNames(), provision.Azurite) {
		t, err := openTarget(provision.Azurite, provision.DriverREST)
		if err != nil {
			b.Logf("azurite is not available: %v", err)
		} else {
			targets = append(targets, ceilingTarget{name: provision.Azurite, endpoint: t.Info.Endpoint})
		}
	}
	ceilingSaidOnce.Do(func() {
		// Printed, not logged, so that it shows without -v; benchstat skips the line.
		fmt.Printf("SDK ceiling: the same aztables client (%d workers, a process of its own) against %s; "+
			"ref/noop = reference-http ops/s (served as conform serve serves it: its http.Server settings and framing watch) ÷ ops/s of a do-nothing server replaying the reference's answers byte for byte; "+
			"*-server-µs/req and *-allocs/req are the in-process server's alone; client-µs/req is the client process's\n", CeilingWorkers, ceilingTargetNames(targets))
	})
	for _, op := range CeilingOps() {
		calls := 0
		b.Run("op="+string(op), func(b *testing.B) {
			calls++
			phases := map[string][]ceilingPhase{}
			order := slices.Clone(targets)
			if calls%2 == 0 {
				slices.Reverse(order)
			}
			b.StopTimer()
			loads := make([]*SDKLoad, len(order))
			defer func() {
				for _, l := range loads {
					if l != nil {
						l.abort()
					}
				}
			}()
			for i, t := range order {
				l, err := StartSDKLoad(ctx, SDKLoadSpec{Endpoint: t.endpoint, Canned: t.canned, Op: op, Ops: b.N, Warmup: ceilingWarmup})
				if err != nil {
					b.Fatalf("%s %s: %v", t.name, op, err)
				}
				loads[i] = l
			}
			b.ResetTimer()
			for i, t := range order {
				b.StartTimer()
				p, err := runCeilingPhase(loads[i], t)
				b.StopTimer()
				loads[i] = nil
				if err != nil {
					b.Fatalf("%s %s: %v", t.name, op, err)
				}
				phases[t.name] = append(phases[t.name], p)
			}
			if err := reportCeiling(b, phases); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// ceilingSelected says whether BenchmarkSDKCeiling runs: -ceiling decides when given;
// otherwise it runs when the selected backends include the reference, whose server it
// measures.
func ceilingSelected() (bool, string) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "ceiling" })
	if explicit {
		return *flagCeiling, "skipped by -ceiling=false"
	}
	for _, n := range backendNames() {
		if n == provision.Reference || n == provision.ReferenceHTTP {
			return true, ""
		}
	}
	return false, "the SDK ceiling measures the reference server; -ceiling runs it alongside " + strings.Join(backendNames(), ",")
}

func ceilingTargetNames(ts []ceilingTarget) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}

// labelledServer starts an httptest server for h whose goroutines (its accept loop, and
// the connections' goroutines it starts, which inherit its labels) carry the profiler label
// server=name, so that a -cpuprofile of the benchmark splits by server:
// `go tool pprof -tagfocus server=noop ...`.
// servedAsServe starts s as conform serve serves it, labelled name in CPU profiles: its
// HTTPServer (every timeout set, the framing watch in its ConnContext) on a Listener that
// watches the framing, so that the ceiling's ratio counts what serve wraps around the
// handler, not the handler alone.
func servedAsServe(ctx context.Context, name string, s *tableserver.Server) *httptest.Server {
	var ts *httptest.Server
	pprof.Do(ctx, pprof.Labels("server", name), func(context.Context) {
		ts = httptest.NewUnstartedServer(s)
		ts.Config = s.HTTPServer("")
		ts.Listener = tableserver.Listener(ts.Listener)
		ts.Start()
	})
	return ts
}

func labelledServer(ctx context.Context, name string, h http.Handler) *httptest.Server {
	var ts *httptest.Server
	pprof.Do(ctx, pprof.Labels("server", name), func(context.Context) { ts = httptest.NewServer(h) })
	return ts
}

// runCeilingPhase runs the timed phase of a started load client against t and measures
// this process's CPU time and allocations while it runs.
func runCeilingPhase(l *SDKLoad, t ceilingTarget) (ceilingPhase, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	cpu0, mallocs0 := processCPU(), ms.Mallocs
	res, err := l.Go()
	cpu1 := processCPU()
	runtime.ReadMemStats(&ms)
	p := ceilingPhase{load: res}
	if t.inProcess {
		p.serverCPU, p.serverAllocs = cpu1-cpu0, ms.Mallocs-mallocs0
	}
	return p, err
}

// ceilingMeans are one target's figures, averaged over a benchmark's iterations.
type ceilingMeans struct {
	opsPerSec, serverCPUus, serverAllocs, clientCPUus, answerBytes float64
}

func meansOf(ps []ceilingPhase) ceilingMeans {
	var m ceilingMeans
	for _, p := range ps {
		m.opsPerSec += p.opsPerSec()
		m.serverCPUus += p.perRequest(float64(p.serverCPU.Microseconds()))
		m.serverAllocs += p.perRequest(float64(p.serverAllocs))
		m.clientCPUus += p.perRequest(float64(p.load.ClientCPU.Microseconds()))
		m.answerBytes += p.answerBytesPerRequest()
	}
	n := float64(len(ps))
	if n > 0 {
		m.opsPerSec /= n
		m.serverCPUus /= n
		m.serverAllocs /= n
		m.clientCPUus /= n
		m.answerBytes /= n
	}
	return m
}

// maxAnswerSizeDrift is how far the do-nothing server's answers may differ in size from the
// reference's (a few digits of a sequence number differ) before the ceiling is not a ceiling
// of the same work.
const maxAnswerSizeDrift = 0.01

// reportCeiling reports the figures of one operation and checks that the do-nothing server
// answered with bodies of the reference's size.
func reportCeiling(b *testing.B, phases map[string][]ceilingPhase) error {
	noop, ref := meansOf(phases[ceilingNoop]), meansOf(phases[provision.ReferenceHTTP])
	if ref.answerBytes > 0 {
		if drift := noop.answerBytes/ref.answerBytes - 1; drift > maxAnswerSizeDrift || drift < -maxAnswerSizeDrift {
			return fmt.Errorf("the do-nothing server's answers average %.0f bytes, the reference's %.0f: not the same answers", noop.answerBytes, ref.answerBytes)
		}
	}
	if noop.opsPerSec > 0 {
		b.ReportMetric(ref.opsPerSec/noop.opsPerSec, "ref/noop")
	}
	b.ReportMetric(ref.opsPerSec, "ref-ops/s")
	b.ReportMetric(noop.opsPerSec, "noop-ops/s")
	b.ReportMetric(ref.serverCPUus, "ref-server-µs/req")
	b.ReportMetric(noop.serverCPUus, "noop-server-µs/req")
	b.ReportMetric(ref.serverAllocs, "ref-server-allocs/req")
	b.ReportMetric(noop.serverAllocs, "noop-server-allocs/req")
	b.ReportMetric(ref.clientCPUus, "client-µs/req")
	b.ReportMetric(ref.answerBytes, "answer-B/req")
	if az, ok := phases[provision.Azurite]; ok {
		if a := meansOf(az); a.opsPerSec > 0 {
			b.ReportMetric(ref.opsPerSec/a.opsPerSec, "ref/azurite")
		}
	}
	return nil
}
