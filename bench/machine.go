package bench

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine is how busy the machine running the benchmark was: its CPUs and the one-minute
// load average when the benchmark began and ended (0 where the system does not say, as
// outside Linux). Figures from a busy machine compare poorly with a quiet one's.
type Machine struct {
	CPUs      int     `json:"cpus"`
	LoadStart float64 `json:"load_average_start,omitempty"`
	LoadEnd   float64 `json:"load_average_end,omitempty"`
}

// LoadAverage returns the one-minute load average, and false where it cannot be read.
func LoadAverage() (float64, bool) {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// ThisMachine returns the CPUs of this process's machine and its load average now, as the
// start of a benchmark.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU()}
	m.LoadStart, _ = LoadAverage()
	return m
}

// Busy reports whether the load average, at the start or the end, reached the CPUs: other
// work competed with the benchmark for them.
func (m Machine) Busy() bool {
	return m.CPUs > 0 && math.Max(m.LoadStart, m.LoadEnd) >= float64(m.CPUs)
}

// Words says the machine's CPUs and load, and whether it was busy.
func (m Machine) Words() string {
	if m.LoadStart == 0 && m.LoadEnd == 0 {
		return fmt.Sprintf("%d CPUs, load average unknown", m.CPUs)
	}
	s := fmt.Sprintf("%d CPUs, load average %.2f at the start", m.CPUs, m.LoadStart)
	if m.LoadEnd > 0 {
		s += fmt.Sprintf(" and %.2f at the end", m.LoadEnd)
	}
	if m.Busy() {
		s += ": busy, other work competed for the CPUs, so these figures compare poorly with a quiet machine's"
	}
	return s
}

// MinRepeats is the fewest runs of a workload from which an interval, and so a ratio
// between backends, is given.
const MinRepeats = 3

// Interval is a 95% confidence interval of the mean of repeated measures (Student's t):
// the mean, and the interval's low and high ends.
type Interval struct {
	Mean float64 `json:"mean"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// t975 are Student's t quantiles at 0.975 for 1 to 30 degrees of freedom; past 30, 1.96
// is within 4%.
var t975 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// MeanInterval returns the 95% interval of the mean of xs, and false for fewer than
// MinRepeats values.
func MeanInterval(xs []float64) (Interval, bool) {
	n := len(xs)
	if n < MinRepeats {
		return Interval{}, false
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := 1.96
	if n-1 <= len(t975) {
		t = t975[n-2]
	}
	half := t * sd / math.Sqrt(float64(n))
	return Interval{Mean: mean, Low: mean - half, High: mean + half}, true
}

// RatioInterval is the ratio of a's mean to b's with the widest ratio the two intervals
// allow (a.Low/b.High to a.High/b.Low): false when b's interval reaches zero.
func RatioInterval(a, b Interval) (Interval, bool) {
	if b.Low <= 0 || b.Mean <= 0 {
		return Interval{}, false
	}
	return Interval{Mean: a.Mean / b.Mean, Low: math.Max(0, a.Low) / b.High, High: a.High / b.Low}, true
}

// CombineRepeats adds the results of repeated runs of one workload into one: requests,
// histograms and series added up (each run's series after the previous one's), throughput
// over the runs' summed time, CPU per request weighted by requests. The runs' own
// throughputs are kept in the outcome's Repeats by the caller.
func CombineRepeats(rs []Result) Result {
	if len(rs) == 0 {
		return Result{}
	}
	if len(rs) == 1 {
		return rs[0]
	}
	out := rs[0]
	var raw RawMeasures
	var elapsed time.Duration
	var cpu float64
	out.Steps = 0
	for _, r := range rs {
		raw.Add(r.Raw, int(elapsed.Round(time.Second)/time.Second))
		elapsed += r.Elapsed
		out.Steps += r.Steps
		cpu += r.CPUPerOp * float64(r.Requests)
	}
	scope := out.CPUScope
	out.Summary = raw.Summary(elapsed)
	out.Raw = raw
	if out.Requests > 0 && cpu > 0 {
		out.CPUPerOp, out.CPUScope = cpu/float64(out.Requests), scope
	}
	return out
}
