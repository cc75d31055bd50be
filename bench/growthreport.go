package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// growthTable renders the growth runs: per backend and step, the load's time, each
// operation's p50 and p99, the memory per entity and why a step stopped. Empty without
// growth runs.
func growthTable(runs []GrowthResult) string {
	if len(runs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Cost as the data grows\n\n")
	fmt.Fprintf(&b, "Each backend's table was loaded in steps (%d partitions, %d-byte payloads); at each step every operation ran for the requests asked, "+
		"within the step's budget of %s, its loading included. A step that exceeded its budget was stopped and the larger ones not run. "+
		"Latencies are service times in µs; a range query reads %d rows of one partition, a batch upserts up to %d entities of one partition. "+
		"Bytes per entity are this process's heap after a collection, over the entities, where the backend runs in it; "+
		"restart is how long the reference took to reopen its data directory after the step (--growth-data).\n\n",
		growthPartitions, growthPayload, runs[0].Budget, rangeRows, 100)
	b.WriteString("![cost against size, log axes](" + ReportSVG + ")\n\n")
	b.WriteString("| backend | entities | load s |")
	for _, op := range growthOperations {
		fmt.Fprintf(&b, " %s p50 µs | %s p99 µs |", op, op)
	}
	b.WriteString(" bytes per entity | restart s | stopped |\n|---|---:|---:|" + strings.Repeat("---:|", 2*len(growthOperations)) + "---:|---:|---|\n")
	for _, r := range runs {
		if r.Error != "" && len(r.Steps) == 0 {
			fmt.Fprintf(&b, "| %s | | |%s | | failed: %s |\n", mdCell(r.Backend), strings.Repeat(" |", 2*len(growthOperations)), mdCell(r.Error))
			continue
		}
		for _, s := range r.Steps {
			fmt.Fprintf(&b, "| %s | %s | %.2f |", mdCell(r.Backend), num(float64(s.Entities)), s.LoadElapsed.Seconds())
			for _, name := range growthOperations {
				if op, ok := s.Op(name); ok && op.Requests > 0 {
					fmt.Fprintf(&b, " %s | %s |", num(op.Latency.P50), num(op.Latency.P99))
				} else {
					b.WriteString(" | |")
				}
			}
			bpe := ""
			if s.BytesPerEntity > 0 {
				bpe = num(s.BytesPerEntity)
			}
			restart := ""
			if s.Restart > 0 {
				restart = fmt.Sprintf("%.2f", s.Restart.Seconds())
			}
			fmt.Fprintf(&b, " %s | %s | %s |\n", bpe, restart, mdCell(s.Stopped))
		}
		if r.Error != "" {
			fmt.Fprintf(&b, "| %s | | |%s | | failed: %s |\n", mdCell(r.Backend), strings.Repeat(" |", 2*len(growthOperations)), mdCell(r.Error))
		}
	}
	return b.String()
}

// growthChart draws the growth runs, width wide: one panel per operation, entities against
// latency on log axes, per backend its p99 (solid) and p50 (dashed). It returns the
// drawing and its height, 0 without growth runs.
func (r *Report) growthChart(width int) (string, int) {
	if len(r.Growth) == 0 {
		return "", 0
	}
	const (
		top    = 50
		panelH = 200
		bottom = 40
		left   = 50
		gap    = 40
	)
	n := len(growthOperations)
	panelW := (width - left - 20 - (n-1)*gap) / n
	height := top + panelH + bottom
	colour := func(backend string) string {
		for i, be := range r.Backends {
			if be.Name == backend {
				return palette[i%len(palette)]
			}
		}
		return palette[0]
	}
	// Shared axes: entities and µs over every run.
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, g := range r.Growth {
		for _, s := range g.Steps {
			xlo, xhi = math.Min(xlo, float64(s.Entities)), math.Max(xhi, float64(s.Entities))
			for _, op := range s.Ops {
				if op.Requests > 0 && op.Latency.P50 > 0 {
					ylo, yhi = math.Min(ylo, op.Latency.P50), math.Max(yhi, op.Latency.P99)
				}
			}
		}
	}
	if math.IsInf(xlo, 1) || math.IsInf(ylo, 1) {
		xlo, xhi, ylo, yhi = 1000, 10000, 1, 10
	}
	dx0, dx1 := math.Floor(math.Log10(xlo)), math.Ceil(math.Log10(xhi))
	dy0, dy1 := math.Floor(math.Log10(ylo)), math.Ceil(math.Log10(yhi))
	dx1, dy1 = math.Max(dx1, dx0+1), math.Max(dy1, dy0+1)
	var b strings.Builder
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="14" font-weight="bold">conform bench: cost as the data grows (log scales; p99 solid, p50 dashed)</text>`+"\n")
	for i, op := range growthOperations {
		x0 := left + i*(panelW+gap)
		px := func(v float64) float64 { return float64(x0) + (math.Log10(v)-dx0)/(dx1-dx0)*float64(panelW) }
		py := func(v float64) float64 { return float64(top+panelH) - (math.Log10(v)-dy0)/(dy1-dy0)*float64(panelH) }
		axes(&b, x0, top, panelW, panelH, "entities in the table", "")
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s, µs</text>`+"\n", x0, top-8, html.EscapeString(op))
		for d := dx0; d <= dx1; d++ {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555555" font-size="9">%s</text>`+"\n", px(math.Pow(10, d)), top+panelH+26, tick(d))
		}
		for d := dy0; d <= dy1; d++ {
			y := py(math.Pow(10, d))
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eeeeee"/><text x="%d" y="%.1f" text-anchor="end" fill="#555555" font-size="9">%s</text>`+"\n",
				x0, y, x0+panelW, y, x0-3, y+3, tick(d))
		}
		for _, g := range r.Growth {
			for _, pct := range []struct {
				dash  string
				value func(Latency) float64
			}{{"", func(l Latency) float64 { return l.P99 }}, {` stroke-dasharray="4,3"`, func(l Latency) float64 { return l.P50 }}} {
				var pts []string
				for _, s := range g.Steps {
					if o, ok := s.Op(op); ok && o.Requests > 0 && pct.value(o.Latency) > 0 {
						pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(s.Entities)), py(pct.value(o.Latency))))
					}
				}
				if len(pts) == 1 {
					pts = append(pts, pts[0])
				}
				if len(pts) > 0 {
					fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"><title>%s, %s</title></polyline>`+"\n",
						colour(g.Backend), pct.dash, strings.Join(pts, " "), html.EscapeString(g.Backend), html.EscapeString(op))
				}
			}
			for _, s := range g.Steps {
				if s.Stopped != "" {
					fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="%s" font-size="9">stopped<title>%s</title></text>`+"\n", px(float64(s.Entities)), top+12, palette[3], html.EscapeString(s.Stopped))
				}
			}
		}
	}
	return b.String(), height
}

// growthOnlySVG is bench.svg of a run of the growth family alone: its legend and chart.
func (r *Report) growthOnlySVG() []byte {
	const width, legendH = 1220, 30
	chart, h := r.growthChart(width)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, h+legendH, width, h+legendH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, h+legendH)
	fmt.Fprintf(&b, `<svg x="0" y="0" width="%d" height="%d">`+"\n%s</svg>\n", width, h, chart)
	for i, be := range r.Backends {
		x := 10 + i*150
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, h+8, palette[i%len(palette)], x+16, h+18, html.EscapeString(be.Name))
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
