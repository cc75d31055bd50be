package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
// partition query, and logs each target's share of the ceiling.
func BenchmarkSDKCeiling(b *testing.B) {
	if !*flagCeiling {
		b.Skip("skipped by -ceiling=false")
	}
	noop := httptest.NewServer(NoopTableHandler())
	defer noop.Close()
	hc := &http.Client{Transport: NewCeilingTransport()}
	var mu sync.Mutex
	figures := map[string]map[CeilingOp]float64{}
	for _, name := range ceilingTargets {
		b.Run("backend="+name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
			defer cancel()
			endpoint := noop.URL + "/" + wire.DevAccountName
			if name != ceilingNoop {
				endpoint = target(b, name, provision.DriverREST).Info.Endpoint
			}
			c, err := NewCeiling(ctx, endpoint, name == ceilingNoop, hc)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
			for _, op := range CeilingOps() {
				b.Run("op="+string(op), func(b *testing.B) {
					rctx, cancel := context.WithTimeout(context.Background(), runTimeout)
					defer cancel()
					s, err := c.Run(rctx, op, Limit{Ops: b.N}, b)
					if err != nil {
						b.Fatal(err)
					}
					reportMetrics(b, s)
					mu.Lock()
					if figures[name] == nil {
						figures[name] = map[CeilingOp]float64{}
					}
					figures[name][op] = s.OpsPerSec
					mu.Unlock()
				})
			}
		})
	}
	// Printed rather than logged: a benchmark with sub-benchmarks does not print its own log.
	for _, line := range ceilingVerdict(figures) {
		fmt.Println(line)
	}
}

// ceilingVerdict compares reference-http with the ceiling and with Azurite, per operation.
func ceilingVerdict(figures map[string]map[CeilingOp]float64) []string {
	lines := []string{fmt.Sprintf("SDK ceiling (aztables, %d workers), target: reference-http >= %.0f%% of the do-nothing server and > %dx Azurite", CeilingWorkers, ceilingShare*100, azuriteFactor)}
	for _, op := range CeilingOps() {
		ceil, ref, az := figures[ceilingNoop][op], figures[provision.ReferenceHTTP][op], figures[provision.Azurite][op]
		var parts []string
		parts = append(parts, fmt.Sprintf("SDK ceiling %-12s noop %8.0f ops/s, reference-http %8.0f, azurite %8.0f", op, ceil, ref, az))
		if ceil > 0 && ref > 0 {
			share := ref / ceil
			parts = append(parts, fmt.Sprintf("reference-http at %.0f%% of the ceiling (%s)", share*100, verdict(share >= ceilingShare)))
		}
		if az > 0 && ref > 0 {
			parts = append(parts, fmt.Sprintf("%.1fx azurite (%s)", ref/az, verdict(ref > azuriteFactor*az)))
		}
		lines = append(lines, strings.Join(parts, "; "))
	}
	return lines
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
