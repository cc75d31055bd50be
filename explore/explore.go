package explore

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
)

// Options bound and shape one exploration.
type Options struct {
	// Seed starts the run; the same seed against the same backends runs the same sequences.
	// Zero is taken as 1.
	Seed uint64
	// Duration and Ops bound the run: it ends when either is spent (zero: no bound of that
	// kind; at least one must be set). Ops counts the operations of the sequences drawn,
	// both backends' calls counted once, shrinking not counted.
	Duration time.Duration
	Ops      int
	// Config bounds what each sequence draws; a zero Tables or MaxOps takes gen.DefaultConfig's.
	Config gen.Config
	// ShrinkTime bounds the shrinking of one difference (zero: 20 s).
	ShrinkTime time.Duration
	// MaxDifferences ends the run after this many distinct differences (zero: no limit).
	MaxDifferences int
	// Baseline, when set, lists the explored backend's known divergences: a difference that
	// falls under one of its rules with the same answer is reported as known.
	Baseline *fixtures.Baseline
	// Progress receives a line every ProgressEvery (zero: 30 s); nil writes none.
	Progress      io.Writer
	ProgressEvery time.Duration
	// RunTag, four letters or digits, tells this run's tables from another's (default: from
	// the clock).
	RunTag string
}

// Result is what an exploration found.
type Result struct {
	Explored string `json:"explored"`
	Against  string `json:"against"`
	Seed     uint64 `json:"seed"`
	// Sequences and Operations count what was run (shrinking not counted); Inconclusive
	// counts the sequences that ended on a call without an answer.
	Sequences    int64         `json:"sequences"`
	Operations   int64         `json:"operations"`
	Inconclusive int64         `json:"inconclusive"`
	Elapsed      time.Duration `json:"elapsedNs"`
	// Stopped says what ended the run.
	Stopped     string       `json:"stopped"`
	Differences []Difference `json:"differences"`
	// Known counts the differences the explored backend's baseline lists or a MAY rule
	// allows (they are in Differences, marked).
	Known int `json:"known"`
	// Config is what the sequences drew from.
	Config gen.Config `json:"config"`
}

// New reports the differences that are not known.
func (r Result) New() int { return len(r.Differences) - r.Known }

// Explorer runs sequences against Explored and Against and keeps their differences.
type Explorer struct {
	Explored, Against         api.Backend
	ExploredName, AgainstName string
	Options                   Options
}

// rapidMu serialises explorations: rapid's settings are process-wide flags.
var rapidMu sync.Mutex

var testingInit sync.Once

// initTestingFlags registers and parses the testing flags: rapid reads testing.Short, which
// needs them; outside a test binary no argument is theirs.
func initTestingFlags() {
	testing.Init()
	if !flag.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
}

func setRapidFlag(name, value string) {
	if err := flag.Set(name, value); err != nil {
		panic("explore: rapid flag " + name + ": " + err.Error())
	}
}

// Run explores until the options' bounds are spent or ctx ends.
func (x *Explorer) Run(ctx context.Context) Result {
	rapidMu.Lock()
	defer rapidMu.Unlock()
	testingInit.Do(initTestingFlags)
	o := x.Options.withDefaults()
	res := Result{Explored: x.ExploredName, Against: x.AgainstName, Seed: o.Seed, Config: o.Config}
	start := time.Now()
	var deadline time.Time
	if o.Duration > 0 {
		deadline = start.Add(o.Duration)
	}
	var c counters
	defer c.reportEvery(o, start)()
	sequences, operations, inconclusive, found := &c.sequences, &c.operations, &c.inconclusive, &c.found

	spent := func() string {
		switch {
		case ctx.Err() != nil:
			return "interrupted"
		case !deadline.IsZero() && time.Now().After(deadline):
			return "duration spent"
		case o.Ops > 0 && operations.Load() >= int64(o.Ops):
			return "operations spent"
		case o.MaxDifferences > 0 && len(res.Differences) >= o.MaxDifferences:
			return "enough differences"
		}
		return ""
	}
	known := map[string]bool{}
	setRapidFlags(o)
	seqCounter := 0
	for i := uint64(0); ; i++ {
		if res.Stopped = spent(); res.Stopped != "" {
			break
		}
		seed := o.Seed + i
		if seed == 0 {
			continue
		}
		setRapidFlag("rapid.seed", strconv.FormatUint(seed, 10))
		var last *sequenceRun
		var firstLen int
		counted := false
		shrinkRuns := 0
		prop := func(t *rapid.T) {
			ops := gen.Sequence(o.Config).Draw(t, "ops")
			if counted {
				shrinkRuns++
			} else if spent() != "" {
				return
			}
			explored, against := x.newSides(o, &seqCounter)
			run := runOn(ctx, explored, against, ops)
			if !counted {
				counted = true
				sequences.Add(1)
				executed := int64(len(run.steps))
				if run.unanswered != nil {
					executed++ // the call that got no answer counts too, so that a dead backend ends the run
				}
				operations.Add(max(executed, 1))
				firstLen = len(ops)
				if run.unanswered != nil {
					inconclusive.Add(1)
				}
			}
			if run.unanswered != nil || run.diffAt < 0 {
				return
			}
			if known[signature(run.steps[run.diffAt])] {
				return
			}
			r := run
			last = &r
			t.Fatalf("the backends differ at step %d", run.diffAt+1)
		}
		tb := &quietTB{name: "explore"}
		before := seqCounter
		rapid.Check(tb, prop)
		if seqCounter == before && spent() == "" {
			res.Stopped = "rapid ran no sequence"
			break
		}
		if last == nil {
			continue
		}
		newSides := func() (*Side, *Side) { return x.newSides(o, &seqCounter) }
		minimal, runs := dropOperations(ctx, *last, newSides, time.Now().Add(o.ShrinkTime))
		d := x.difference(minimal, seed, firstLen, shrinkRuns+runs)
		d.Flaky = tb.flaky
		known[d.Signature] = true
		keep(&res, d, o, firstLen)
		found.Add(1)
	}
	res.Sequences, res.Operations, res.Inconclusive = sequences.Load(), operations.Load(), inconclusive.Load()
	res.Elapsed = time.Since(start)
	return res
}

// setRapidFlags sets rapid's process-wide flags for a run: one sequence per check, each
// with its own seed (rapid runs a fifth of its checks under -short), no fail file, and
// shrinking bounded by o.ShrinkTime.
func setRapidFlags(o Options) {
	checks := "1"
	if testing.Short() {
		checks = "5"
	}
	setRapidFlag("rapid.checks", checks)
	setRapidFlag("rapid.nofailfile", "true")
	setRapidFlag("rapid.shrinktime", o.ShrinkTime.String())
}

// keep adds d to res, marked known when the explored backend's baseline lists it, and says
// so on o.Progress.
func keep(res *Result, d Difference, o Options, firstLen int) {
	if o.Baseline != nil && !d.Known {
		d.Known, d.KnownNote = knownDivergence(*o.Baseline, d)
	}
	if d.Known {
		res.Known++
	}
	res.Differences = append(res.Differences, d)
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "explore: difference %d: %s (%d operations, shrunk from %d)\n", len(res.Differences), d.Summary, len(d.Ops), firstLen)
	}
}

// withDefaults is o with every unset bound and name given its default.
func (o Options) withDefaults() Options {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ShrinkTime <= 0 {
		o.ShrinkTime = 20 * time.Second
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 30 * time.Second
	}
	if o.Config.Tables < 1 {
		o.Config.Tables = gen.DefaultConfig.Tables
	}
	if o.Config.MaxOps < 1 {
		o.Config.MaxOps = gen.DefaultConfig.MaxOps
	}
	if o.RunTag == "" {
		o.RunTag = strconv.FormatInt(time.Now().UnixNano()%(36*36*36*36), 36)
	}
	for len(o.RunTag) < 4 {
		o.RunTag = "0" + o.RunTag
	}
	return o
}

// counters are what a run has done so far, read by its progress lines.
type counters struct {
	sequences, operations, inconclusive, found atomic.Int64
}

// reportEvery writes a progress line to o.Progress every o.ProgressEvery until the
// function it returns is called (nothing when o.Progress is nil).
func (c *counters) reportEvery(o Options, start time.Time) (stop func()) {
	if o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(o.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(o.Progress, "explore: %s: %d sequences, %d operations, %d differences (%d inconclusive)\n",
					time.Since(start).Round(time.Second), c.sequences.Load(), c.operations.Load(), c.found.Load(), c.inconclusive.Load())
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// newSides names the tables of the next sequence (one prefix per sequence, so that no
// sequence reads another's) on both backends.
func (x *Explorer) newSides(o Options, seqCounter *int) (explored, against *Side) {
	*seqCounter++
	prefix := "cf" + o.RunTag + fmt.Sprintf("%04s", strconv.FormatInt(int64(*seqCounter%(36*36*36*36)), 36))
	return &Side{Backend: x.Explored, Tables: tableNames(prefix, 'e', o.Config.Tables), etags: map[etagKey][]string{}},
		&Side{Backend: x.Against, Tables: tableNames(prefix, 'a', o.Config.Tables), etags: map[etagKey][]string{}}
}

// quietTB is the testing.TB rapid reports to: it keeps whether the check failed and whether
// rapid found the failure flaky, and says nothing.
type quietTB struct {
	name   string
	failed bool
	flaky  bool
}

func (q *quietTB) Helper()                   {}
func (q *quietTB) Name() string              { return q.name }
func (q *quietTB) Logf(string, ...any)       {}
func (q *quietTB) Log(...any)                {}
func (q *quietTB) Skipf(string, ...any)      {}
func (q *quietTB) Skip(...any)               {}
func (q *quietTB) SkipNow()                  {}
func (q *quietTB) Fatalf(f string, a ...any) { q.Errorf(f, a...) }
func (q *quietTB) Fatal(a ...any)            { q.Error(a...) }
func (q *quietTB) FailNow()                  {}
func (q *quietTB) Fail()                     { q.failed = true }
func (q *quietTB) Failed() bool              { return q.failed }
func (q *quietTB) Error(a ...any)            { q.Errorf("%s", fmt.Sprint(a...)) }
func (q *quietTB) Errorf(f string, a ...any) {
	q.failed = true
	if len(f) >= 14 && f[:14] == "[rapid] flaky " {
		q.flaky = true
	}
}

// dropOperations removes from a differing sequence every operation it can do without while
// the same difference shows, one at a time, until none can go or the deadline passes. rapid
// shrinks the values and drops operations too, but an operation whose draws other ones'
// depend on can outlast its shrinking.
func dropOperations(ctx context.Context, run sequenceRun, newSides func() (*Side, *Side), deadline time.Time) (sequenceRun, int) {
	sig := signature(run.steps[run.diffAt])
	opsOf := func(r sequenceRun) []gen.Op {
		var ops []gen.Op
		for _, s := range r.steps[:r.diffAt+1] {
			if !s.ReadBack {
				ops = append(ops, s.Op)
			}
		}
		return ops
	}
	runs := 0
	for changed := true; changed; {
		changed = false
		ops := opsOf(run)
		for i := len(ops) - 1; i >= 0 && len(ops) > 1; i-- {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return run, runs
			}
			candidate := append(append([]gen.Op{}, ops[:i]...), ops[i+1:]...)
			explored, against := newSides()
			r := runOn(ctx, explored, against, candidate)
			runs++
			if r.unanswered == nil && r.diffAt >= 0 && signature(r.steps[r.diffAt]) == sig {
				run, ops, changed = r, opsOf(r), true
				i = min(i, len(ops))
			}
		}
	}
	return run, runs
}
