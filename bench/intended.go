package bench

import (
	"fmt"
	"strings"
)

// Names of the two latencies of a paced or open run, as the tools that define them name
// them: the service time is YCSB's plain measurement and wrk2's "uncorrected" latency; the
// latency from the intended start is YCSB's "Intended-" measurement and wrk2's corrected
// latency (docs/BENCHMARKS.md).
const (
	ServiceTimeName = "YCSB's plain measurement, wrk2's uncorrected latency"
	IntendedName    = "YCSB's Intended- measurement, wrk2's corrected latency"
)

// pacedRow is one workload of a paced or open run in the intended-start table.
type pacedRow struct {
	workload, backend string
	s                 Summary
}

// intendedTable renders, for the rows that have latencies from the intended start, the
// steps offered, started late and dropped, and both latencies' percentiles side by side.
// It is empty when no row has them.
func intendedTable(rows []pacedRow) string {
	var b strings.Builder
	withBackend := false
	for _, r := range rows {
		withBackend = withBackend || r.backend != ""
	}
	for _, r := range rows {
		if r.s.Intended == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## Latency from the intended start\n\n")
			fmt.Fprintf(&b, "A paced or open run meant each step to start at a set time. The service time is measured from when a request was sent: "+
				"it leaves out the wait of a step that started late because earlier ones were slow (coordinated omission). "+
				"The latency from the intended start counts that wait. The service time is %s; the latency from the intended start is %s. "+
				"A step is late when it started more than %s after its intended start; dropped when an open run found every worker busy at its cap.\n\n", ServiceTimeName, IntendedName, LateAfter)
			b.WriteString("| workload |")
			if withBackend {
				b.WriteString(" backend |")
			}
			b.WriteString(" steps offered | late | dropped | service p50 µs | service p99 µs | service p99.9 µs | intended p50 µs | intended p99 µs | intended p99.9 µs |\n|---|")
			if withBackend {
				b.WriteString("---|")
			}
			b.WriteString(strings.Repeat("---:|", 9) + "\n")
		}
		fmt.Fprintf(&b, "| %s |", mdCell(r.workload))
		if withBackend {
			fmt.Fprintf(&b, " %s |", mdCell(r.backend))
		}
		fmt.Fprintf(&b, " %d | %d | %d | %s | %s | %s | %s | %s | %s |\n", r.s.Offered, r.s.Late, r.s.Dropped,
			num(r.s.Latency.P50), num(r.s.Latency.P99), num(r.s.Latency.P999), num(r.s.Intended.P50), num(r.s.Intended.P99), num(r.s.Intended.P999))
	}
	return b.String()
}
