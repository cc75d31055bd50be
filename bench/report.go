package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Report is a comparison of backends over the same workloads: what `conform bench` writes
// as bench.json, bench.md and bench.svg.
type Report struct {
	Generated time.Time `json:"generated"`
	// Duration is how long each workload ran on each backend.
	Duration time.Duration `json:"duration_ns"`
	Seed     uint64        `json:"seed"`
	Large    bool          `json:"large"`
	// Repeats is how many measured runs each workload had on each backend.
	Repeats int `json:"repeats,omitempty"`
	// Machine is how busy the machine was at the start and the end.
	Machine  *Machine     `json:"machine,omitempty"`
	Backends []BackendRun `json:"backends"`
	Outcomes []Outcome    `json:"outcomes"`
	// Growth holds the growth family's runs, one per backend (RunGrowth).
	Growth []GrowthResult `json:"growth,omitempty"`
}

// BackendRun describes one backend of a comparison; Error is set when it could not be opened.
type BackendRun struct {
	Name     string `json:"name"`
	Kind     string `json:"kind,omitempty"`
	Version  string `json:"version,omitempty"`
	Driver   string `json:"driver,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Outcome is one workload on one backend: its result, or why it has none.
type Outcome struct {
	Result
	// Loading is the workload's load phase, before its warm-up and measured run.
	Loading *LoadPhase `json:"loading,omitempty"`
	// Repeats are the throughputs (ops/s) of the workload's repeated runs, whose sum the
	// Result is (CombineRepeats); Interval is their mean's 95% interval, from MinRepeats on.
	Repeats  []float64 `json:"repeats_ops_per_sec,omitempty"`
	Interval *Interval `json:"ops_per_sec_interval,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// LoadPhase is what a workload's loading did: the entities it wrote and how long it took,
// and then how many requests one step of the workload took in its warm-up.
type LoadPhase struct {
	Entities        int64         `json:"entities"`
	Elapsed         time.Duration `json:"elapsed_ns"`
	RequestsPerStep float64       `json:"requests_per_step,omitempty"`
}

// Report file names.
const (
	ReportJSON     = "bench.json"
	ReportMarkdown = "bench.md"
	ReportSVG      = "bench.svg"
)

// WriteFiles writes bench.json, bench.md and bench.svg into dir, creating it.
func (r *Report) WriteFiles(dir string) error { return writeReportFiles(dir, r, r.Markdown(), r.SVG()) }

// writeReportFiles writes v as bench.json beside its bench.md and bench.svg into dir,
// creating it; a single run's Report and a merge of shards are written alike.
func writeReportFiles(dir string, v any, markdown, svg []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", ReportJSON, err)
	}
	for name, data := range map[string][]byte{ReportJSON: append(js, '\n'), ReportMarkdown: markdown, ReportSVG: svg} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// caseNames returns the workloads in the order they first ran.
func (r *Report) caseNames() []string {
	var names []string
	seen := map[string]bool{}
	for _, o := range r.Outcomes {
		if !seen[o.Case] {
			seen[o.Case] = true
			names = append(names, o.Case)
		}
	}
	return names
}

func (r *Report) outcome(backend, c string) (Outcome, bool) {
	for _, o := range r.Outcomes {
		if o.Backend == backend && o.Case == c {
			return o, true
		}
	}
	return Outcome{}, false
}

// Markdown renders the comparison: the backends, then one row per workload with each
// backend's throughput, p99 and errors, and the first backend's throughput over each other's.
func (r *Report) Markdown() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# conform bench\n\n")
	fmt.Fprintf(&b, "Generated %s. Each workload ran for %s per backend (seed %d%s). An operation is one request; ", r.Generated.UTC().Format(time.RFC3339), r.Duration, r.Seed, map[bool]string{true: ", large data sets", false: ""}[r.Large])
	fmt.Fprintf(&b, "latencies are per request, in microseconds, from per-worker HdrHistograms. Every run checked a sample of its results. ")
	fmt.Fprintf(&b, "A throttle is a 429, 503 or 500 OperationTimedOut answer, retried as the SDKs retry it, never an error.\n\n")
	if r.Repeats > 1 {
		fmt.Fprintf(&b, "Each workload ran %d times on each backend; ops/s is their mean with its 95%% interval (Student's t), the other figures are over all the runs.\n\n", r.Repeats)
	}
	if r.Machine != nil {
		fmt.Fprintf(&b, "Machine: %s.\n\n", r.Machine.Words())
	}
	b.WriteString("| backend | kind | version | driver | endpoint |\n|---|---|---|---|---|\n")
	for _, be := range r.Backends {
		if be.Error != "" {
			fmt.Fprintf(&b, "| %s | not run: %s | | | |\n", mdCell(be.Name), mdCell(be.Error))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdCell(be.Name), mdCell(be.Kind), mdCell(be.Version), mdCell(be.Driver), mdCell(be.Endpoint))
	}
	backends := r.ranBackends()
	b.WriteString("\n## Throughput and latency\n\n")
	b.WriteString("![throughput and p99 per workload](" + ReportSVG + ")\n\n")
	b.WriteString("| workload |")
	for _, n := range backends {
		fmt.Fprintf(&b, " %s ops/s | %s entities/s | %s p50 µs | %s p99 µs | %s errors / throttles |", n, n, n, n, n)
	}
	for _, n := range backends[min(1, len(backends)):] {
		fmt.Fprintf(&b, " ops/s, %s ÷ %s |", backends[0], n)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|", 5*len(backends)+max(0, len(backends)-1)))
	b.WriteString("\n")
	var failures, notes []string
	noRatio, tooNoisy := false, false
	for _, c := range r.caseNames() {
		fmt.Fprintf(&b, "| %s |", mdCell(c))
		for _, n := range backends {
			o, ok := r.outcome(n, c)
			switch {
			case !ok:
				b.WriteString(" | | | | |")
			case o.Error != "":
				b.WriteString(" failed | | | | |")
				failures = append(failures, fmt.Sprintf("- %s on %s: %s", c, n, o.Error))
			default:
				fmt.Fprintf(&b, " %s | %s | %s | %s | %d / %d |", opsCell(o), num(o.EntitiesPerSec), num(o.Latency.P50), num(o.Latency.P99), o.Errors, o.Throttles)
			}
			if ok && o.Note != "" && !contains(notes, o.Note) {
				notes = append(notes, o.Note)
			}
		}
		first, fok := r.outcome(backends[0], c)
		for _, n := range backends[min(1, len(backends)):] {
			o, ok := r.outcome(n, c)
			if !fok || !ok || first.Error != "" || o.Error != "" {
				b.WriteString(" |")
				continue
			}
			ratio, known := ratioOf(first, o)
			switch {
			case !known && (first.Interval == nil || o.Interval == nil):
				b.WriteString(" no interval |")
				noRatio = true
				continue
			case !known:
				b.WriteString(" too noisy |")
				tooNoisy = true
				continue
			}
			fmt.Fprintf(&b, " %s |", ratio)
		}
		b.WriteString("\n")
	}
	if noRatio {
		fmt.Fprintf(&b, "\nA ratio is given only with its interval: it needs %d or more runs of each workload on each backend (conform bench --repeats %d). "+
			"One short run per backend can differ from the next by a factor of several on a shared machine.\n", MinRepeats, MinRepeats)
	}
	if tooNoisy {
		b.WriteString("\nA ratio marked too noisy has no bound: the runs of its second backend disagree so much that their interval reaches zero. Run longer (--duration) or more times (--repeats).\n")
	}
	b.WriteString(phasesTable(r.Outcomes))
	b.WriteString(growthTable(r.Growth))
	var paced []pacedRow
	for _, o := range r.Outcomes {
		if o.Error == "" {
			paced = append(paced, pacedRow{workload: o.Case, backend: o.Backend, s: o.Summary})
		}
	}
	b.WriteString(intendedTable(paced))
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(failures) > 0 {
		b.WriteString("\n## Failed runs\n\nA failed run has no figures: its results were wrong or too many of its requests failed.\n\n")
		sort.Strings(failures)
		b.WriteString(strings.Join(failures, "\n") + "\n")
	}
	return []byte(b.String())
}

// ranBackends returns the backends that were opened, in order.
func (r *Report) ranBackends() []string {
	var out []string
	for _, be := range r.Backends {
		if be.Error == "" {
			out = append(out, be.Name)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// num renders a figure with three significant digits and thousands separators.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1000:
		s := fmt.Sprintf("%.0f", v)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// tick labels the decade 10^d of a logarithmic axis.
func tick(d float64) string {
	if d < 0 {
		return fmt.Sprintf("%g", math.Pow(10, d))
	}
	if v := math.Pow(10, d); v >= 1000 {
		return num(v)
	}
	return fmt.Sprintf("%.0f", math.Pow(10, d))
}

// Colours of the backends in the plot, in order.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}

// SVG plots, per workload, each backend's throughput (ops/s) and p99 latency (µs) as
// horizontal bars on logarithmic axes, side by side.
func (r *Report) SVG() []byte {
	cases := r.caseNames()
	backends := r.ranBackends()
	if len(cases) == 0 && len(r.Growth) > 0 {
		return r.growthOnlySVG()
	}
	const (
		labelW  = 360
		panelW  = 360
		gap     = 80
		top     = 70
		barH    = 9
		groupGp = 8
		bottom  = 40
	)
	groupH := len(backends)*barH + groupGp
	height := top + len(cases)*groupH + bottom
	width := labelW + 2*panelW + gap + 60
	growth, growthH := r.growthChart(width)
	barsH := height
	height += growthH
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">conform bench: throughput and p99 latency per workload (log scales)</text>`+"\n")
	for i, n := range backends {
		x := 10 + i*150
		fmt.Fprintf(&b, `<rect x="%d" y="28" width="12" height="12" fill="%s"/><text x="%d" y="38">%s</text>`+"\n", x, palette[i%len(palette)], x+16, html.EscapeString(n))
	}
	type metric struct {
		title string
		value func(o Outcome) float64
		x0    int
		// intended, when set, is the value from the intended start, drawn as an outline.
		intended func(o Outcome) float64
	}
	intendedP99 := func(o Outcome) float64 {
		if o.Intended == nil {
			return 0
		}
		return o.Intended.P99
	}
	p99Title := "p99 latency, µs (shorter is better)"
	for _, o := range r.Outcomes {
		if o.Intended != nil {
			p99Title = "p99 latency, µs: service time (bar), from the intended start (dashed)"
			break
		}
	}
	panels := []metric{
		{"throughput, ops/s (longer is better)", func(o Outcome) float64 { return o.OpsPerSec }, labelW, nil},
		{p99Title, func(o Outcome) float64 { return o.Latency.P99 }, labelW + panelW + gap, intendedP99},
	}
	for _, p := range panels {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, o := range r.Outcomes {
			if v := p.value(o); o.Error == "" && v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			if p.intended != nil && o.Error == "" && p.intended(o) > 0 {
				hi = math.Max(hi, p.intended(o))
			}
		}
		if math.IsInf(lo, 1) {
			lo, hi = 1, 10
		}
		dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if dhi <= dlo {
			dhi = dlo + 1
		}
		scale := func(v float64) float64 { return (math.Log10(v) - dlo) / (dhi - dlo) * panelW }
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", p.x0, top-20, html.EscapeString(p.title))
		for d := dlo; d <= dhi; d++ {
			x := float64(p.x0) + scale(math.Pow(10, d))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`, x, top-4, x, height-bottom)
			// The scale is labelled above and below the bars: a report of 40 workloads is taller
			// than a screen.
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555">%s</text>`+"\n", x, height-bottom+14, tick(d))
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555" font-size="9">%s</text>`+"\n", x, top-7, tick(d))
		}
		for ci, c := range cases {
			y0 := top + ci*groupH
			for bi, n := range backends {
				o, ok := r.outcome(n, c)
				y := y0 + bi*barH
				if !ok {
					continue
				}
				if o.Error != "" {
					fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#d62728" font-size="9">failed</text>`+"\n", p.x0+2, y+barH-1)
					continue
				}
				v := p.value(o)
				if v <= 0 {
					continue
				}
				w := math.Max(1, scale(v))
				if p.intended != nil {
					if iv := p.intended(o); iv > 0 {
						fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="none" stroke="%s" stroke-dasharray="2,2"><title>%s on %s, from the intended start: %s</title></rect>`+"\n",
							p.x0, y, math.Max(1, scale(iv)), barH-1, palette[bi%len(palette)], html.EscapeString(c), html.EscapeString(n), num(iv))
					}
				}
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s on %s: %s</title></rect>`+"\n",
					p.x0, y, w, barH-1, palette[bi%len(palette)], html.EscapeString(c), html.EscapeString(n), num(v))
			}
		}
	}
	for ci, c := range cases {
		y := top + ci*groupH + len(backends)*barH/2 + 4
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y, html.EscapeString(c))
	}
	if growthH > 0 {
		fmt.Fprintf(&b, `<svg x="0" y="%d" width="%d" height="%d">`+"\n%s</svg>\n", barsH, width, growthH, growth)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// phasesTable renders the load and run phases of each workload apart: the entities its
// loading wrote and how long that took, the requests one step took in its warm-up, and
// the measured run's steps, requests and time. Empty when no workload was loaded.
func phasesTable(outcomes []Outcome) string {
	var b strings.Builder
	for _, o := range outcomes {
		if o.Loading == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## Load and run phases\n\nEach workload loads its data, warms up (unmeasured), then runs; only the run is measured (over shards: the entities they loaded together, the longest shard's load). " +
				"Requests per step are the warm-up's: one for a point read, one per page for a scan.\n\n" +
				"| workload | backend | entities loaded | load s | requests per step | run steps | run requests | run s |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.3g | %d | %d | %.2f |\n", mdCell(o.Case), mdCell(o.Backend), o.Loading.Entities, o.Loading.Elapsed.Seconds(),
			o.Loading.RequestsPerStep, o.Steps, o.Requests, o.Elapsed.Seconds())
	}
	return b.String()
}

// opsCell is an outcome's throughput: with repeats, the mean and its 95% interval.
func opsCell(o Outcome) string {
	if o.Interval != nil {
		return fmt.Sprintf("%s (%s–%s)", num(o.Interval.Mean), num(math.Max(0, o.Interval.Low)), num(o.Interval.High))
	}
	return num(o.OpsPerSec)
}

// ratioOf is a's throughput over b's with its interval, "1.23× (1.10–1.40×)", and false
// when either lacks an interval (fewer than MinRepeats runs).
func ratioOf(a, b Outcome) (string, bool) {
	if a.Interval == nil || b.Interval == nil {
		return "", false
	}
	r, ok := RatioInterval(*a.Interval, *b.Interval)
	if !ok {
		return "", false
	}
	s := fmt.Sprintf("%.2f× (%.2f–%.2f×)", r.Mean, r.Low, r.High)
	if r.Low <= 1 && r.High >= 1 {
		s += " no difference shown"
	}
	return s, true
}
