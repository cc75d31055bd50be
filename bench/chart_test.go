package bench

import (
	"strings"
	"testing"
)

// bench.svg of a short run draws no line through partial seconds (a one-second workload
// drew a flat line at a rate the table contradicted), and says the run's rate as the table
// does; a run where nothing was throttled gets one line, not a panel of 0.0% bars (issue
// 34, item 15).
func TestChartOfAShortRunWithoutThrottling(t *testing.T) {
	short := MergedOutcome{Case: "PointGet/short", Series: []Second{{Requests: 310}},
		Partitions: []PartitionTally{{Partition: "p0", Requests: 310}, {Partition: "p1", Requests: 290}}}
	short.OpsPerSec = 1000
	svg := string((&Merged{Run: ShardRun{RunID: "r", Shard: Shard{0, 1}}, Outcomes: []MergedOutcome{short}}).SVG())
	if strings.Contains(svg, "<polyline") {
		t.Error("a one-second run is drawn as a line")
	}
	if !strings.Contains(svg, "too short for a line over time (1 s)") || !strings.Contains(svg, "1,000 requests/s over the whole run") {
		t.Errorf("the short run's panel does not say why there is no line, or its rate:\n%s", svg)
	}
	if strings.Contains(svg, "0.0%") || !strings.Contains(svg, "no partition was throttled") {
		t.Errorf("the partition panel of a run without throttling:\n%s", svg)
	}

	long := MergedOutcome{Case: "Insert/long", Series: []Second{{Requests: 500}, {Requests: 1000}, {Requests: 1000, Throttles: 30}, {Requests: 400}},
		Partitions: []PartitionTally{{Partition: "p0", Requests: 2900, Throttles: 30}}}
	svg = string((&Merged{Run: ShardRun{RunID: "r", Shard: Shard{0, 1}}, Outcomes: []MergedOutcome{long}}).SVG())
	if strings.Count(svg, "<polyline") != 2 || !strings.Contains(svg, "throttled share per partition") || strings.Contains(svg, "no partition was throttled") {
		t.Errorf("a four-second run with throttling lost its lines or its partition panel:\n%s", svg)
	}
}
