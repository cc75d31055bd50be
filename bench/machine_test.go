package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestMeanIntervalNeedsRepeats(t *testing.T) {
	if _, ok := MeanInterval([]float64{100, 200}); ok {
		t.Fatal("an interval from two runs")
	}
	iv, ok := MeanInterval([]float64{90, 100, 110})
	// mean 100, sd 10, t(2) = 4.303: 100 ± 4.303·10/√3
	if !ok || iv.Mean != 100 || math.Abs(iv.High-124.84) > 0.01 || math.Abs(iv.Low-75.16) > 0.01 {
		t.Fatalf("interval %+v", iv)
	}
	r, ok := RatioInterval(Interval{Mean: 200, Low: 180, High: 220}, Interval{Mean: 100, Low: 90, High: 110})
	if !ok || r.Mean != 2 || math.Abs(r.Low-180.0/110) > 1e-9 || math.Abs(r.High-220.0/90) > 1e-9 {
		t.Fatalf("ratio %+v", r)
	}
	if _, ok := RatioInterval(Interval{Mean: 1, Low: 1, High: 1}, Interval{Mean: 1, Low: -1, High: 3}); ok {
		t.Fatal("a ratio over an interval that reaches zero")
	}
}

// A ratio between backends is printed only with its interval, which needs repeats; one
// that the intervals do not separate from 1 says so; a busy machine is named.
func TestRatioComesWithItsInterval(t *testing.T) {
	outcome := func(backend string, runs ...float64) Outcome {
		o := Outcome{Result: Result{Backend: backend, Case: "PointGet/x=1", Summary: Summary{Requests: 10, OpsPerSec: runs[0]}}, Repeats: runs}
		if iv, ok := MeanInterval(runs); ok {
			o.Interval = &iv
		}
		return o
	}
	backends := []BackendRun{{Name: "a"}, {Name: "b"}}
	one := &Report{Backends: backends, Outcomes: []Outcome{outcome("a", 2000), outcome("b", 1000)}}
	if md := string(one.Markdown()); strings.Contains(md, "2.00×") || !strings.Contains(md, "no interval") {
		t.Fatalf("a ratio from one run each:\n%s", md)
	}
	clear := &Report{Repeats: 3, Backends: backends, Outcomes: []Outcome{outcome("a", 1900, 2000, 2100), outcome("b", 990, 1000, 1010)},
		Machine: &Machine{CPUs: 2, LoadStart: 3.5, LoadEnd: 1}}
	md := string(clear.Markdown())
	for _, want := range []string{"| 2.00× (1.", "2,000 (1,752–2,248)", "ran 3 times", "2 CPUs, load average 3.50 at the start", "busy"} {
		if !strings.Contains(md, want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "no difference shown") {
		t.Errorf("two backends apart by 2× were not told apart:\n%s", md)
	}
	noisy := &Report{Repeats: 3, Backends: backends, Outcomes: []Outcome{outcome("a", 500, 2000, 3500), outcome("b", 990, 1000, 1010)}}
	if md := string(noisy.Markdown()); !strings.Contains(md, "no difference shown") {
		t.Errorf("a ratio whose interval holds 1 is not marked:\n%s", md)
	}
	wild := &Report{Repeats: 3, Backends: backends, Outcomes: []Outcome{outcome("a", 1900, 2000, 2100), outcome("b", 10, 1000, 3000)}}
	if md := string(wild.Markdown()); !strings.Contains(md, "| too noisy |") || strings.Contains(md, "no interval") {
		t.Errorf("a ratio over an interval reaching zero is not refused as too noisy:\n%s", md)
	}
	if (Machine{CPUs: 16, LoadStart: 2, LoadEnd: 3}).Busy() || !(Machine{CPUs: 2, LoadEnd: 2}).Busy() {
		t.Error("Busy")
	}
}

func TestCombineRepeatsAddsRuns(t *testing.T) {
	run := func(n int) Result {
		m := NewMeter()
		w := m.Worker(nil)
		for range n {
			w.record(KindGet, "p", time.Now(), 1, nil)
		}
		raw := m.Raw()
		r := Result{Steps: int64(n), Summary: raw.Summary(time.Second), Raw: raw}
		r.CPUPerOp, r.CPUScope = 10, CPUClient
		return r
	}
	c := CombineRepeats([]Result{run(100), run(300)})
	if c.Steps != 400 || c.Requests != 400 || c.Elapsed != 2*time.Second || c.OpsPerSec != 200 || c.CPUPerOp != 10 {
		t.Fatalf("combined %+v", c.Summary)
	}
}
