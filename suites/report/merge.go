package report

import (
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
)

// SpecOutcome classifies one spec of a run as the report does (for live progress, which
// must agree with the report).
func SpecOutcome(s types.SpecReport, rule spec.Rule, profile string) SpecResult {
	return classify(s, rule, profile)
}

// ranSpec reports whether a rerun ran s (it was not left out by the rerun's filter).
func ranSpec(s types.SpecReport) bool {
	return !(s.State == types.SpecStateSkipped && s.Failure.Message == "")
}

func specKey(s types.SpecReport) string {
	key := framework.SpecText(s)
	for _, l := range s.LeafNodeLabels {
		key += "\x00" + l
	}
	return key
}

// MergeRuns merges a rerun of some specs (--retry-errors, --rerun-failed) into an earlier
// run of the same backend: every spec the rerun ran replaces the earlier result of that
// spec; the others keep theirs. The merged run is judged as a whole. Suite-level nodes of
// both are kept; the rerun's interruption carries over, and so does the earliest time the
// backend stopped answering in either (a run stopped for it stays one that did not finish).
func MergeRuns(earlier, rerun Run) Run {
	out := earlier
	replaced := map[string]types.SpecReport{}
	for _, s := range rerun.Ginkgo.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && ranSpec(s) {
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
	if s := rerun.StoppedAnswering; !s.IsZero() && (out.StoppedAnswering.IsZero() || s.Before(out.StoppedAnswering)) {
		out.StoppedAnswering = s
	}
	if rerun.StartError != "" {
		out.StartError = rerun.StartError
	}
	return out
}
