package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
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
	defer progress.heartbeat(progressQuiet)()
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
