package report

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// Ginkgo's special failure reasons, as it writes them.
const (
	byUser    = "Interrupted by User"
	byTimeout = "Suite Timeout Elapsed"
	byOther   = "Interrupted by Other Ginkgo Process"
)

func stoppedReport(reasons []string, specs ...types.SpecReport) types.Report {
	return types.Report{SpecialSuiteFailureReasons: reasons, SpecReports: specs}
}

// Issue 31, item 1: after an interrupt, Ginkgo skips the specs it never started without a
// message, as it skips those its filter left out. The run's filter tells them apart: a
// selected one is "not run", the verdict says the run did not finish, and it never exits 0.
func TestSpecsNotStartedAfterAnInterruptAreNotRunNotLeftOut(t *testing.T) {
	run := Run{Backend: driver.Info{Name: "x"}, Filter: "entity.insert.conflict || query.order.keys || batch.max.operations",
		Ginkgo: stoppedReport([]string{byUser},
			specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
			specReport("x", "query.order.keys", "b", types.SpecStateSkipped, ""),     // not started
			specReport("x", "batch.max.operations", "c", types.SpecStateSkipped, ""), // not started
			specReport("x", "auth.sas.read", "d", types.SpecStateSkipped, ""),        // left out by the filter
		)}
	r := Build([]Run{run}, testRules, Meta{})
	b := r.Backends[0]
	if c := cellOf(t, r, "query.order.keys"); c.Outcome != verdict.NotRun || !c.Specs[0].Decision.Selected || c.Specs[0].SkipReason != notStarted {
		t.Errorf("a spec not started: cell %+v", c)
	}
	if c := cellOf(t, r, "auth.sas.read"); c.Outcome != verdict.Skipped || c.Specs[0].Decision.Selected {
		t.Errorf("a spec left out by the filter: cell %+v", c)
	}
	if b.Counts.NotRun != 2 || b.Counts.SkippedByFilter != 1 || b.Coverage.Selected != 3 {
		t.Errorf("counts %+v coverage %+v", b.Counts, b.Coverage)
	}
	if b.VerdictKind != verdict.KindInterrupted || !b.Interrupted || Exit(r, false) != verdict.ExitInterrupted {
		t.Errorf("verdict %s %q, exit %d", b.VerdictKind, b.Verdict, Exit(r, false))
	}
}

// Issue 31, items 2 and 3: Ginkgo's suite timeout, or an interrupt only Ginkgo recorded
// (a signal that reached the backend's process alone), is a run that did not finish, even
// when every spec it started passed.
func TestAnySpecialFailureReasonIsARunThatDidNotFinish(t *testing.T) {
	for _, reason := range []string{byTimeout, byUser, byOther, "Failed to iterate over specs:\nEOF"} {
		r := Build([]Run{{Backend: driver.Info{Name: "x"}, Filter: "entity.insert.conflict",
			Ginkgo: stoppedReport([]string{reason}, specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""))}}, testRules, Meta{})
		b := r.Backends[0]
		if b.VerdictKind != verdict.KindInterrupted || !strings.Contains(b.Verdict, strings.Split(reason, "\n")[0]) || Exit(r, false) != verdict.ExitInterrupted {
			t.Errorf("%q: verdict %s %q, exit %d", reason, b.VerdictKind, b.Verdict, Exit(r, false))
		}
	}
}

// Issue 31, item 4: the parts of a --parallel run are merged keeping every part's special
// failure reasons: a timeout in the second part stops the whole.
func TestMergeRunsKeepsEveryPartsStop(t *testing.T) {
	part1 := Run{Backend: driver.Info{Name: "x"}, Ginkgo: stoppedReport(nil,
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateSkipped, ""), // part 2's
	)}
	part2 := Run{Backend: driver.Info{Name: "x"}, Ginkgo: stoppedReport([]string{byTimeout},
		specReport("x", "entity.insert.conflict", "a", types.SpecStateSkipped, ""), // part 1's
		specReport("x", "query.order.keys", "b", types.SpecStateSkipped, ""),       // not started
	)}
	merged := MergeRuns(part1, part2)
	merged.Filter = "entity.insert.conflict || query.order.keys"
	if !slices.Equal(merged.Ginkgo.SpecialSuiteFailureReasons, []string{byTimeout}) {
		t.Fatalf("reasons %q", merged.Ginkgo.SpecialSuiteFailureReasons)
	}
	r := Build([]Run{merged}, testRules, Meta{})
	if b := r.Backends[0]; b.VerdictKind != verdict.KindInterrupted || b.Counts.NotRun != 1 || Exit(r, false) == verdict.ExitOK {
		t.Errorf("verdict %s %q counts %+v", b.VerdictKind, b.Verdict, b.Counts)
	}
}

// A rerun (--rerun-failed, --retry-errors) that runs every spec the earlier run left
// unfinished, and finishes, ends the earlier run's stop; one that leaves a selected spec
// unfinished, or stops itself, does not.
func TestMergeRerunEndsTheStopOnlyWhenEverythingFinished(t *testing.T) {
	const filter = "entity.insert.conflict || query.order.keys || batch.max.operations"
	earlier := Run{Backend: driver.Info{Name: "x"}, Filter: filter, Ginkgo: stoppedReport([]string{byUser},
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateInterrupted, "interrupted"),
		specReport("x", "batch.max.operations", "c", types.SpecStateSkipped, ""),
		specReport("x", "auth.sas.read", "d", types.SpecStateSkipped, ""),
	)}
	rerun := func(reasons []string, c types.SpecState) Run {
		return Run{Backend: driver.Info{Name: "x"}, Ginkgo: stoppedReport(reasons,
			specReport("x", "entity.insert.conflict", "a", types.SpecStateSkipped, ""),
			specReport("x", "query.order.keys", "b", types.SpecStatePassed, ""),
			specReport("x", "batch.max.operations", "c", c, ""),
			specReport("x", "auth.sas.read", "d", types.SpecStateSkipped, ""),
		)}
	}
	for _, c := range []struct {
		name string
		run  Run
		want verdict.Kind
	}{
		{"every unfinished spec ran", rerun(nil, types.SpecStatePassed), verdict.ConformsOn},
		{"one still not started", rerun(nil, types.SpecStateSkipped), verdict.KindInterrupted},
		{"the rerun stopped too", rerun([]string{byTimeout}, types.SpecStatePassed), verdict.KindInterrupted},
	} {
		merged := MergeRerun(earlier, c.run)
		r := Build([]Run{merged}, testRules, Meta{})
		b := r.Backends[0]
		if got := b.VerdictKind; (c.want == verdict.KindInterrupted) != (got == verdict.KindInterrupted) {
			t.Errorf("%s: verdict %s %q", c.name, got, b.Verdict)
		}
		if (c.want == verdict.KindInterrupted) != (Exit(r, false) == verdict.ExitInterrupted) {
			t.Errorf("%s: exit %d, verdict %s", c.name, Exit(r, false), b.VerdictKind)
		}
	}
}

// TestExitAgreesWithTheVerdictOverGeneratedRuns is a property over generated runs of one
// or more backends: random spec states, parts of a --parallel run each of which may stop
// (an interrupt, the suite timeout) at a random spec, random filters, and a rerun merged
// into the whole. Exit 0 only when every selected spec finished and no part stopped; the
// verdict's kind and the exit status never disagree.
func TestExitAgreesWithTheVerdictOverGeneratedRuns(t *testing.T) {
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 31))
		var runs []Run
		var truths []runTruth
		for b := range 1 + rng.IntN(2) {
			run, truth := generateRun(rng, fmt.Sprintf("b%d", b))
			runs, truths = append(runs, run), append(truths, truth)
		}
		r := Build(runs, testRules, Meta{})
		code := Exit(r, false)
		unfinished := false
		for bi, b := range r.Backends {
			truth := truths[bi]
			unfinished = unfinished || truth.stopped || truth.unfinished > 0
			if (truth.stopped || truth.unfinished > 0) != (b.VerdictKind == verdict.KindInterrupted) {
				t.Fatalf("seed %d, %s: stopped %v, %d specs unfinished, but the verdict is %s %q", seed, b.Name, truth.stopped, truth.unfinished, b.VerdictKind, b.Verdict)
			}
			if b.Counts.NotRun+b.Counts.Interrupted != truth.unfinished || b.Counts.SkippedByFilter != truth.leftOut {
				t.Fatalf("seed %d, %s: counts %+v, want %d unfinished and %d left out", seed, b.Name, b.Counts, truth.unfinished, truth.leftOut)
			}
			one := verdict.Exit([]verdict.Tally{Tally(b)}, false)
			switch b.VerdictKind {
			case verdict.KindInterrupted:
				if one != verdict.ExitInterrupted {
					t.Fatalf("seed %d: verdict %q, exit %d", seed, b.Verdict, one)
				}
			case verdict.Conforms, verdict.ConformsOn, verdict.ConformsToCore, verdict.DoesNotConform:
				want := verdict.ExitOK
				switch {
				case b.Counts.Unexpected > 0:
					want = verdict.ExitFailed
				case b.Counts.Errors > 0:
					want = verdict.ExitInconclusive
				}
				if one != want {
					t.Fatalf("seed %d: verdict %q with %d unexpected and %d errors, exit %d", seed, b.Verdict, b.Counts.Unexpected, b.Counts.Errors, one)
				}
			case verdict.Inconclusive:
				if one != verdict.ExitInconclusive && one != verdict.ExitFailed {
					t.Fatalf("seed %d: verdict %q, exit %d", seed, b.Verdict, one)
				}
			default:
				t.Fatalf("seed %d: verdict kind %s", seed, b.VerdictKind)
			}
		}
		if code == verdict.ExitOK && unfinished {
			t.Fatalf("seed %d: exit 0, but a run did not finish: %+v", seed, truths)
		}
		if unfinished != (code == verdict.ExitInterrupted) {
			t.Fatalf("seed %d: exit %d, unfinished %v", seed, code, unfinished)
		}
	}
}

// runTruth is what the generator knows of the run it made.
type runTruth struct {
	stopped    bool // a part (or the rerun) stopped, or the signal reached conform
	unfinished int  // selected specs not started or interrupted in the merged whole
	leftOut    int  // specs the run's filter left out
}

// generated spec states, as the runner and Ginkgo record them.
var generatedStates = []func(backend, rule, text string) types.SpecReport{
	func(b, r, t string) types.SpecReport { return specReport(b, r, t, types.SpecStatePassed, "") },
	func(b, r, t string) types.SpecReport {
		return specReport(b, r, t, types.SpecStateFailed, "expected 409, got 400")
	},
	func(b, r, t string) types.SpecReport {
		return specReport(b, r, t, types.SpecStatePassed, "", listedFailure(r, "answers 400", fixtures.Signature{Status: 400})...)
	},
	func(b, r, t string) types.SpecReport {
		return specReport(b, r, t, types.SpecStateFailed, "EOF", entry(framework.EntryTransport, framework.TransportEntry{Error: "EOF"}))
	},
	func(b, r, t string) types.SpecReport {
		return specReport(b, r, t, types.SpecStateSkipped, "capability missing: sas")
	},
	func(b, r, t string) types.SpecReport {
		return specReport(b, r, t, types.SpecStatePassed, "", entry(framework.EntryResult, verdict.Result{State: verdict.StatePassed}),
			entry(framework.EntryBaseline, fixtures.ExpectedFailure{Rule: r, Flaky: true, Reason: "clock", Signature: fixtures.Signature{Status: 400}}))
	},
}

type generatedSpec struct{ rule, text string }

// generateRun makes one backend's run: a random filter over the rules, its selected specs
// shared among 1-3 parts, each of which may stop at a random spec (the spec it was running
// is interrupted, the later ones never start) or record nothing at all, and sometimes a
// rerun of what did not finish, which may stop too.
func generateRun(rng *rand.Rand, backend string) (Run, runTruth) {
	var specs []generatedSpec
	for _, r := range testRules {
		for i := range 1 + rng.IntN(2) {
			specs = append(specs, generatedSpec{r.ID, fmt.Sprintf("spec %d", i)})
		}
	}
	var ids []string
	selected := map[string]bool{}
	for _, r := range testRules {
		if rng.IntN(3) > 0 {
			ids = append(ids, r.ID)
			selected[r.ID] = true
		}
	}
	filter := strings.Join(ids, " || ")
	if len(ids) == len(testRules) && rng.IntN(2) == 0 {
		filter = "" // no filter: every spec
	}
	if len(ids) == 0 {
		filter, selected = "level:SHOULD", map[string]bool{} // selects none of testRules' specs
	}
	reasons := []string{byUser, byTimeout, byOther}
	truth := runTruth{}
	finished := map[int]bool{}
	parts := 1 + rng.IntN(3)
	var merged Run
	for p := range parts {
		stopAt := -1
		part := Run{Backend: driver.Info{Name: backend}}
		if rng.IntN(3) == 0 {
			stopAt = rng.IntN(len(specs) + 1) // == len(specs): stopped after its last spec
			part.Ginkgo.SpecialSuiteFailureReasons = []string{reasons[rng.IntN(len(reasons))]}
			truth.stopped = true
		}
		// A part whose process ended before Ginkgo started (killed): it recorded nothing,
		// no reason either; its specs were never started.
		lost := p > 0 && stopAt < 0 && rng.IntN(6) == 0
		mine := 0
		for i, s := range specs {
			if !selected[s.rule] || i%parts != p || lost {
				part.Ginkgo.SpecReports = append(part.Ginkgo.SpecReports, specReport(backend, s.rule, s.text, types.SpecStateSkipped, ""))
				continue
			}
			switch {
			case stopAt >= 0 && mine == stopAt:
				part.Ginkgo.SpecReports = append(part.Ginkgo.SpecReports, specReport(backend, s.rule, s.text, types.SpecStateInterrupted, "interrupted"))
			case stopAt >= 0 && mine > stopAt:
				part.Ginkgo.SpecReports = append(part.Ginkgo.SpecReports, specReport(backend, s.rule, s.text, types.SpecStateSkipped, ""))
			default:
				part.Ginkgo.SpecReports = append(part.Ginkgo.SpecReports, generatedStates[rng.IntN(len(generatedStates))](backend, s.rule, s.text))
				finished[i] = true
			}
			mine++
		}
		if p == 0 {
			merged = part
		} else {
			merged = MergeRuns(merged, part)
		}
	}
	merged.Filter = filter
	if rng.IntN(3) == 0 {
		// A rerun of every spec that did not finish (and some that did), which may stop.
		rerun := Run{Backend: driver.Info{Name: backend}}
		rerunStopped := rng.IntN(3) == 0
		if rerunStopped {
			rerun.Ginkgo.SpecialSuiteFailureReasons = []string{reasons[rng.IntN(len(reasons))]}
		}
		for i, s := range specs {
			again := selected[s.rule] && (!finished[i] || rng.IntN(2) == 0)
			if again && (!rerunStopped || rng.IntN(2) == 0) {
				rerun.Ginkgo.SpecReports = append(rerun.Ginkgo.SpecReports, generatedStates[rng.IntN(len(generatedStates))](backend, s.rule, s.text))
				finished[i] = true
				continue
			}
			rerun.Ginkgo.SpecReports = append(rerun.Ginkgo.SpecReports, specReport(backend, s.rule, s.text, types.SpecStateSkipped, ""))
		}
		merged = MergeRerun(merged, rerun)
		truth.stopped = rerunStopped || truth.stopped && !allFinished(specs, selected, finished)
	}
	if rng.IntN(10) == 0 {
		merged.Interrupted = true // the signal reached conform itself
		truth.stopped = true
	}
	for i, s := range specs {
		switch {
		case !selected[s.rule]:
			truth.leftOut++
		case !finished[i]:
			truth.unfinished++
		}
	}
	return merged, truth
}

func allFinished(specs []generatedSpec, selected map[string]bool, finished map[int]bool) bool {
	for i, s := range specs {
		if selected[s.rule] && !finished[i] {
			return false
		}
	}
	return true
}
