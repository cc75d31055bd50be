package bench

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"time"
)

// Merged is the merge of a sharded run's shards: per workload the shards' measures added
// up (histograms merged, counts summed, per-second series aligned on the backend's clock),
// what `conform bench merge` writes as bench.json, bench.md and bench.svg.
type Merged struct {
	Generated time.Time `json:"generated"`
	Run       ShardRun  `json:"run"` // Shard.Index is meaningless here
	// Shards are each shard's clock offset and times, by index.
	Shards   []MergedShard   `json:"shards"`
	Outcomes []MergedOutcome `json:"outcomes"`
}

// MergedShard is what the merge kept of one shard.
type MergedShard struct {
	Index    int         `json:"index"`
	Backend  BackendRun  `json:"backend"`
	Clock    ClockOffset `json:"clock"`
	Started  time.Time   `json:"started"`
	Finished time.Time   `json:"finished"`
}

// MergedOutcome is one workload over all shards. Its Summary's throughput is over the span
// from the first shard's start to the last one's end, on the backend's clock.
type MergedOutcome struct {
	Case   string  `json:"case"`
	Family string  `json:"family"`
	Params []Param `json:"params"`
	Steps  int64   `json:"steps"`
	Summary
	Series     []Second         `json:"per_second"`
	Partitions []PartitionTally `json:"partitions,omitempty"`
	// ThrottlingFrom is where throttling started: the first second whose answers were at
	// least OnsetShare throttles. Nil when none was.
	ThrottlingFrom *Onset `json:"throttling_from,omitempty"`
	// Loading is the shards' load phase: the entities they wrote together and the longest
	// shard's load time.
	Loading *LoadPhase `json:"loading,omitempty"`
	// Errors of shards whose run of this workload failed, as "shard I: ...".
	Failures []string `json:"failures,omitempty"`
	Note     string   `json:"note,omitempty"`

	raw RawMeasures
}

// Merge adds up the shards of one run. It refuses shards of different runs, workloads or
// settings, a shard given twice, and, naming them, missing shards (the error then wraps
// ErrMissingShards).
func Merge(shards []ShardResults) (*Merged, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shard to merge")
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].Run.Shard.Index < shards[j].Run.Shard.Index })
	first := shards[0].Run
	seen := map[int]bool{}
	for _, s := range shards {
		if d := first.differs(s.Run); d != "" {
			return nil, fmt.Errorf("shard %s belongs to another run than shard %s: %s", s.Run.Shard, first.Shard, d)
		}
		if seen[s.Run.Shard.Index] {
			return nil, fmt.Errorf("shard %s is given twice", s.Run.Shard)
		}
		seen[s.Run.Shard.Index] = true
	}
	var missing []string
	for i := 0; i < first.Shard.Count; i++ {
		if !seen[i] {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w of run %s: %s of %d", ErrMissingShards, first.RunID, strings.Join(missing, ", "), first.Shard.Count)
	}
	m := &Merged{Generated: time.Now().UTC(), Run: first}
	m.Run.Shard.Index = 0
	for _, s := range shards {
		m.Shards = append(m.Shards, MergedShard{Index: s.Run.Shard.Index, Backend: s.Run.Backend, Clock: s.Clock, Started: s.Started, Finished: s.Finished})
	}
	for _, name := range first.Workloads {
		mo := MergedOutcome{Case: name}
		var begin, end time.Time
		type part struct {
			start   time.Time
			measure RawMeasures
		}
		var parts []part
		for _, s := range shards {
			o, ok := s.outcome(name)
			if !ok {
				mo.Failures = append(mo.Failures, fmt.Sprintf("shard %d: did not run", s.Run.Shard.Index))
				continue
			}
			mo.Family, mo.Params, mo.Note = o.Family, o.Params, o.Note
			if o.Loading != nil {
				if mo.Loading == nil {
					mo.Loading = &LoadPhase{RequestsPerStep: o.Loading.RequestsPerStep}
				}
				mo.Loading.Entities += o.Loading.Entities
				mo.Loading.Elapsed = max(mo.Loading.Elapsed, o.Loading.Elapsed)
			}
			if o.Error != "" {
				mo.Failures = append(mo.Failures, fmt.Sprintf("shard %d: %s", s.Run.Shard.Index, o.Error))
			}
			if o.Started.IsZero() {
				continue
			}
			start := o.Started.Add(s.Clock.Offset) // on the backend's clock
			stop := start.Add(o.Elapsed)
			if begin.IsZero() || start.Before(begin) {
				begin = start
			}
			if stop.After(end) {
				end = stop
			}
			mo.Steps += o.Steps
			parts = append(parts, part{start, o.Measures})
		}
		for _, p := range parts {
			mo.raw.Add(p.measure, int(math.Round(p.start.Sub(begin).Seconds())))
		}
		mo.Summary = mo.raw.Summary(end.Sub(begin))
		mo.Series, mo.Partitions = mo.raw.Series, mo.raw.Partitions
		mo.ThrottlingFrom = throttlingOnset(mo.Series)
		m.Outcomes = append(m.Outcomes, mo)
	}
	return m, nil
}

// OnsetShare is the throttled share of a second's answers from which throttling counts as
// started.
const OnsetShare = 0.01

// Onset is one second of a merged run: its index from the run's start, and the requests
// (at that second's rate) and throttling answers all shards saw in it.
type Onset struct {
	Second    int   `json:"second"`
	Requests  int64 `json:"requests"`
	Throttles int64 `json:"throttles"`
}

// throttlingOnset returns the first second of series whose throttled share is at least
// OnsetShare.
func throttlingOnset(series []Second) *Onset {
	for i, s := range series {
		if s.Throttles > 0 && throttledShare(s.Requests, s.Throttles) >= OnsetShare {
			return &Onset{Second: i, Requests: s.Requests, Throttles: s.Throttles}
		}
	}
	return nil
}

func (s ShardResults) outcome(name string) (ShardOutcome, bool) {
	for _, o := range s.Outcomes {
		if o.Case == name {
			return o, true
		}
	}
	return ShardOutcome{}, false
}

// Failed reports whether a shard's run of some workload failed.
func (m *Merged) Failed() bool {
	for _, o := range m.Outcomes {
		if len(o.Failures) > 0 {
			return true
		}
	}
	return false
}

// WriteFiles writes bench.json, bench.md and bench.svg into dir, creating it.
func (m *Merged) WriteFiles(dir string) error { return writeReportFiles(dir, m, m.Markdown(), m.SVG()) }

// throttledShare is the share of answers that were throttling answers.
func throttledShare(requests, throttles int64) float64 {
	if requests+throttles == 0 {
		return 0
	}
	return float64(throttles) / float64(requests+throttles)
}

// Markdown renders the merged run: its settings and shards, then per workload its
// throughput, latency percentiles, errors and throttles, then the most throttled
// partitions.
func (m *Merged) Markdown() []byte {
	var b strings.Builder
	r := m.Run
	b.WriteString("# conform bench: merged shards\n\n")
	fmt.Fprintf(&b, "Run %s on %s: %d shards, each in tables of its own; ", mdCell(r.RunID), mdCell(r.Backend.Name), r.Shard.Count)
	if r.Ops > 0 {
		fmt.Fprintf(&b, "%d operations per workload over all shards", r.Ops)
	} else {
		fmt.Fprintf(&b, "each shard ran each workload for %s", r.Duration)
	}
	switch {
	case r.Open && r.TargetRateTo > 0:
		fmt.Fprintf(&b, ", each shard's arrivals ramped from %s to %s operations/s (open model, up to %d workers)", num(r.TargetRate), num(r.TargetRateTo), r.MaxWorkers)
	case r.Open:
		fmt.Fprintf(&b, ", arrivals at %s operations/s per shard (open model, up to %d workers)", num(r.TargetRate), r.MaxWorkers)
	case r.TargetRate > 0 && r.TargetRateTo > 0:
		fmt.Fprintf(&b, ", each shard's pace ramped from %s to %s operations/s", num(r.TargetRate), num(r.TargetRateTo))
	case r.TargetRate > 0:
		fmt.Fprintf(&b, ", paced at %s operations/s per shard", num(r.TargetRate))
	}
	fmt.Fprintf(&b, " (seed %d). Throughput is over the span from the first shard's start to the last one's end, on the backend's clock; "+
		"latencies are per request, in microseconds, from the shards' HdrHistograms merged; a throttle is a 429, 503 or 500 OperationTimedOut answer, retried as the SDKs retry it, never an error.\n\n", r.Seed)
	b.WriteString("| shard | started | clock offset to the backend | source |\n|---:|---|---:|---|\n")
	for _, s := range m.Shards {
		fmt.Fprintf(&b, "| %d | %s | %s ± %s | %s (%d samples) |\n", s.Index, s.Started.UTC().Format(time.RFC3339), s.Clock.Offset.Round(time.Millisecond), s.Clock.Uncertainty.Round(time.Millisecond), mdCell(s.Clock.Source), s.Clock.Samples)
	}
	b.WriteString("\n## Throughput, latency, throttling\n\n![throughput over time, latency percentiles and throttled share per partition](" + ReportSVG + ")\n\n")
	b.WriteString("| workload | requests | ops/s | entities/s | p50 µs | p99 µs | p99.9 µs | errors | throttles | throttled share | gave up throttled | throttling from |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	var failures, notes []string
	for _, o := range m.Outcomes {
		onset := "never"
		if t := o.ThrottlingFrom; t != nil {
			onset = fmt.Sprintf("second %d, at %s requests/s", t.Second, num(float64(t.Requests)))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %d | %d | %.1f%% | %d | %s |\n", mdCell(o.Case), o.Requests, num(o.OpsPerSec), num(o.EntitiesPerSec),
			num(o.Latency.P50), num(o.Latency.P99), num(o.Latency.P999), o.Errors, o.Throttles, 100*throttledShare(o.Requests, o.Throttles), o.GaveUp, onset)
		for _, f := range o.Failures {
			failures = append(failures, fmt.Sprintf("- %s, %s", o.Case, f))
		}
		if o.Note != "" && !contains(notes, o.Note) {
			notes = append(notes, o.Note)
		}
	}
	var phases []Outcome
	for _, o := range m.Outcomes {
		phases = append(phases, Outcome{Result: Result{Case: o.Case, Backend: m.Run.Backend.Name, Steps: o.Steps, Summary: o.Summary}, Loading: o.Loading})
	}
	b.WriteString(phasesTable(phases))
	var paced []pacedRow
	for _, o := range m.Outcomes {
		paced = append(paced, pacedRow{workload: o.Case, s: o.Summary})
	}
	b.WriteString(intendedTable(paced))
	b.WriteString("\n## Most throttled partitions\n\n")
	listed := false
	for _, o := range m.Outcomes {
		for _, p := range o.Partitions[:min(len(o.Partitions), 5)] {
			if p.Throttles == 0 {
				break
			}
			if !listed {
				b.WriteString("| workload | partition | requests | throttles | throttled share |\n|---|---|---:|---:|---:|\n")
				listed = true
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f%% |\n", mdCell(o.Case), mdCell(p.Partition), p.Requests, p.Throttles, 100*throttledShare(p.Requests, p.Throttles))
		}
	}
	if !listed {
		b.WriteString("No request was throttled.\n")
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(failures) > 0 {
		b.WriteString("\n## Failed runs\n\n" + strings.Join(failures, "\n") + "\n")
	}
	return []byte(b.String())
}

// SVG draws, per workload, one row of three panels: requests and throttles per second over
// the run, the p50, p99 and p99.9 latencies, and the throttled share of the most throttled
// partitions.
func (m *Merged) SVG() []byte {
	const (
		labelH = 22
		panelW = 300
		panelH = 110
		gap    = 50
		left   = 60
		top    = 50
	)
	rowH := labelH + panelH + 40
	width := left + 3*panelW + 2*gap + 20
	height := top + len(m.Outcomes)*rowH + 10
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">conform bench: run %s on %s, %d shards merged</text>`+"\n",
		html.EscapeString(m.Run.RunID), html.EscapeString(m.Run.Backend.Name), m.Run.Shard.Count)
	fmt.Fprintf(&b, `<rect x="10" y="28" width="12" height="12" fill="%s"/><text x="26" y="38">requests/s</text><rect x="110" y="28" width="12" height="12" fill="%s"/><text x="126" y="38">throttles/s</text>`+"\n", palette[0], palette[3])
	for i, o := range m.Outcomes {
		y0 := top + i*rowH
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y0+14, html.EscapeString(o.Case))
		py := y0 + labelH
		// Panel 1: requests and throttles per second.
		x0 := left
		peak := int64(1)
		for _, s := range o.Series {
			peak = max(peak, s.Requests, s.Throttles, s.Offered)
		}
		if n := len(o.Series); n < minSeriesSeconds {
			// A run of a second or two has only partial seconds: a line through them
			// would draw a rate the table contradicts (issue 34, item 15).
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#cccccc"/>`+"\n", x0, py, panelW, panelH)
			fmt.Fprintf(&b, `<text x="%d" y="%d">too short for a line over time (%d s):</text><text x="%d" y="%d">%s requests/s over the whole run, as in the table</text>`+"\n",
				x0+8, py+panelH/2-6, n, x0+8, py+panelH/2+10, num(o.OpsPerSec))
		} else {
			axes(&b, x0, py, panelW, panelH, "per second over the run (s)", num(float64(peak)))
		}
		if n := len(o.Series); n >= minSeriesSeconds {
			step := float64(panelW) / float64(max(n-1, 1))
			for _, series := range []struct {
				colour string
				value  func(Second) int64
			}{{palette[0], func(s Second) int64 { return s.Requests }}, {palette[3], func(s Second) int64 { return s.Throttles }}} {
				var pts []string
				for j, s := range o.Series {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", float64(x0)+float64(j)*step, float64(py+panelH)-float64(series.value(s))/float64(peak)*panelH))
				}
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", series.colour, strings.Join(pts, " "))
			}
			offeredLine(&b, o.Series, x0, py, panelW, panelH, peak)
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#555555">%d</text>`+"\n", x0+panelW, py+panelH+14, n)
			if t := o.ThrottlingFrom; t != nil {
				x := float64(x0) + float64(t.Second)*step
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="3,2"><title>throttling from second %d, at %d requests/s</title></line>`+"\n",
					x, py, x, py+panelH, palette[3], t.Second, t.Requests)
			}
		}
		// Panel 2: latency percentiles, bars on a linear axis up to p99.9.
		x0 += panelW + gap
		pcts := []struct {
			name string
			v    float64
		}{{"p50", o.Latency.P50}, {"p99", o.Latency.P99}, {"p99.9", o.Latency.P999}}
		hi := math.Max(o.Latency.P999, 1)
		if o.Intended != nil {
			hi = math.Max(hi, o.Intended.P999)
			intendedBars(&b, *o.Intended, x0, py, panelW, hi)
		}
		latencyTitle := "latency, µs"
		if o.Intended != nil {
			latencyTitle = "latency, µs: service time (filled), from the intended start (outlined)"
		}
		axes(&b, x0, py, panelW, panelH, latencyTitle, "")
		for j, p := range pcts {
			y := py + 10 + j*32
			w := p.v / hi * (panelW - 70)
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text><rect x="%d" y="%d" width="%.1f" height="18" fill="%s"/><text x="%.1f" y="%d">%s</text>`+"\n",
				x0+2, y+13, p.name, x0+40, y, w, palette[1], float64(x0+44)+w, y+13, num(p.v))
		}
		// Panel 3: throttled share of the most throttled partitions; one line when no
		// partition was throttled (a panel of 0.0% bars says nothing).
		throttlePanel(&b, o.Partitions, x0+panelW+gap, py, panelW, panelH)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// throttlePanel draws the throttled share of the five most throttled partitions at x0, y0;
// one line when no partition was throttled (a panel of 0.0% bars says nothing).
func throttlePanel(b *strings.Builder, partitions []PartitionTally, x0, y0, panelW, panelH int) {
	if !anyThrottled(partitions) {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#555555">no partition was throttled</text>`+"\n", x0, y0+14)
		return
	}
	axes(b, x0, y0, panelW, panelH, "throttled share per partition", "100%")
	for shown, p := range partitions[:min(len(partitions), 5)] {
		share := throttledShare(p.Requests, p.Throttles)
		y := y0 + 4 + shown*21
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="15" fill="%s"><title>%s: %d throttles, %d requests</title></rect><text x="%d" y="%d">%s %.1f%%</text>`+"\n",
			x0, y, math.Max(share*float64(panelW), 1), palette[3], html.EscapeString(p.Partition), p.Throttles, p.Requests, x0+4, y+12, html.EscapeString(shortLabel(p.Partition)), 100*share)
	}
}

// minSeriesSeconds is the fewest seconds a workload's series needs for bench.svg to draw
// it as a line: its first and last seconds are partial, so at least one full one between.
const minSeriesSeconds = 3

// anyThrottled reports whether any partition had a throttled answer.
func anyThrottled(ps []PartitionTally) bool {
	for _, p := range ps {
		if p.Throttles > 0 {
			return true
		}
	}
	return false
}

func axes(b *strings.Builder, x, y, w, h int, title, peak string) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#cccccc"/>`, x, y, w, h)
	fmt.Fprintf(b, `<text x="%d" y="%d" fill="#555555">%s</text>`, x, y+h+14, html.EscapeString(title))
	if peak != "" {
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" fill="#555555">%s</text>`, x-4, y+10, html.EscapeString(peak))
	}
	b.WriteString("\n")
}

func shortLabel(s string) string {
	if r := []rune(s); len(r) > 24 {
		return string(r[:21]) + "..."
	}
	return s
}

// offeredLine draws, over a per-second panel of a paced or open run whose scale is peak,
// the steps offered per second (dashed) beside the requests completed, and marks the
// seconds with dropped steps; it draws nothing for an unpaced run.
func offeredLine(b *strings.Builder, series []Second, x0, py, panelW, panelH int, peak int64) {
	var offered int64
	for _, s := range series {
		offered = max(offered, s.Offered)
	}
	if offered == 0 {
		return
	}
	scale := float64(panelH) / float64(peak)
	step := float64(panelW) / float64(max(len(series)-1, 1))
	var pts []string
	for j, s := range series {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", float64(x0)+float64(j)*step, float64(py+panelH)-float64(s.Offered)*scale))
		if s.Dropped > 0 {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%d" r="2.5" fill="%s"><title>second %d: %d of %d offered steps dropped</title></circle>`+"\n",
				float64(x0)+float64(j)*step, py+panelH-3, palette[3], j, s.Dropped, s.Offered)
		}
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="4,3" points="%s"><title>steps offered per second</title></polyline>`+"\n", palette[2], strings.Join(pts, " "))
	fmt.Fprintf(b, `<text x="%d" y="%d" fill="%s">offered (dashed)</text>`+"\n", x0+4, py+12, palette[2])
}

// intendedBars draws, in a latency panel scaled to hi, the percentiles from the intended
// start as outlined bars beside the service-time bars.
func intendedBars(b *strings.Builder, l Latency, x0, py, panelW int, hi float64) {
	for j, v := range []float64{l.P50, l.P99, l.P999} {
		y := py + 10 + j*32 + 19
		w := v / hi * float64(panelW-70)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="8" fill="none" stroke="%s"><title>from the intended start: %s µs</title></rect><text x="%.1f" y="%d" font-size="9">%s intended</text>`+"\n",
			x0+40, y, w, palette[4], num(v), float64(x0+44)+w, y+8, num(v))
	}
}
