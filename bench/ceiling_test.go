package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/provision"
)

// Targets of the SDK ceiling: the do-nothing server first, as the ceiling the others are
// measured against.
const ceilingNoop = "noop"

var ceilingTargets = []string{ceilingNoop, provision.ReferenceHTTP, provision.Azurite}

// Targets of the protocol issue: reference-http at least ceilingShare of the do-nothing
// server, and more than azuriteFactor times Azurite, for every operation.
const (
	ceilingShare  = 0.70
	azuriteFactor = 10
)

// BenchmarkSDKCeiling measures the same aztables client, 16 workers, against the do-nothing
// server, reference-http and Azurite, for insert, point get, merge-upsert and a 20-row
// partition query, and prints each target's share of the ceiling. The targets take turns
// operation by operation, so that a machine whose load drifts treats them alike.
func BenchmarkSDKCeiling(b *testing.B) {
	if !*flagCeiling {
		b.Skip("skipped by -ceiling=false")
	}
	noop := httptest.NewServer(NoopTableHandler())
	defer noop.Close()
	hc := &http.Client{Transport: NewCeilingTransport()}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	clients := map[string]*Ceiling{}
	defer func() {
		for _, c := range clients {
			_ = c.Close(context.WithoutCancel(ctx))
		}
	}()
	open := func(b *testing.B, name string) *Ceiling {
		if c, ok := clients[name]; ok {
			return c
		}
		endpoint := noop.URL + "/" + wire.DevAccountName
		if name != ceilingNoop {
			t, err := openTarget(name, provision.DriverREST)
			if err != nil {
				b.Skipf("%s is not available: %v", name, err)
			}
			endpoint = t.Info.Endpoint
		}
		c, err := NewCeiling(ctx, endpoint, name == ceilingNoop, hc)
		if err != nil {
			b.Fatal(err)
		}
		clients[name] = c
		return c
	}
	figures := map[string]map[CeilingOp]Summary{}
	for _, op := range CeilingOps() {
		for _, name := range ceilingTargets {
			b.Run("backend="+name+"/op="+string(op), func(b *testing.B) {
				c := open(b, name)
				rctx, cancel := context.WithTimeout(context.Background(), runTimeout)
				defer cancel()
				s, err := c.Run(rctx, op, Limit{Ops: b.N}, b)
				if err != nil {
					b.Fatal(err)
				}
				reportMetrics(b, s)
				if figures[name] == nil {
					figures[name] = map[CeilingOp]Summary{}
				}
				figures[name][op] = s
			})
		}
	}
	// Printed rather than logged: a benchmark with sub-benchmarks does not print its own log.
	for _, line := range ceilingVerdict(figures) {
		fmt.Println(line)
	}
}

// ceilingVerdict compares reference-http with the ceiling and with Azurite, per operation:
// by throughput, and by the CPU time this process spent per request (client and, for
// reference-http, server), which a busy machine disturbs less.
func ceilingVerdict(figures map[string]map[CeilingOp]Summary) []string {
	lines := []string{fmt.Sprintf("SDK ceiling (aztables, %d workers), the reference server's development aims: >= %.0f%% of the do-nothing server and > %dx Azurite", CeilingWorkers, ceilingShare*100, azuriteFactor)}
	for _, op := range CeilingOps() {
		ceil, ref, az := figures[ceilingNoop][op], figures[provision.ReferenceHTTP][op], figures[provision.Azurite][op]
		var parts []string
		parts = append(parts, fmt.Sprintf("SDK ceiling %-12s noop %6.0f ops/s, reference-http %6.0f, azurite %6.0f", op, ceil.OpsPerSec, ref.OpsPerSec, az.OpsPerSec))
		if ceil.OpsPerSec > 0 && ref.OpsPerSec > 0 {
			share := ref.OpsPerSec / ceil.OpsPerSec
			parts = append(parts, fmt.Sprintf("reference-http at %.0f%% of the ceiling (%s)", share*100, verdict(share >= ceilingShare)))
		}
		if ceil.CPUPerOp > 0 && ref.CPUPerOp > 0 {
			share := ceil.CPUPerOp / ref.CPUPerOp
			parts = append(parts, fmt.Sprintf("by CPU per request %.0f/%.0f µs: %.0f%% (%s)", ceil.CPUPerOp, ref.CPUPerOp, share*100, verdict(share >= ceilingShare)))
		}
		if az.OpsPerSec > 0 && ref.OpsPerSec > 0 {
			parts = append(parts, fmt.Sprintf("%.1fx azurite (%s)", ref.OpsPerSec/az.OpsPerSec, verdict(ref.OpsPerSec > azuriteFactor*az.OpsPerSec)))
		}
		lines = append(lines, strings.Join(parts, "; "))
	}
	return lines
}

// verdict words a comparison with the reference server's performance aims. The aims are
// the project's own, for its developers: missing one is information, not a failure of the
// backends benchmarked, so it is not worded as one.
func verdict(ok bool) string {
	if ok {
		return "meets the aim"
	}
	return "under the aim"
}
