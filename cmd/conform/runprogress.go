package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/suites/verdict"
)

// progress prints, for each backend, how many specs are done of how many, for how long
// and about how long is left, and problems as they happen, counted by the outcomes the
// report gives them (report.SpecOutcome), so that the live counts and the summary agree.
// A backend run by several processes is one line of progress.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	total   map[string]int
	done_   map[string]int
	counts  map[string]map[verdict.Outcome]int
	step    map[string]int
	began   map[string]time.Time
	parts   map[string]int // processes expected to announce their totals
	counted map[string]int // processes that did
	stopped map[string]bool
	ended   map[string]bool // backends whose run finished
	// lastLine is when a line was last written (every write holds mu).
	lastLine time.Time
}

// progressQuiet is the longest a run stays silent: then each running backend says how far
// it is (heartbeat), so that a line comes at least every 30 s.
const progressQuiet = 25 * time.Second

// stampWriter notes when progress last wrote a line.
type stampWriter struct {
	w    io.Writer
	last *time.Time
	now  func() time.Time
}

func (s stampWriter) Write(b []byte) (int, error) {
	*s.last = s.now()
	return s.w.Write(b)
}

func newProgress(w io.Writer) *progress {
	p := &progress{now: time.Now, total: map[string]int{}, done_: map[string]int{}, counts: map[string]map[verdict.Outcome]int{},
		step: map[string]int{}, began: map[string]time.Time{}, parts: map[string]int{}, counted: map[string]int{}, stopped: map[string]bool{},
		ended: map[string]bool{}}
	p.lastLine = p.now()
	p.w = stampWriter{w: w, last: &p.lastLine, now: func() time.Time { return p.now() }}
	return p
}

// heartbeat says, whenever no line came for quiet, how far each running backend is,
// so that a run is never silent for long (a slow stretch of specs prints no tenth); the
// function it returns stops it.
func (p *progress) heartbeat(quiet time.Duration) (stop func()) {
	return every(quiet/5, func() { p.beatIfQuiet(quiet) })
}

// beatIfQuiet writes a line per running backend when no line came for every.
func (p *progress) beatIfQuiet(every time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.now().Sub(p.lastLine) < every {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(p.began)) {
		if p.ended[name] {
			continue
		}
		if total := p.total[name]; total > 0 {
			fmt.Fprintf(p.w, "[%s] still running: %d/%d specs done, %s; %s\n", name, p.done_[name], total, p.tally(name), p.timing(name))
		} else {
			fmt.Fprintf(p.w, "[%s] still starting (%s)\n", name, p.now().Sub(p.began[name]).Round(time.Second))
		}
	}
}

// start says a backend starts, run by parts processes at once.
func (p *progress) start(name string, parts int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.began[name] = p.now()
	p.parts[name] = parts
	if parts > 1 {
		fmt.Fprintf(p.w, "[%s] starting, %d processes at once\n", name, parts)
		return
	}
	fmt.Fprintf(p.w, "[%s] starting\n", name)
}

func (p *progress) note(name, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%s] %s\n", name, text)
}

// liveShown are the outcomes progress prints as they happen.
var liveShown = map[verdict.Outcome]string{verdict.Fail: "FAIL", verdict.Error: "ERROR", verdict.Blocked: "BLOCKED", verdict.UnexpectedPass: "UNEXPECTED PASS"}

func (p *progress) event(name string, e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case "total":
		p.total[name] += e.Total
		p.counted[name]++
		if p.counted[name] == p.parts[name] {
			fmt.Fprintf(p.w, "[%s] %d specs to run\n", name, p.total[name])
		} else if p.counted[name] > p.parts[name] {
			fmt.Fprintf(p.w, "[%s] %d more specs to run (%d in all)\n", name, e.Total, p.total[name])
		}
	case "note":
		fmt.Fprintf(p.w, "[%s] %s\n", name, e.Text)
	case "stopped":
		// A process found its backend no longer answering (runOneBackend): said once per
		// backend, even when several of its processes find it.
		if p.stopped[name] {
			return
		}
		p.stopped[name] = true
		at, err := time.Parse(time.RFC3339Nano, e.Text)
		if err != nil {
			at = p.now()
		}
		fmt.Fprintf(p.w, "[%s] %s: %d specs in a row got no answer, nor did a probe (%s); its run stops, and the specs that ran are judged\n",
			name, stoppedAnsweringWords(name, at), stoppedAnsweringAfter, e.Failure)
	case "came-back", "tables-left":
		// Each process of a backend that stopped answering says what became of its tables
		// (cleanAfterStop); said once per backend.
		if p.stopped[name+"\x00"+e.Kind] {
			return
		}
		p.stopped[name+"\x00"+e.Kind] = true
		if e.Kind == "came-back" {
			fmt.Fprintf(p.w, "[%s] answers again: this run's tables are deleted\n", name)
			return
		}
		fmt.Fprintf(p.w, "[%s] did not answer again within %v: this run's tables (names starting %s) are left; once it answers, `conform clean --backend %s --prefix %s` deletes them\n",
			name, comeBackWithin, e.Text, e.Rule, e.Text)
	case "spec":
		p.done_[name]++
		if p.counts[name] == nil {
			p.counts[name] = map[verdict.Outcome]int{}
		}
		o := verdict.Outcome(e.Outcome)
		p.counts[name][o]++
		if word, ok := liveShown[o]; ok && !p.stopped[name] {
			// Once the backend stopped answering, its last specs' errors are that, said once.
			fmt.Fprintf(p.w, "[%s] %s %s: %s\n", name, word, e.Rule, e.Text)
			if f := strings.TrimSpace(e.Failure); f != "" {
				fmt.Fprintf(p.w, "        %s\n", f)
			}
		}
		// Until every process has said how many specs it runs, the total is only a part.
		total := p.total[name]
		if total > 0 && p.counted[name] >= p.parts[name] {
			pct := p.done_[name] * 10 / total
			if pct > p.step[name] {
				p.step[name] = pct
				fmt.Fprintf(p.w, "[%s] %d/%d specs done, %s; %s\n", name, p.done_[name], total, p.tally(name), p.timing(name))
			}
		}
	}
}

// timing says how long a backend has run and, from its pace so far, about how long is left.
func (p *progress) timing(name string) string {
	elapsed := p.now().Sub(p.began[name])
	done, total := p.done_[name], p.total[name]
	words := "elapsed " + elapsed.Round(time.Second).String()
	if done > 0 && total > done {
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
		words += ", about " + left.Round(time.Second).String() + " left"
	}
	return words
}

// tally renders the problem counts of a backend as the summary names them.
func (p *progress) tally(name string) string {
	c := p.counts[name]
	return fmt.Sprintf("%d failed, %d errors, %d blocked", c[verdict.Fail], c[verdict.Error], c[verdict.Blocked])
}

// done says a backend finished, and how when it did not end as a run does: interrupted
// (the run's own status is then 130, whatever the backend's process said), stopped
// answering, or its process's status when that is neither 0 nor 1. Statuses 0 and 1 are
// not shown: 1 says only that a spec failed, perhaps as the baseline expects, and the
// summary's verdict decides conform's status (issue 34, item 10: "(exit 1)" beside an exit
// status 0).
func (p *progress) done(name string, code int, interrupted bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	how := ""
	switch {
	case interrupted:
		how = " (interrupted)"
	case p.stopped[name]:
		how = " (stopped answering)"
	case code != exitOK && code != exitFailed:
		how = fmt.Sprintf(" (its process ended with status %d)", code)
	}
	p.ended[name] = true
	fmt.Fprintf(p.w, "[%s] finished: %d specs, %s, in %s%s\n", name, p.done_[name], p.tally(name),
		p.now().Sub(p.began[name]).Round(time.Second), how)
}
