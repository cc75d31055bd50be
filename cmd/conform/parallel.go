package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/report"
)

// Default --parallel: an endpoint given by connection string answers over the network, so
// its specs mostly wait and many run at once; the local backends are bound by this
// machine's CPU, and one process each keeps them as cheap as before.
const (
	endpointParallel = 8
	localParallel    = 1
	// maxParallel bounds --parallel: each process has a table slot of its own
	// (slotsPerBackend: the shards, the account-wide process and the process alone).
	maxParallel     = 64
	slotsPerBackend = maxParallel + 2
)

// parallelFor is the number of processes that run backend's specs.
func parallelFor(backend string, requested int) int {
	switch {
	case requested > 0:
		return min(requested, maxParallel)
	case provision.StartsServer(backend):
		return localParallel // each process would start a server of its own
	case strings.Contains(backend, "="):
		return endpointParallel
	}
	return localParallel
}

// shardPlan splits the rules a filter selects on a backend among processes: shards run at
// the same time, each a share of the rules (round robin in catalogue order, so that each
// gets some of every area); accountWide runs afterwards, alone.
type shardPlan struct {
	shards      [][]string
	accountWide []string
}

func planShards(filter, backend string, n int) shardPlan {
	var lf func([]string) bool
	if filter != "" {
		var err error
		if lf, err = types.ParseLabelFilter(filter); err != nil {
			return shardPlan{}
		}
	}
	var p shardPlan
	p.shards = make([][]string, n)
	k := 0
	for _, r := range spec.Rules() {
		if lf != nil && !lf(ruleLabels(r, backend)) {
			continue
		}
		if r.AccountWide() {
			p.accountWide = append(p.accountWide, r.ID)
			continue
		}
		p.shards[k%n] = append(p.shards[k%n], r.ID)
		k++
	}
	for len(p.shards) > 0 && len(p.shards[len(p.shards)-1]) == 0 {
		p.shards = p.shards[:len(p.shards)-1]
	}
	return p
}

// ruleLabels are the labels every spec of rule r carries on backend (framework.ruleLabels).
func ruleLabels(r spec.Rule, backend string) []string {
	return []string{r.ID, framework.LabelLevel + string(r.Level), framework.LabelArea + string(r.Area),
		framework.LabelFeature + string(r.FeatureOrCore()), framework.LabelBackend + backend}
}

// onlyRules narrows filter to the specs of rules.
func onlyRules(filter string, rules []string) string {
	ids := "(" + strings.Join(rules, " || ") + ")"
	if filter == "" {
		return ids
	}
	return "(" + filter + ") && " + ids
}

// runBackend runs the suite against one backend: in one process when --parallel is 1 for
// it, else in several at once, each with a share of the rules, then its account-wide
// specs in one more process, alone; the parts' results are merged into one run
// (report.MergeRuns), written where one process would have written it.
func runBackend(self, backend string, index int, o runOptions, filter, command, rawDir, runID string, p *progress, children *backendProcesses) (report.Run, int) {
	name := framework.BackendName(backend)
	slot := func(part int) int { return index*slotsPerBackend + part + 1 }
	n := parallelFor(backend, o.parallel)
	plan := planShards(filter, name, n)
	rawPath := filepath.Join(rawDir, sanitizeName(name)+".json")
	removeAnswerFiles(rawDir, name)
	defer removeAnswerFiles(rawDir, name)
	if n == 1 || len(plan.shards) <= 1 {
		p.start(name, 1)
		run, code := runChild(self, backend, slot(0), childPart{corpus: true}, o, filter, command, rawDir, runID, p, children)
		if run.StartError == "" {
			// The argument that runs the backend again and the filter the run was given
			// (--rerun-failed judges the merged whole over it), kept with its result.
			run.Argument, run.Filter = reusableArgument(backend), o.labelFilter
			writeMerged(rawPath, run)
		}
		p.done(name, code, children.wasInterrupted())
		return run, code
	}
	p.start(name, len(plan.shards))
	runs := make([]report.Run, len(plan.shards))
	codes := make([]int, len(plan.shards))
	var wg sync.WaitGroup
	for k, rules := range plan.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := childPart{suffix: fmt.Sprintf(".part%d", k+1), corpus: k == 0}
			runs[k], codes[k] = runChild(self, backend, slot(k), part, o, onlyRules(filter, rules), command, rawDir, runID, p, children)
		}()
	}
	wg.Wait()
	if len(plan.accountWide) > 0 && !children.wasInterrupted() && startedEverywhere(runs) && stoppedAnswering(runs) {
		p.note(name, fmt.Sprintf("its %d account-wide rules are not run: it stopped answering", len(plan.accountWide)))
	} else if len(plan.accountWide) > 0 && !children.wasInterrupted() && startedEverywhere(runs) {
		p.note(name, fmt.Sprintf("%d account-wide rules (service properties, CORS) now, alone", len(plan.accountWide)))
		run, code := runChild(self, backend, slot(len(plan.shards)), childPart{suffix: ".account"}, o, onlyRules(filter, plan.accountWide), command, rawDir, runID, p, children)
		runs, codes = append(runs, run), append(codes, code)
	}
	merged, code := mergeParts(runs, codes, children.wasInterrupted())
	if merged.StartError == "" {
		merged = confirmAlone(merged, len(plan.shards), plan.accountWide, func(rules []string) (report.Run, int) {
			p.note(name, fmt.Sprintf("%d rules that failed, were blocked or got no answer beside the other processes now again, by one process alone", len(rules)))
			return runChild(self, backend, slot(len(plan.shards)+1), childPart{suffix: ".alone"}, o, onlyRules(filter, rules), command, rawDir, runID, p, children)
		}, children.wasInterrupted)
	}
	if merged.StartError == "" {
		merged.Argument, merged.Filter = reusableArgument(backend), o.labelFilter
		writeMerged(rawPath, merged)
		_ = os.Rename(corpusPath(filepath.Join(rawDir, sanitizeName(name)+".part1.json")), corpusPath(filepath.Join(rawDir, sanitizeName(name)+".json")))
	}
	p.done(name, code, children.wasInterrupted())
	return merged, code
}

// startedEverywhere says whether every part reached the backend: when one could not, the
// backend cannot be started or reached, and its account-wide rules are not tried.
func startedEverywhere(runs []report.Run) bool {
	for _, r := range runs {
		if r.StartError != "" {
			return false
		}
	}
	return true
}

// answerFilesPrefix starts the names of the files where the processes of backend name's
// run share what they learn of its answers (childAnswerFilesEnv).
func answerFilesPrefix(rawDir, name string) string {
	return filepath.Join(rawDir, sanitizeName(name))
}

func removeAnswerFiles(rawDir, name string) {
	for _, suffix := range []string{".unanswered", ".stopped"} {
		_ = os.Remove(answerFilesPrefix(rawDir, name) + suffix)
	}
}

// stoppedAnswering says whether a part stopped its run because the backend stopped
// answering (runOneBackend).
func stoppedAnswering(runs []report.Run) bool {
	for _, r := range runs {
		if !r.StoppedAnswering.IsZero() {
			return true
		}
	}
	return false
}

// mergeParts merges the runs of a backend's parts into one: a part that could not start
// makes the backend's start error, unless the run was interrupted or another part found
// the backend no longer answering (a part stopped before it ran anything is then left
// out: the backend did start, and what ran is judged); the status is the most severe of
// the parts'.
func mergeParts(runs []report.Run, codes []int, interrupted bool) (report.Run, int) {
	interrupted = interrupted || stoppedAnswering(runs)
	code := exitOK
	for _, c := range codes {
		code = max(code, c)
	}
	var kept []report.Run
	for _, r := range runs {
		switch {
		case r.StartError == "":
			kept = append(kept, r)
		case !interrupted:
			return r, exitUsage
		}
	}
	if len(kept) == 0 {
		return runs[0], exitUsage
	}
	runs = kept
	merged := runs[0]
	for _, r := range runs[1:] {
		merged = report.MergeRuns(merged, r)
	}
	return merged, code
}

// confirmAlone runs the rules of merged, the run of processes processes at once, that
// failed, were blocked or got no answer again, by one process alone (runAlone), and
// judges them on that run (report.ConfirmAlone); ranAlone are rules that already ran
// alone (the account-wide ones). When the run was interrupted, or the process alone could
// not start or was interrupted, the shared outcomes stand and the confirmation says why.
func confirmAlone(merged report.Run, processes int, ranAlone []string, runAlone func(rules []string) (report.Run, int), interrupted func() bool) report.Run {
	c := &report.Confirmation{Processes: processes}
	rules := slices.DeleteFunc(report.RulesToConfirm(merged), func(id string) bool { return slices.Contains(ranAlone, id) })
	switch {
	case len(rules) == 0:
		merged.Confirmation = c
		return merged
	case interrupted():
		c.NotConfirmed = "the run was interrupted"
		merged.Confirmation = c
		return merged
	case !merged.StoppedAnswering.IsZero():
		c.NotConfirmed = "the backend stopped answering"
		merged.Confirmation = c
		return merged
	}
	alone, _ := runAlone(rules)
	switch {
	case alone.StartError != "":
		c.NotConfirmed = "the process alone could not run: " + alone.StartError
	case alone.Interrupted || interrupted():
		c.NotConfirmed = "the run was interrupted"
	default:
		return report.ConfirmAlone(merged, alone, rules, processes)
	}
	merged.Confirmation = c
	return merged
}

func writeMerged(path string, run report.Run) {
	data, err := json.Marshal(run)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "conform: write %s: %v\n", path, err)
	}
}
