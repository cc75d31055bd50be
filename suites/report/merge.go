package report

import (
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// SpecOutcome classifies spec s of a run with label filter filter as the report does (for
// live progress and retries, which must agree with the report).
func SpecOutcome(s types.SpecReport, filter string, rule spec.Rule, profile string) SpecResult {
	return classify(s, SelectionOf(filter), rule, profile)
}

// Ran reports whether a run ran s: it was neither left out by the run's filter nor not
// started because the run stopped first (SpecState, under any selection).
func Ran(s types.SpecReport) bool {
	st := SpecState(s, Selection{}).State
	return st != verdict.StateLeftOut && st != verdict.StateNotStarted
}

// Unfinished reports whether spec s of run, which its selection holds, was not finished:
// not started or interrupted, so that --rerun-failed and --retry-errors run it again.
func Unfinished(run Run, s types.SpecReport) bool {
	st := SpecState(s, SelectionOf(run.Filter)).State
	return st == verdict.StateNotStarted || st == verdict.StateInterrupted
}

// stopped reports whether run stopped before its end (StoppedBy).
func stopped(run Run) bool { return len(StoppedBy(run)) > 0 }

func specKey(s types.SpecReport) string {
	key := framework.SpecText(s)
	for _, l := range s.LeafNodeLabels {
		key += "\x00" + l
	}
	return key
}

// MergeRuns merges a run of some specs into an earlier run of the same backend (the parts
// of a --parallel run, one after another): every spec the later run ran replaces the
// earlier result of that spec; the others keep theirs. The merged run is judged as a
// whole, over the earlier run's filter. Suite-level nodes of both are kept, and so are the
// reasons either stopped for (Ginkgo's special failure reasons), an interruption of either
// and the earliest time the backend stopped answering in either: a stop in any part stops
// the whole.
func MergeRuns(earlier, rerun Run) Run {
	out := earlier
	replaced := map[string]types.SpecReport{}
	for _, s := range rerun.Ginkgo.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && Ran(s) {
			replaced[specKey(s)] = s
		}
	}
	var specs types.SpecReports
	for _, s := range earlier.Ginkgo.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt {
			if r, ok := replaced[specKey(s)]; ok {
				specs = append(specs, r)
				delete(replaced, specKey(s))
				continue
			}
		}
		specs = append(specs, s)
	}
	for _, s := range rerun.Ginkgo.SpecReports {
		if _, ok := replaced[specKey(s)]; ok && s.LeafNodeType == types.NodeTypeIt {
			specs = append(specs, s) // a spec the earlier run did not have
		} else if s.LeafNodeType != types.NodeTypeIt {
			specs = append(specs, s)
		}
	}
	out.Ginkgo.SpecReports = specs
	out.Ginkgo.SuiteSucceeded = earlier.Ginkgo.SuiteSucceeded && rerun.Ginkgo.SuiteSucceeded
	out.Interrupted = earlier.Interrupted || rerun.Interrupted
	out.Ginkgo.SpecialSuiteFailureReasons = nil
	for _, reason := range append(append([]string(nil), earlier.Ginkgo.SpecialSuiteFailureReasons...), rerun.Ginkgo.SpecialSuiteFailureReasons...) {
		if !slices.Contains(out.Ginkgo.SpecialSuiteFailureReasons, reason) {
			out.Ginkgo.SpecialSuiteFailureReasons = append(out.Ginkgo.SpecialSuiteFailureReasons, reason)
		}
	}
	if s := rerun.StoppedAnswering; !s.IsZero() && (out.StoppedAnswering.IsZero() || s.Before(out.StoppedAnswering)) {
		out.StoppedAnswering = s
	}
	if rerun.StartError != "" {
		out.StartError = rerun.StartError
	}
	return out
}

// MergeRerun merges a rerun of some specs (--rerun-failed, --retry-errors) into the
// earlier run of the same backend as MergeRuns does, with one difference: the earlier
// run's stop is over when the rerun itself finished and no spec the earlier run's filter
// selects is left unfinished in the whole (the rerun ran what the stop left).
func MergeRerun(earlier, rerun Run) Run {
	out := MergeRuns(earlier, rerun)
	if stopped(rerun) || !rerun.StoppedAnswering.IsZero() {
		return out
	}
	for _, s := range out.Ginkgo.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && Unfinished(out, s) {
			return out
		}
	}
	out.Interrupted = false
	out.Ginkgo.SpecialSuiteFailureReasons = nil
	out.StoppedAnswering = time.Time{}
	return out
}
