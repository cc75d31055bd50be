package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// retryErrors re-runs, up to --retry-errors times, the rules whose specs got no answer or
// did not finish (not started, interrupted: the run stopped first) on each backend (a
// process per backend and attempt, its raw result under raw/retryN), and merges into the
// first pass only those specs (retryMerge): what the first pass judged stays. A retry that
// cannot be started changes nothing and says so.
func retryErrors(p runPlan, runs []report.Run, rawDir string, progress *progress, children *backendProcesses) []report.Run {
	rerun := func(i int, filter, dir string) report.Run {
		retried, _ := startRuns(p, []string{p.backends[i]}, filter, dir, progress, children)
		return retried[0]
	}
	return retryErrorsWith(p, runs, rawDir, progress.w, children.wasInterrupted, rerun)
}

func retryErrorsWith(p runPlan, runs []report.Run, rawDir string, w io.Writer, interrupted func() bool, rerun func(i int, filter, dir string) report.Run) []report.Run {
	for attempt := 1; attempt <= p.o.retryErrors && !interrupted(); attempt++ {
		dir := filepath.Join(rawDir, fmt.Sprintf("retry%d", attempt))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintf(w, "retry %d: %v; the first pass stands\n", attempt, err)
			return runs
		}
		for i, run := range runs {
			ids := erroredRules(run)
			if len(ids) == 0 || run.StartError != "" {
				continue
			}
			if !run.StoppedAnswering.IsZero() {
				if attempt == 1 {
					fmt.Fprintf(w, "[%s] not retried: it stopped answering\n", run.Backend.Name)
				}
				continue
			}
			filter := "(" + strings.Join(ids, " || ") + ")"
			if p.filter != "" {
				filter = "(" + p.filter + ") && " + filter
			}
			fmt.Fprintf(w, "[%s] retry %d of %d: %d rules with specs that got no answer or did not finish\n", run.Backend.Name, attempt, p.o.retryErrors, len(ids))
			retried := rerun(i, filter, dir)
			if retried.StartError != "" {
				fmt.Fprintf(w, "[%s] retry %d could not run (%s); the first pass stands\n", run.Backend.Name, attempt, retried.StartError)
				continue
			}
			runs[i] = retryMerge(run, retried)
		}
	}
	return runs
}

// retryMerge merges a retry into run: only the specs that got no answer or did not finish
// in run are replaced by their retry (report.MergeRerun).
func retryMerge(run, retried report.Run) report.Run {
	again := map[string]bool{}
	for _, s := range run.Ginkgo.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && retriable(run, s) {
			again[framework.SpecText(s)] = true
		}
	}
	kept := retried
	kept.Ginkgo.SpecReports = nil
	for _, s := range retried.Ginkgo.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || again[framework.SpecText(s)] {
			kept.Ginkgo.SpecReports = append(kept.Ginkgo.SpecReports, s)
		}
	}
	return report.MergeRerun(run, kept)
}

// retriable reports whether --retry-errors runs spec s of run again: it got no answer, or
// the run stopped before it finished (report.Unfinished); outcomes as the report decides
// them, over the run's selection.
func retriable(run report.Run, s types.SpecReport) bool {
	if report.Unfinished(run, s) {
		return true
	}
	for _, l := range s.Labels() {
		if r, ok := spec.LookupRule(l); ok {
			return report.SpecOutcome(s, run.Filter, r, run.Profile).Outcome == verdict.Error
		}
	}
	return false
}

// erroredRules lists the rules with a spec that --retry-errors runs again (retriable).
func erroredRules(run report.Run) []string {
	seen := map[string]bool{}
	var ids []string
	for _, s := range run.Ginkgo.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || !retriable(run, s) {
			continue
		}
		for _, l := range s.Labels() {
			if r, ok := spec.LookupRule(l); ok && !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
	}
	return ids
}

// mergeEarlier merges this run into the earlier report's raw runs (--rerun-failed), so
// that the whole is judged; backends not re-run keep their earlier results.
func mergeEarlier(p runPlan, runs []report.Run) []report.Run {
	if p.earlier == nil {
		return runs
	}
	done := map[string]bool{}
	for i, run := range runs {
		if prev, ok := p.earlier[run.Backend.Name]; ok && run.StartError == "" {
			runs[i] = report.MergeRerun(prev, run)
		}
		done[run.Backend.Name] = true
	}
	names := make([]string, 0, len(p.earlier))
	for n := range p.earlier {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !done[n] {
			runs = append(runs, p.earlier[n])
		}
	}
	return runs
}
