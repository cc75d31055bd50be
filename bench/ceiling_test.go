package bench

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/provision"
)

var (
	flagCeilingPhase   = flag.Duration("ceiling.phase", 2*time.Second, "BenchmarkSDKCeiling: how long each target runs each operation")
	flagCeilingAzurite = flag.Bool("ceiling.azurite", false, "BenchmarkSDKCeiling: also run Azurite (npm), reported as the reference's throughput over Azurite's")
)

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
// that replays, byte for byte, the answers the reference gave to the same requests. Per
// operation it reports the reference's throughput as a share of the ceiling's ("ratio"), and
// the server's CPU time and allocations per request for both, so that benchstat can compare
// commits:
//
//	go test ./bench -run '^$' -bench SDKCeiling -count 5 | tee new.txt
//
// The targets take turns within each operation, in alternating order, so that a machine
// whose load drifts treats them alike.
func BenchmarkSDKCeiling(b *testing.B) {
	if !*flagCeiling {
		b.Skip("skipped by -ceiling=false")
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	ref := labelledServer(ctx, provision.ReferenceHTTP, tableserver.New(reference.New()))
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
	if *flagCeilingAzurite {
		t, err := openTarget(provision.Azurite, provision.DriverREST)
		if err != nil {
			b.Logf("azurite is not available: %v", err)
		} else {
			targets = append(targets, ceilingTarget{name: provision.Azurite, endpoint: t.Info.Endpoint})
		}
	}
	for _, op := range CeilingOps() {
		b.Run("op="+string(op), func(b *testing.B) {
			phases := map[string][]ceilingPhase{}
			for i := 0; i < b.N; i++ {
				for j := range targets {
					t := targets[j]
					if i%2 == 1 {
						t = targets[len(targets)-1-j]
					}
					p, err := runCeilingPhase(ctx, t, op, *flagCeilingPhase)
					if err != nil {
						b.Fatalf("%s %s: %v", t.name, op, err)
					}
					phases[t.name] = append(phases[t.name], p)
				}
			}
			if err := reportCeiling(b, phases); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// labelledServer starts an httptest server for h whose goroutines (its accept loop, and
// the connections' goroutines it starts, which inherit its labels) carry the profiler label
// server=name, so that a -cpuprofile of the benchmark splits by server:
// `go tool pprof -tagfocus server=noop ...`.
func labelledServer(ctx context.Context, name string, h http.Handler) *httptest.Server {
	var ts *httptest.Server
	pprof.Do(ctx, pprof.Labels("server", name), func(context.Context) { ts = httptest.NewServer(h) })
	return ts
}

// runCeilingPhase runs op against t for d with a fresh load client and measures this
// process's CPU time and allocations while the client's timed phase runs.
func runCeilingPhase(ctx context.Context, t ceilingTarget, op CeilingOp, d time.Duration) (ceilingPhase, error) {
	l, err := StartSDKLoad(ctx, SDKLoadSpec{Endpoint: t.endpoint, Canned: t.canned, Op: op, Duration: d})
	if err != nil {
		return ceilingPhase{}, err
	}
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
		b.ReportMetric(ref.opsPerSec/noop.opsPerSec, "ratio")
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
