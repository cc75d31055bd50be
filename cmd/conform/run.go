package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

type runOptions struct {
	backends       []string
	labelFilter    string
	profile        string
	out            string
	rerunFailed    string
	retryErrors    int
	updateBaseline bool
	baselineDir    string
	specTimeout    time.Duration
	suiteTimeout   time.Duration
	parallel       int
	backendsAtOnce int
	keepFailed     bool
	record         string
	noCorpus       bool
}

// defaultSuiteTimeout is how long a backend process runs its specs before Ginkgo stops it
// (--suite-timeout).
const defaultSuiteTimeout = 2 * time.Hour

// defaultBackends is the embedded default of `conform run`: the reference and, where it can
// be started, Azurite.
var defaultBackends = []string{"reference", "azurite"}

// optionalByDefault are default backends whose failure to start is reported, not fatal.
var optionalByDefault = map[string]bool{"azurite": true}

// runExitStatus is the exit statuses of `conform run` (verdict.ExitStatuses), then what
// each covers in more words.
var runExitStatus = "Exit status:\n" + verdict.ExitStatusText("  ") + `

A failure its baseline does not expect (1) is also a listed spec that fails differently or
passes, a stale baseline entry, or a spec blocked by a failed precondition the baseline
does not list; a documented difference of the profile counts as a pass. A usage error (2)
is an unknown backend or mutant, a malformed connection string, a bad or empty label
filter: nothing is written. No answer (3) is a transport error or a timeout, named in the
summary; --retry-errors N re-runs them. A run that did not finish (130) is one interrupted
(SIGINT or SIGTERM, passed on to the backend processes, which delete the run's tables), cut
by --suite-timeout, or with a selected spec never started; the report says "interrupted"
and why, and --rerun-failed runs what it left.`

func runCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the suites against backends and write the conformance report",
		Long: `Run the conformance suites against each backend (--parallel processes per backend,
each a share of the rules) and write report.html, report.md, report.json and junit.xml
into --out.

Backends: reference, reference-http, reference-cosmos (judged with the cosmos profile unless --profile says otherwise), azurite, azurite-legacy, azurite-docker, mutant:NAME, or
any endpoint as NAME=env:VARIABLE (the connection string read from the environment, so that
it is on no command line) or NAME=CONNECTION_STRING. A +sdk suffix (azurite+sdk,
mine+sdk=env:VARIABLE) drives the backend through the official Go SDK instead of the raw
REST driver. Without --backend: reference and, where it can be started, azurite.
Started by conform and stopped after the run: azurite@VERSION (any published Azurite 3.x,
installed from npm into conform's cache, $CONFORM_CACHE_DIR),
NAME=image:REF[,port=P][,account=A][,key=env:VAR][,style=path|host][,args=ARGS] (a
container image, through testcontainers-go) and NAME=exec:COMMAND (a local server; {port}
in COMMAND is replaced by a free loopback port).

Environment:
  CONFORM_ALLOW_ACCOUNT_CHANGES=1  also run, against an endpoint that is not the reference
                                   or an emulator, the specs that change account-wide
                                   settings (service properties, CORS; they put the old
                                   settings back); without it they are skipped, and the
                                   summary says so

` + runExitStatus,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.backends, "backend", nil, "backend to run against (repeatable): a name, NAME=env:VARIABLE or NAME=CONNECTION_STRING; +sdk after the name drives it through the Go SDK")
	f.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'area:query && level:MUST'")
	f.StringVar(&o.profile, "profile", "", "expectation profile: storage or cosmos (default: cosmos for reference-cosmos and mutants on it, storage for the others)")
	f.StringVar(&o.out, "out", "conform-report", "directory to write the report into")
	f.StringVar(&o.rerunFailed, "rerun-failed", "", "re-run the rules that failed, errored or did not finish (a spec interrupted or never started) in the report in this directory, against its backends (by name or NAME=env:VARIABLE; one given as a connection string must be given again with --backend), and judge the merged whole")
	f.IntVar(&o.retryErrors, "retry-errors", 0, "re-run specs that got no answer (transport errors) or did not finish (the run stopped first) up to this many times")
	f.BoolVar(&o.updateBaseline, "update-baseline", false, "rewrite each backend's baseline from this run and print what changed")
	f.StringVar(&o.baselineDir, "baseline-dir", "", "baselines directory, read before the built-in ones and written by --update-baseline (default: "+defaultBaselineDir+" in the current directory when it exists or is being written, else the built-in ones)")
	f.DurationVar(&o.specTimeout, "spec-timeout", framework.DefaultSpecTimeout, "timeout of each spec")
	f.DurationVar(&o.suiteTimeout, "suite-timeout", defaultSuiteTimeout, "how long each backend process may run its specs; a run it cuts short did not finish (exit 130), and --rerun-failed runs what it left")
	f.IntVar(&o.parallel, "parallel", 0, "processes that run one backend's specs at the same time, each a share of its rules; the account-wide specs (service properties, CORS) run afterwards, alone, and then, again by one process alone, every rule that failed, was blocked or got no answer (default: "+fmt.Sprint(endpointParallel)+" for an endpoint given by connection string, whose answers take network time, "+fmt.Sprint(localParallel)+" for the local backends)")
	f.IntVar(&o.backendsAtOnce, "parallel-backends", 2, "backends run at the same time")
	f.BoolVar(&o.keepFailed, "keep-failed", false, "keep the tables of failed specs for inspection (the run lists them, with the conform clean that removes them)")
	f.BoolVar(&o.noCorpus, "no-corpus", false, "do not replay the corpus of recorded real traffic (fixtures/recordings) against each backend")
	f.StringVar(&o.record, "record", "", "write every HTTP exchange into this directory, one test-proxy JSON file per spec (a subdirectory per backend)")
	return cmd
}

// defaultBaselineDir is where --update-baseline writes without --baseline-dir, and what a
// run in the same directory reads first without --baseline-dir: the next run reads what the
// last update wrote.
const defaultBaselineDir = "conform-baselines"

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// nextRunReads says, in a few words, which baselines a run reads from dir.
func nextRunReads(dir string) string {
	if dir == defaultBaselineDir {
		return "the next run in this directory reads " + dir + "/ (then the built-in baselines)"
	}
	return "the next run reads it with --baseline-dir " + dir
}

// runPlan is a validated run: what to run, against what, and what it merges into.
type runPlan struct {
	o            runOptions
	backends     []string
	usingDefault bool
	filter       string // the label filter given to the backend processes
	command      string
	// earlier are the raw runs of the report that --rerun-failed merges into, by backend.
	earlier map[string]report.Run
	// nothing is set when --rerun-failed found nothing to re-run.
	nothing string
	// rerunRules is how many rules --rerun-failed runs again.
	rerunRules int
}

// rerunSentence says, for --rerun-failed, what was re-run and what the verdicts cover: the
// earlier run merged with this one, over the earlier run's selection ("" otherwise).
func (p runPlan) rerunSentence() string {
	if p.earlier == nil {
		return ""
	}
	var filters []string
	for _, run := range p.earlier {
		if run.Filter != "" && !slices.Contains(filters, run.Filter) {
			filters = append(filters, run.Filter)
		}
	}
	sort.Strings(filters)
	covers := "the earlier run's selection: the whole catalogue"
	if len(filters) > 0 {
		covers = "the earlier run's selection only (filter " + strings.Join(filters, "; ") + ")"
	}
	if o := p.o.labelFilter; o != "" {
		covers += "; this run re-ran only what --label-filter " + o + " selects of it"
	}
	rules := "rules"
	if p.rerunRules == 1 {
		rules = "rule"
	}
	return fmt.Sprintf("Re-ran the %d %s that failed in %s; each verdict judges the earlier run merged with this one, over %s.",
		p.rerunRules, rules, p.o.rerunFailed, covers)
}

// runRun is `conform run`: validate, plan, start, collect, judge, write, exit.
func runRun(cmd *cobra.Command, o runOptions) error {
	plan, err := planRun(o)
	if err != nil {
		return err
	}
	if plan.nothing != "" {
		fmt.Fprintln(cmd.OutOrStdout(), plan.nothing)
		return nil
	}
	rawDir := filepath.Join(o.out, "raw")
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return usageErr("create %s: %v", rawDir, err)
	}
	progress := newProgress(cmd.ErrOrStderr())
	if plan.o.baselineDir != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "Baselines: %s/, then the built-in ones\n", plan.o.baselineDir)
	}
	printProfiles(cmd.ErrOrStderr(), plan.backends, plan.o.profile)
	children := newBackendProcesses()
	stopForwarding := children.forwardSignals()
	runs, codes := startRuns(plan, plan.backends, plan.filter, rawDir, progress, children)
	runs = retryErrors(plan, runs, rawDir, progress, children)
	stopForwarding()
	runs = mergeEarlier(plan, runs)
	if plan.earlier != nil {
		// The raw results hold the merged whole, as the report does, so that a later
		// --rerun-failed of this report merges into all of it.
		for _, run := range runs {
			if run.StartError == "" {
				writeMerged(filepath.Join(rawDir, sanitizeName(run.Backend.Name)+".json"), run)
			}
		}
	}
	if children.wasInterrupted() {
		// The signal stops the whole run, whatever each backend's process recorded: the
		// report says so, and the exit status reads the report.
		for i := range runs {
			runs[i].Interrupted = true
		}
	}
	kept, status := collectRuns(cmd.ErrOrStderr(), plan, runs, codes)
	rep := report.Build(kept, spec.Rules(), report.Meta{ConformVersion: buildinfo.Current().String(), Command: plan.command, Generated: time.Now()})
	rep.Corpus = readCorpus(rawDir, kept)
	if err := writeRunReport(cmd.OutOrStdout(), plan, rep); err != nil {
		return err
	}
	if plan.o.keepFailed {
		printKeptTables(cmd.OutOrStdout(), plan.backends, rawDir, framework.RunPrefix())
	}
	return exitStatus(plan, rep, status)
}

// planRun validates the options and decides what runs, before anything is started or
// written: a mistake is one line and exit status 2.
func planRun(o runOptions) (runPlan, error) {
	p := runPlan{o: o, filter: o.labelFilter}
	switch o.profile {
	case "", "storage", "cosmos":
	default:
		return p, usageErr("--profile must be storage or cosmos, not %q", o.profile)
	}
	if o.parallel < 0 {
		return p, usageErr("--parallel must be at least 1 (or 0 for the default)")
	}
	if o.backendsAtOnce < 1 {
		return p, usageErr("--parallel-backends must be at least 1")
	}
	if o.retryErrors < 0 {
		return p, usageErr("--retry-errors must be 0 or more")
	}
	switch {
	case o.suiteTimeout < 0:
		return p, usageErr("--suite-timeout must be more than 0")
	case o.suiteTimeout == 0:
		p.o.suiteTimeout = defaultSuiteTimeout
	}
	if o.labelFilter != "" {
		if _, err := types.ParseLabelFilter(o.labelFilter); err != nil {
			return p, usageErr("--label-filter %q is not a valid label expression: %s", o.labelFilter, firstLine(ansi.ReplaceAllString(err.Error(), "")))
		}
	}
	p.backends = o.backends
	p.usingDefault = len(p.backends) == 0
	if o.rerunFailed != "" {
		prev, err := report.ReadJSON(filepath.Join(o.rerunFailed, report.FileJSON))
		if err != nil {
			return p, usageErr("--rerun-failed: %v", err)
		}
		ids, names := failedRules(prev)
		if len(ids) == 0 {
			for _, b := range prev.Backends {
				if b.Interrupted {
					// Every selected spec finished, but the run stopped after them: nothing
					// to re-run makes it finish, and its verdict stands.
					return p, &exitError{code: exitInterrupted, msg: fmt.Sprintf("nothing in %s to re-run, but the run of %s did not finish (%s): run it again",
						o.rerunFailed, b.Name, strings.Join(b.StoppedBy, "; "))}
				}
			}
			p.nothing = fmt.Sprintf("Nothing failed in %s.", o.rerunFailed)
			return p, nil
		}
		p.earlier = map[string]report.Run{}
		for _, b := range prev.Backends {
			raw, err := readEarlierRaw(filepath.Join(o.rerunFailed, "raw"), b.Name)
			if err != nil {
				return p, usageErr("--rerun-failed: the raw result of %s is missing, so the earlier report cannot be merged: %v", b.Name, err)
			}
			if raw.Filter == "" {
				raw.Filter = b.Coverage.Filter // a raw result written before it kept its filter
			}
			p.earlier[b.Name] = raw
		}
		p.rerunRules = len(ids)
		rerun := "(" + strings.Join(ids, " || ") + ")"
		if p.filter != "" {
			p.filter = "(" + p.filter + ") && " + rerun
		} else {
			p.filter = rerun
		}
		if p.usingDefault {
			p.backends, p.usingDefault = nil, false
			for _, n := range names {
				arg := p.earlier[n].Argument
				if arg == "" && all.Validate(n) == nil {
					arg = n // a report written before arguments were kept: a built-in name
				}
				if arg == "" {
					return p, usageErr("--rerun-failed: backend %s was given as a connection string, which conform does not keep; give it again: --backend %s=env:VARIABLE", n, n)
				}
				p.backends = append(p.backends, arg)
			}
		}
	}
	if p.usingDefault {
		p.backends = defaultBackends
	}
	seen := map[string]bool{}
	for _, b := range p.backends {
		n := framework.BackendName(b)
		if n == "" || seen[n] {
			return p, usageErr("backend %q is empty or named twice", n)
		}
		seen[n] = true
		if err := all.Validate(b); err != nil {
			return p, usageErr("%v", err)
		}
		if p.filter != "" && selectedRules(p.filter, n) == 0 {
			return p, usageErr("--label-filter %q selects no spec on backend %s", o.labelFilter, n)
		}
	}
	if o.record != "" {
		for _, b := range p.backends {
			if err := recordable(b); err != nil {
				return p, usageErr("--record: %v", err)
			}
		}
	}
	if o.baselineDir == "" && (o.updateBaseline || isDir(defaultBaselineDir)) {
		p.o.baselineDir = defaultBaselineDir
	}
	p.command = reproduceCommand(p.backends, o, p.filter)
	return p, nil
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// selectedRules counts the rules of the catalogue whose specs filter selects on backend:
// a spec carries its rule's labels (framework.ruleLabels) and its backend's.
func selectedRules(filter, backend string) int {
	lf, err := types.ParseLabelFilter(filter)
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range spec.Rules() {
		labels := []string{r.ID, framework.LabelLevel + string(r.Level), framework.LabelArea + string(r.Area),
			framework.LabelFeature + string(r.FeatureOrCore()), framework.LabelBackend + backend}
		if lf(labels) {
			n++
		}
	}
	return n
}

// readEarlierRaw reads the raw result of backend name in an earlier run's raw directory:
// the file of its name or, when the backend named itself otherwise than its argument did
// (mutant:NAME@BASE), the whole-backend result that holds it.
func readEarlierRaw(rawDir, name string) (report.Run, error) {
	run, err := readRaw(filepath.Join(rawDir, sanitizeName(name)+".json"))
	if err == nil {
		return run, nil
	}
	files, _ := filepath.Glob(filepath.Join(rawDir, "*.json"))
	for _, f := range files {
		base := filepath.Base(f)
		if strings.Contains(base, ".part") || strings.HasSuffix(base, ".account.json") || strings.HasSuffix(base, ".corpus.json") {
			continue
		}
		if r, rerr := readRaw(f); rerr == nil && r.Backend.Name == name {
			return r, nil
		}
	}
	return run, err
}

func readRaw(path string) (report.Run, error) {
	var run report.Run
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	return run, err
}

// startRuns runs the suite against each backend, one process each, at most --parallel at
// a time, and collects their raw results.
func startRuns(p runPlan, backends []string, filter, rawDir string, progress *progress, children *backendProcesses) ([]report.Run, []int) {
	self, err := os.Executable()
	runs := make([]report.Run, len(backends))
	codes := make([]int, len(backends))
	if err != nil {
		for i, b := range backends {
			runs[i], codes[i] = report.Run{Backend: driver.Info{Name: framework.BackendName(b)}, StartError: "find conform's own executable: " + err.Error()}, exitUsage
		}
		return runs, codes
	}
	sem := make(chan struct{}, p.o.backendsAtOnce)
	var wg sync.WaitGroup
	runID := framework.RunPrefix()[len(framework.TablePrefix):]
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if children.wasInterrupted() {
				runs[i], codes[i] = report.Run{Backend: driver.Info{Name: framework.BackendName(b)}, Interrupted: true, Filter: filter, Argument: reusableArgument(b)}, exitInterrupted
				return
			}
			runs[i], codes[i] = runBackend(self, b, i, p.o, filter, p.command, rawDir, runID, progress, children)
			// The filter this run was given is its selection (report.SelectionOf): a rerun's
			// or a retry's is narrower than the user's; merged into the earlier run, the
			// whole is judged over the earlier run's.
			runs[i].Filter = filter
			runs[i].Argument = reusableArgument(b)
			runs[i].Interrupted = runs[i].Interrupted || children.wasInterrupted()
		}()
	}
	wg.Wait()
	return runs, codes
}

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

// collectRuns keeps the runs that go into the report (a default backend that could not be
// started is left out, with one line) and says which backends could not be started.
func collectRuns(w io.Writer, p runPlan, runs []report.Run, codes []int) ([]report.Run, int) {
	var kept []report.Run
	status := exitOK
	for i, run := range runs {
		name := run.Backend.Name
		if run.StartError != "" && p.usingDefault && optionalByDefault[name] {
			fmt.Fprintf(w, "conform: %s could not be started, so the report leaves it out: %s\n", name, run.StartError)
			continue
		}
		kept = append(kept, run)
		if run.StartError != "" {
			fmt.Fprintf(w, "conform: backend %s cannot be started or reached: %s\n", name, run.StartError)
			status = exitUsage
		} else if i < len(codes) && codes[i] != exitOK && len(run.Ginkgo.SpecReports) == 0 && !run.Interrupted {
			status = exitUsage
		}
	}
	return kept, status
}

// writeRunReport writes the report, prints the summary and, with --update-baseline,
// rewrites the baselines.
func writeRunReport(w io.Writer, p runPlan, rep report.Report) error {
	if err := report.WriteDir(p.o.out, rep); err != nil {
		return err
	}
	if rerun := p.rerunSentence(); rerun != "" {
		fmt.Fprintf(w, "\n%s\n", rerun)
	}
	printRunSummary(w, rep, p.o.out, p.o.updateBaseline)
	if p.o.updateBaseline {
		return updateBaselines(w, p.o.baselineDir, rep)
	}
	return nil
}

// exitStatus is the exit status of the judged report (report.Exit, runExitStatus): it
// reads the verdicts the report shows, so that the two never disagree; status is a
// backend that could not be started.
func exitStatus(p runPlan, rep report.Report, status int) error {
	if status != exitOK {
		return &exitError{code: status}
	}
	var stopped []string
	for _, b := range rep.Backends {
		if b.StoppedAnswering != "" {
			stopped = append(stopped, b.Name+" stopped answering at "+b.StoppedAnswering)
		}
	}
	switch code := report.Exit(rep, p.o.updateBaseline); code {
	case exitOK:
		return nil
	case exitInterrupted:
		return &exitError{code: code, msg: "interrupted: the run did not finish; the report holds the specs that ran, and --rerun-failed runs the rest"}
	case exitInconclusive:
		if len(stopped) > 0 {
			return &exitError{code: code, msg: "inconclusive: " + strings.Join(stopped, "; ") + ", so the run stopped before its end; the report judges the specs that ran before"}
		}
		return &exitError{code: code, msg: "inconclusive: some specs got no answer (see the summary); --retry-errors N re-runs them"}
	default:
		return &exitError{code: code}
	}
}

// failedRules returns the rules that failed, errored, were blocked, passed unexpectedly
// or did not finish (a selected spec interrupted or never started) in a report, and the
// backends they did so on.
func failedRules(r report.Report) (ids, backends []string) {
	bs := map[string]bool{}
	for _, row := range r.Rules {
		for bi, c := range row.Cells {
			if !rerunCell(c) {
				continue
			}
			if len(ids) == 0 || ids[len(ids)-1] != row.ID {
				ids = append(ids, row.ID)
			}
			bs[r.Backends[bi].Name] = true
		}
	}
	for b := range bs {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	return ids, backends
}

// rerunCell reports whether --rerun-failed runs a cell's rule again.
func rerunCell(c report.Cell) bool {
	switch c.Outcome {
	case verdict.Fail, verdict.Error, verdict.UnexpectedPass, verdict.Blocked, verdict.Interrupted:
		return true
	}
	for _, s := range c.Specs {
		if s.Decision.Selected && (s.Outcome == verdict.NotRun || s.Outcome == verdict.Interrupted) {
			return true
		}
	}
	return false
}

// reusableArgument is the backend argument a later --rerun-failed can give again: a name,
// or NAME=env:VARIABLE; never a connection string (""), which may hold a key.
func reusableArgument(arg string) string {
	name, value, ok := strings.Cut(arg, "=")
	switch {
	case !ok, provision.StartsServer(arg):
		return arg // a name, or a description that holds no secret (a key only as key=env:VARIABLE)
	case strings.HasPrefix(value, provision.EnvPrefix) && !strings.ContainsAny(value, ";= "):
		return name + "=" + value
	}
	return ""
}

// reproduceCommand renders the command line of this run without any secret: a connection
// string is shown as a placeholder. filter is the label filter the backends' processes
// run with: for --rerun-failed, the rules it re-ran, so that the line runs what this run
// ran rather than the whole catalogue.
func reproduceCommand(backends []string, o runOptions, filter string) string {
	parts := []string{"conform", "run"}
	for _, b := range backends {
		if strings.Contains(b, "=") {
			if reusable := reusableArgument(b); reusable != "" {
				b = reusable
			} else {
				b = framework.BackendName(b) + "='<connection string>'"
			}
		}
		parts = append(parts, "--backend", b)
	}
	if filter != "" {
		parts = append(parts, "--label-filter", "'"+strings.ReplaceAll(filter, "'", `'\''`)+"'")
	}
	if o.profile != "" {
		parts = append(parts, "--profile", o.profile)
	}
	return strings.Join(parts, " ")
}

// childPart is the share of a backend's specs one process runs: its raw result and log are
// named with suffix ("" when one process runs them all); only one part replays the corpus.
type childPart struct {
	suffix string
	corpus bool
}

func runChild(self, backend string, slot int, part childPart, o runOptions, filter, command, rawDir, runID string, p *progress, children *backendProcesses) (report.Run, int) {
	name := framework.BackendName(backend)
	safe := sanitizeName(name) + part.suffix
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return report.Run{StartError: "create " + rawDir + ": " + err.Error()}, exitUsage
	}
	rawPath := filepath.Join(rawDir, safe+".json")
	_ = os.Remove(rawPath)
	_ = os.Remove(corpusPath(rawPath))
	args := []string{"run-backend", "--raw-out", rawPath, "--label-filter", filter, "--profile", backendProfile(backend, o.profile),
		"--spec-timeout", o.specTimeout.String(), "--suite-timeout", o.suiteTimeout.String(), "--command", command}
	if o.baselineDir != "" {
		args = append(args, "--baseline-dir", o.baselineDir)
	}
	if o.updateBaseline {
		args = append(args, "--ignore-baselines")
	}
	if o.keepFailed {
		args = append(args, "--keep-failed")
	}
	if o.record != "" {
		args = append(args, "--record", filepath.Join(o.record, sanitizeName(name)))
	}
	if o.noCorpus || !part.corpus {
		args = append(args, "--no-corpus")
	}
	c := exec.Command(self, args...)
	c.Env = append(os.Environ(), childBackendEnv+"="+backend, "CONFORM_RUN_ID="+runID, fmt.Sprintf("CONFORM_TABLE_SLOT=%d", slot),
		childAnswerFilesEnv+"="+answerFilesPrefix(rawDir, name))
	ownProcessGroup(c)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return report.Run{Backend: driver.Info{Name: name}, StartError: "create " + rawDir + ": " + err.Error()}, exitUsage
	}
	logFile, err := os.Create(filepath.Join(rawDir, safe+".log"))
	if err != nil {
		return report.Run{Backend: driver.Info{Name: name}, StartError: "create log: " + err.Error()}, exitUsage
	}
	defer logFile.Close()
	stdout := newMaskedLines(logFile)
	defer stdout.Flush()
	c.Stdout = stdout
	stderr, err := c.StderrPipe()
	if err != nil {
		return report.Run{StartError: err.Error()}, exitUsage
	}
	if err := c.Start(); err != nil {
		return report.Run{StartError: "start: " + err.Error()}, exitUsage
	}
	defer children.add(c.Process)()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, eventPrefix); ok {
			var e event
			if json.Unmarshal([]byte(rest), &e) == nil {
				p.event(name, e)
				continue
			}
		}
		fmt.Fprintln(logFile, driver.MaskSecrets(line))
	}
	waitErr := c.Wait()
	code := exitOK
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	} else if waitErr != nil {
		code = exitUsage
	}
	var run report.Run
	data, err := os.ReadFile(rawPath)
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	if err != nil {
		run.Backend.Name = name
		run.StartError = fmt.Sprintf("the process running %s ended without a result (exit status %d); see %s", name, code,
			filepath.Join(rawDir, safe+".log"))
		return run, exitUsage
	}
	if run.Backend.Name == "" {
		run.Backend.Name = name
	}
	return run, code
}

func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

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
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, now: time.Now, total: map[string]int{}, done_: map[string]int{}, counts: map[string]map[verdict.Outcome]int{},
		step: map[string]int{}, began: map[string]time.Time{}, parts: map[string]int{}, counted: map[string]int{}, stopped: map[string]bool{}}
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
			fmt.Fprintf(p.w, "[%s] %s %s: %s\n        %s\n", name, word, e.Rule, e.Text, e.Failure)
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
	fmt.Fprintf(p.w, "[%s] finished: %d specs, %s, in %s%s\n", name, p.done_[name], p.tally(name),
		p.now().Sub(p.began[name]).Round(time.Second), how)
}

// summaryRulesShown is how many failing rules the summary lists per backend;
// summaryErrorsShown how many specs without an answer, a line each.
const (
	summaryRulesShown  = 20
	summaryErrorsShown = 5
)

// printSummary ends a run: per backend its verdict and counts, the rules that fail (the
// first summaryRulesShown, then how many more), whether every failure is one its baseline
// expects, the rules left out by policy and why; then where the report is.
func printSummary(w io.Writer, r report.Report, dir string) {
	printRunSummary(w, r, dir, false)
}

// printRunSummary is printSummary for a run that rewrites the baselines when
// updatingBaseline is true: its unexpected specs do not fail it (verdict.Exit).
func printRunSummary(w io.Writer, r report.Report, dir string, updatingBaseline bool) {
	fmt.Fprintln(w)
	for bi, b := range r.Backends {
		c := b.Counts
		fmt.Fprintf(w, "%-16s %s\n", b.Name, b.Verdict)
		if b.BaselineNote != "" {
			fmt.Fprintf(w, "%-16s %s\n", "", b.BaselineNote)
		}
		if b.StartError == "" {
			fmt.Fprintf(w, "%-16s rules: %s\n", "", report.BackendCountsInWords(r, bi, false))
		}
		passed := strconv.Itoa(c.Passed)
		if c.Information > 0 {
			passed += fmt.Sprintf(" (%d of them allowed choices)", c.Information)
		}
		fmt.Fprintf(w, "%-16s specs of every level: passed %s, failed %d, errors %d, blocked %d, expected failures %d, flaky %d, unexpected passes %d, documented differences %d, skipped %d, interrupted %d, not run %d\n",
			"", passed, c.Failed, c.Errors, c.Blocked, c.ExpectedFailures, c.Flaky, c.UnexpectedPasses, c.DocumentedDiffs, c.SkippedCapability, c.Interrupted, c.NotRun)
		for i, line := range b.ConfirmationWords {
			if i == summaryRulesShown+1 {
				fmt.Fprintf(w, "%-16s ... and %d more differences between the rules' outcomes beside the other processes and alone (all in the report)\n", "", len(b.ConfirmationWords)-i)
				break
			}
			fmt.Fprintf(w, "%-16s %s\n", "", line)
		}
		if c.NotApplicable > 0 {
			fmt.Fprintf(w, "%-16s not applicable to the profile: %d\n", "", c.NotApplicable)
		}
		if c.Unexpected > 0 {
			fmt.Fprintf(w, "%-16s %s\n", "", verdict.UnexpectedSentence(c.Unexpected, updatingBaseline))
		}
		failing, expected := report.FailingRules(r, bi)
		for i, f := range failing {
			if i == summaryRulesShown {
				fmt.Fprintf(w, "%-16s ... and %d more (%s; all in the report)\n", "", len(failing)-summaryRulesShown, report.RulesByLevel(failing[summaryRulesShown:]))
				break
			}
			line := fmt.Sprintf("%s %s (%s)", report.StyleOf(f.Outcome).Word, f.ID, f.Level)
			if f.Words != "" {
				line += ": " + f.Words
			}
			fmt.Fprintf(w, "%-16s %s\n", "", line)
		}
		if len(failing) == 0 && len(expected) > 0 && b.StartError == "" {
			fmt.Fprintf(w, "%-16s every failure (%s) is one the baseline expects: known divergences, not new failures\n", "", report.RulesByLevel(expected))
		}
		if why := report.PolicySkipSentence(report.PolicySkippedRules(r, bi)); why != "" {
			fmt.Fprintf(w, "%-16s %s\n", "", why)
		}
		for i, e := range b.Errors {
			if i == summaryErrorsShown {
				fmt.Fprintf(w, "%-16s ... and %d more specs without an answer (all in the report)\n", "", max(len(b.Errors), c.Errors)-summaryErrorsShown)
				break
			}
			fmt.Fprintf(w, "%-16s no answer: %s\n", "", firstLine(e))
		}
	}
	fmt.Fprintf(w, "\nReport: %s (also %s, %s, %s)\n", filepath.Join(dir, report.FileHTML), report.FileMarkdown, report.FileJSON, report.FileJUnit)
}

// failureLine is the first line of a failure message in words (report.FailureInWords:
// Gomega's blocks become "status 403, expected 401"), with the lines after it when it only
// announces them ("... differs from what the rule expects:") or when it names the step
// whose check follows, cut at 240 characters.
func failureLine(msg string) string {
	msg, block := report.FailureInWords(msg)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(msg), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	var parts []string
	for i, l := range lines {
		parts = append(parts, l)
		announces := strings.HasSuffix(l, ":")
		if len(parts) == 1 && i+1 < len(lines) && !announces && (strings.HasSuffix(lines[i+1], ":") || lines[i+1] == block) {
			continue // the step ("Get Entity after Update and Merge"); what went wrong follows
		}
		if !announces {
			break
		}
	}
	return firstLine(strings.Join(parts, " "))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "..."
	}
	return s
}

func ruleLabel(l string) (spec.Rule, bool) { return spec.LookupRule(l) }

// readCorpus collects the corpus agreement each backend process wrote beside its raw result.
func readCorpus(rawDir string, runs []report.Run) []report.CorpusAgreement {
	var out []report.CorpusAgreement
	for _, run := range runs {
		data, err := os.ReadFile(corpusPath(filepath.Join(rawDir, sanitizeName(run.Backend.Name)+".json")))
		if err != nil {
			continue
		}
		var a report.CorpusAgreement
		if json.Unmarshal(data, &a) == nil {
			out = append(out, a)
		}
	}
	return out
}
