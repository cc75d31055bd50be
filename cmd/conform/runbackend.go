package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
	"github.com/spf13/cobra"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/replay"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// childBackendEnv carries the backend argument to the process that runs it, so that a
// connection string never appears on a command line.
const childBackendEnv = "CONFORM_CHILD_BACKEND"

// eventPrefix starts the progress lines a backend process writes on its standard error.
const eventPrefix = "conform-event "

// event is one progress line of a backend process.
type event struct {
	Kind    string `json:"kind"` // "total", "spec"
	Total   int    `json:"total,omitempty"`
	State   string `json:"state,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Text    string `json:"text,omitempty"`
	Failure string `json:"failure,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

type childOptions struct {
	labelFilter     string
	profile         string
	rawOut          string
	specTimeout     time.Duration
	suiteTimeout    time.Duration
	baselineDir     string
	ignoreBaselines bool
	command         string
	keepFailed      bool
	record          string
	noCorpus        bool
}

func runBackendCmd() *cobra.Command {
	var o childOptions
	cmd := &cobra.Command{
		Use:    "run-backend",
		Short:  "Run the suite against one backend (used by conform run; one process per backend)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			arg := os.Getenv(childBackendEnv)
			if arg == "" {
				return usageErr("run-backend needs %s", childBackendEnv)
			}
			code := runOneBackend(arg, o)
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter")
	cmd.Flags().StringVar(&o.profile, "profile", "", "expectation profile")
	cmd.Flags().StringVar(&o.rawOut, "raw-out", "", "where to write the raw result")
	cmd.Flags().DurationVar(&o.specTimeout, "spec-timeout", framework.DefaultSpecTimeout, "timeout of each spec")
	cmd.Flags().DurationVar(&o.suiteTimeout, "suite-timeout", defaultSuiteTimeout, "how long the specs may run before Ginkgo stops them")
	cmd.Flags().StringVar(&o.baselineDir, "baseline-dir", "", "baselines to use instead of the embedded ones")
	cmd.Flags().BoolVar(&o.ignoreBaselines, "ignore-baselines", false, "run without expected failures")
	cmd.Flags().StringVar(&o.command, "command", "", "the command that reproduces the run")
	cmd.Flags().BoolVar(&o.keepFailed, "keep-failed", false, "keep the tables of failed specs")
	cmd.Flags().StringVar(&o.record, "record", "", "write every HTTP exchange into this directory, a file per spec")
	cmd.Flags().BoolVar(&o.noCorpus, "no-corpus", false, "do not replay the corpus of recorded real traffic")
	return cmd
}

func emit(e event) {
	b, _ := json.Marshal(e)
	fmt.Fprintln(os.Stderr, eventPrefix+driver.MaskSecrets(string(b)))
}

type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

func runOneBackend(arg string, o childOptions) int {
	// An interrupt that comes before Ginkgo handles interrupts (while the backend opens or
	// the corpus replays) must not kill the process without a result: it is held, and
	// raised again once Ginkgo's handler is in place (ReportBeforeSuite below).
	early := make(chan os.Signal, 1)
	signal.Notify(early, os.Interrupt, syscall.SIGTERM)
	run := report.Run{Profile: o.profile, Command: o.command}
	writeRun := func() {
		data, err := json.Marshal(run)
		if err == nil {
			err = os.WriteFile(o.rawOut, []byte(driver.MaskSecrets(string(data))), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "conform: write result: %v\n", err)
		}
	}
	var recorder *replay.Recorder
	// A long start (an npm install) says what it does; a started server's output is kept
	// beside the raw result.
	openOpts := []provision.Option{
		provision.WithProgress(func(line string) { emit(event{Kind: "note", Text: line}) }),
		provision.WithLogDir(filepath.Dir(o.rawOut)),
	}
	if o.record != "" {
		var err error
		if recorder, err = replay.NewRecorder(o.record, rest.NewTransport()); err != nil {
			run.Backend = driver.Info{Name: framework.BackendName(arg)}
			run.StartError = "--record: " + err.Error()
			writeRun()
			return exitUsage
		}
		openOpts = append(openOpts, provision.WithHTTPClient(&http.Client{Transport: recorder, Timeout: rest.DefaultTimeout}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.OpenTimeout)
	target, err := all.OpenWith(ctx, arg, openOpts...)
	cancel()
	if err != nil {
		run.Backend = driver.Info{Name: framework.BackendName(arg)}
		run.StartError = err.Error()
		writeRun()
		return exitUsage
	}
	run.Backend = target.Info
	if !o.ignoreBaselines {
		// A backend with a baseline only for other versions is told so, on the terminal.
		if _, _, note, _ := fixtures.FindBaseline(o.baselineDir, target.Info.Name, target.Info.Kind, target.Info.Version); note != "" {
			emit(event{Kind: "note", Text: note})
			run.BaselineNote = note // and in the summary and the report, below the verdict
		}
	}
	if !o.noCorpus {
		writeCorpus(corpusPath(o.rawOut), replayCorpus(target, o.profile))
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	// A long documented wait (a deleted table's name) shows on the terminal as it goes.
	framework.SetProgress(func(line string) { emit(event{Kind: "note", Text: line}) })
	cfg := framework.Config{
		Backends:         []string{arg},
		Open:             func(context.Context, string) (*framework.Target, error) { return target, nil },
		Profile:          o.profile,
		BaselineDir:      o.baselineDir,
		SpecTimeout:      o.specTimeout,
		IgnoreBaselines:  o.ignoreBaselines,
		KeepFailedTables: o.keepFailed,
		RetryDelay:       framework.RetryDelayFromEnv(),
	}
	if err := framework.Build(cfg); err != nil {
		run.StartError = err.Error()
		writeRun()
		return exitUsage
	}
	ginkgo.ReportBeforeSuite(func(r ginkgo.Report) {
		emit(event{Kind: "total", Total: r.PreRunStats.SpecsThatWillRun})
		signal.Stop(early)
		select {
		case sig := <-early:
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(sig)
			}
		default:
		}
	})
	if recorder != nil {
		ginkgo.ReportBeforeEach(func(s ginkgo.SpecReport) { recorder.Begin(framework.SpecText(s)) })
		ginkgo.ReportAfterEach(func(ginkgo.SpecReport) {
			if err := recorder.Flush(); err != nil {
				fmt.Fprintln(os.Stderr, "conform: "+err.Error())
			}
		})
	}
	// A backend that stopped answering stops the run (issue 31): once stoppedAnsweringAfter
	// specs in a row got no answer and a probe gets none either, every spec not yet run is
	// left unrun (AbortSuite in the next spec's setup, before anything of it runs); the
	// specs that ran are judged as usual.
	watch, stopFile := &answerWatch{}, ""
	if prefix := os.Getenv(childAnswerFilesEnv); prefix != "" {
		watch.shared, stopFile = prefix+".unanswered", prefix+".stopped"
	}
	adoptStop := func() {
		if at := readStopFile(stopFile); !at.IsZero() {
			watch.stop(at) // another part of this backend's run found it first
		}
	}
	ginkgo.BeforeEach(func() {
		adoptStop()
		if at := watch.stoppedAt(); !at.IsZero() {
			ginkgo.AbortSuite("not run: " + stoppedAnsweringWords(target.Info.Name, at) + "; the run stopped there")
		}
	})
	ginkgo.ReportAfterEach(func(s ginkgo.SpecReport) {
		if !report.Ran(s) {
			return // left out, or not started: the run stopped first
		}
		e := event{Kind: "spec", State: s.State.String(), Text: framework.SpecText(s)}
		for _, l := range s.Labels() {
			if r, ok := ruleLabel(l); ok {
				e.Rule = l
				// Classified as the report classifies it, so that progress and summary agree.
				e.Outcome = string(report.SpecOutcome(s, o.labelFilter, r, o.profile).Outcome)
			}
		}
		if s.Failed() {
			e.Failure = failureLine(s.Failure.Message)
		}
		if s.State == types.SpecStateAborted && !watch.stoppedAt().IsZero() {
			return // not run: the backend stopped answering, said once by the "stopped" event
		}
		emit(e)
		adoptStop()
		if watch.spec(verdict.Outcome(e.Outcome)) {
			if err := probeAnswer(target.Backend); err != nil {
				at := time.Now()
				watch.stop(at)
				writeStopFile(stopFile, at)
				emit(event{Kind: "stopped", Text: at.Format(time.RFC3339Nano), Failure: firstLine(err.Error())})
			}
		}
	})
	interrupted := false
	ginkgo.ReportAfterSuite("conform raw result", func(r ginkgo.Report) {
		run.Ginkgo = r
		run.StoppedAnswering = watch.stoppedAt()
		interrupted = report.WasInterrupted(r)
		writeRun()
	})
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	suiteConfig.LabelFilter = o.labelFilter
	suiteConfig.Timeout = o.suiteTimeout
	reporterConfig.Succinct = true
	reporterConfig.NoColor = true
	t := &testingT{}
	ok := ginkgo.RunSpecs(t, "conform", suiteConfig, reporterConfig) && !t.failed
	if !watch.stoppedAt().IsZero() && !interrupted {
		if !o.keepFailed {
			cleanAfterStop(target.Backend, arg)
		}
		return exitInconclusive
	}
	if interrupted || !o.keepFailed {
		sweepProcessTables(target.Backend, interrupted)
	} else {
		writeKept(keptPath(o.rawOut), target.Backend)
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}

// sweepProcessTables deletes what is left of this process's tables at the end of its run:
// a table whose Create Table was in flight when an interrupt came has no cleanup registered
// yet, and a create whose answer was lost, or a delete that stayed unanswered after its
// retries, leaves a table behind (issue 20). Only names under this process's own prefix
// (framework.ProcessTablePrefix) that match the exact pattern of conform's tables are
// touched; listing and deleting are retried as the SDKs do.
func sweepProcessTables(b api.Backend, interrupted bool) {
	when := "at the end of the run"
	if interrupted {
		when = "after the interrupt"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names, err := tablesWithPrefix(ctx, b, framework.ProcessTablePrefix())
	if err != nil {
		fmt.Fprintf(os.Stderr, "conform: list this run's tables %s: %v\n", when, err)
		return
	}
	for _, n := range names {
		err := framework.RetrySetup(ctx, func(ctx context.Context) error { return b.DeleteTable(ctx, n) })
		if err != nil && !isStatus(err, http.StatusNotFound) {
			fmt.Fprintf(os.Stderr, "conform: delete %s %s: %v\n", n, when, err)
		}
	}
}

func isStatus(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status
}

// writeCorpus writes a backend's agreement with the corpus for the parent process.
func writeCorpus(path string, a report.CorpusAgreement) {
	data, err := json.Marshal(a)
	if err == nil {
		err = os.WriteFile(path, []byte(driver.MaskSecrets(string(data))), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "conform: write corpus agreement: %v\n", err)
	}
}
