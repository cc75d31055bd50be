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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
)

type runOptions struct {
	backends       []string
	labelFilter    string
	profile        string
	out            string
	rerunFailed    string
	updateBaseline bool
	baselineDir    string
	specTimeout    time.Duration
	parallel       int
	keepFailed     bool
	record         string
	noCorpus       bool
}

// defaultBackends is the embedded default of `conform run`: the reference and, where it can
// be started, Azurite.
var defaultBackends = []string{"reference", "azurite"}

// optionalByDefault are default backends whose failure to start is reported, not fatal.
var optionalByDefault = map[string]bool{"azurite": true}

func runCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the suites against backends and write the conformance report",
		Long: `Run the conformance suites once per backend (a process per backend) and write
report.json, report.md, report.html and junit.xml into --out.

Backends: reference, reference-http, azurite, azurite-legacy, azurite-docker, or
NAME=CONNECTION_STRING for any endpoint. Without --backend: reference and, where it can be
started, azurite.

Exit status: 0 when every backend meets its baseline; 1 when a backend fails a rule its
baseline does not expect or a baseline entry passes; 2 for a usage error or a backend that
cannot be started or reached; 130 when interrupted (SIGINT or SIGTERM is passed on to the
backend processes, which delete the run's tables, and the report holds what ran).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRun(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.backends, "backend", nil, "backend to run against (repeatable): a name or NAME=CONNECTION_STRING")
	f.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'area:query && level:MUST'")
	f.StringVar(&o.profile, "profile", "", "expectation profile: storage (default) or cosmos")
	f.StringVar(&o.out, "out", "conform-report", "directory to write the report into")
	f.StringVar(&o.rerunFailed, "rerun-failed", "", "run only the rules that failed in the report in this directory")
	f.BoolVar(&o.updateBaseline, "update-baseline", false, "rewrite each backend's baseline from this run and print what changed")
	f.StringVar(&o.baselineDir, "baseline-dir", "", "baselines directory (default: the embedded ones; with --update-baseline: fixtures/baselines)")
	f.DurationVar(&o.specTimeout, "spec-timeout", framework.DefaultSpecTimeout, "timeout of each spec")
	f.IntVar(&o.parallel, "parallel", 2, "backends run at the same time")
	f.BoolVar(&o.keepFailed, "keep-failed", false, "keep the tables of failed specs for inspection")
	f.BoolVar(&o.noCorpus, "no-corpus", false, "do not replay the corpus of recorded real traffic (fixtures/recordings) against each backend")
	f.StringVar(&o.record, "record", "", "write every HTTP exchange into this directory, one test-proxy JSON file per spec (a subdirectory per backend)")
	return cmd
}

func runRun(cmd *cobra.Command, o runOptions) error {
	switch o.profile {
	case "", "storage", "cosmos":
	default:
		return usageErr("--profile must be storage or cosmos, not %q", o.profile)
	}
	if o.parallel < 1 {
		return usageErr("--parallel must be at least 1")
	}
	backends := o.backends
	usingDefault := len(backends) == 0
	filter := o.labelFilter
	if o.rerunFailed != "" {
		prev, err := report.ReadJSON(filepath.Join(o.rerunFailed, report.FileJSON))
		if err != nil {
			return usageErr("--rerun-failed: %v", err)
		}
		ids, names := failedRules(prev)
		if len(ids) == 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "Nothing failed in %s.\n", o.rerunFailed)
			return nil
		}
		rerun := "(" + strings.Join(ids, " || ") + ")"
		if filter != "" {
			filter = "(" + filter + ") && " + rerun
		} else {
			filter = rerun
		}
		if usingDefault {
			backends, usingDefault = names, false
		}
	}
	if usingDefault {
		backends = defaultBackends
	}
	seen := map[string]bool{}
	for _, b := range backends {
		n := framework.BackendName(b)
		if n == "" || seen[n] {
			return usageErr("backend %q is empty or named twice", n)
		}
		seen[n] = true
	}
	if o.record != "" {
		for _, b := range backends {
			if err := recordable(b); err != nil {
				return usageErr("--record: %v", err)
			}
		}
	}
	if o.updateBaseline && o.baselineDir == "" {
		o.baselineDir = "fixtures/baselines"
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find conform's own executable: %w", err)
	}
	rawDir := filepath.Join(o.out, "raw")
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return usageErr("create %s: %v", rawDir, err)
	}
	command := reproduceCommand(backends, o)
	progress := newProgress(cmd.ErrOrStderr())
	runs := make([]report.Run, len(backends))
	codes := make([]int, len(backends))
	sem := make(chan struct{}, o.parallel)
	var wg sync.WaitGroup
	runID := framework.RunPrefix()[len(framework.TablePrefix):]
	children := newBackendProcesses()
	stopForwarding := children.forwardSignals()
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if children.wasInterrupted() {
				runs[i], codes[i] = report.Run{Backend: driver.Info{Name: framework.BackendName(b)}, StartError: "not run: interrupted"}, exitInterrupted
				return
			}
			runs[i], codes[i] = runChild(self, b, o, filter, command, rawDir, runID, progress, children)
		}()
	}
	wg.Wait()
	stopForwarding()

	var kept []report.Run
	status := exitOK
	for i, run := range runs {
		name := framework.BackendName(backends[i])
		if run.StartError != "" && usingDefault && optionalByDefault[name] {
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: %s could not be started, so the report leaves it out: %s\n", name, run.StartError)
			continue
		}
		kept = append(kept, run)
		switch {
		case run.StartError != "":
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: backend %s cannot be started or reached: %s\n", name, run.StartError)
			status = exitUsage
		case codes[i] != exitOK && status == exitOK && (len(run.Ginkgo.SpecReports) == 0 || suiteNodeFailed(run)):
			status = exitFailed
		}
	}
	rep := report.Build(kept, spec.Rules(), report.Meta{ConformVersion: Version, Command: command, Generated: time.Now()})
	rep.Corpus = readCorpus(rawDir, kept)
	// A backend's specs decide the exit status through the report's outcomes, so that a
	// request the driver could not send (skipped there) does not fail the run.
	for _, b := range rep.Backends {
		if c := b.Counts; status == exitOK && c.Failed+c.Errors+c.UnexpectedPasses+c.DocumentedDiffs > 0 {
			status = exitFailed
		}
	}
	if err := report.WriteDir(o.out, rep); err != nil {
		return err
	}
	printSummary(cmd.OutOrStdout(), rep, o.out)
	if o.updateBaseline {
		if err := updateBaselines(cmd.OutOrStdout(), o.baselineDir, rep); err != nil {
			return err
		}
		if status == exitFailed {
			status = exitOK
		}
	}
	if children.wasInterrupted() {
		return &exitError{code: exitInterrupted, msg: "interrupted; the report holds the specs that ran"}
	}
	if status != exitOK {
		return &exitError{code: status}
	}
	return nil
}

// failedRules returns the rules that failed, errored or passed unexpectedly in a report,
// and the backends they did so on.
func failedRules(r report.Report) (ids, backends []string) {
	bs := map[string]bool{}
	for _, row := range r.Rules {
		for bi, c := range row.Cells {
			switch c.Outcome {
			case report.Fail, report.Error, report.UnexpectedPass:
				if len(ids) == 0 || ids[len(ids)-1] != row.ID {
					ids = append(ids, row.ID)
				}
				bs[r.Backends[bi].Name] = true
			}
		}
	}
	for b := range bs {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	return ids, backends
}

// reproduceCommand renders the command line of this run without any secret: a connection
// string is shown as a placeholder.
func reproduceCommand(backends []string, o runOptions) string {
	parts := []string{"conform", "run"}
	for _, b := range backends {
		if strings.Contains(b, "=") {
			b = framework.BackendName(b) + "='<connection string>'"
		}
		parts = append(parts, "--backend", b)
	}
	if o.labelFilter != "" {
		parts = append(parts, "--label-filter", "'"+o.labelFilter+"'")
	}
	if o.profile != "" {
		parts = append(parts, "--profile", o.profile)
	}
	return strings.Join(parts, " ")
}

func runChild(self, backend string, o runOptions, filter, command, rawDir, runID string, p *progress, children *backendProcesses) (report.Run, int) {
	name := framework.BackendName(backend)
	safe := sanitizeName(name)
	rawPath := filepath.Join(rawDir, safe+".json")
	_ = os.Remove(rawPath)
	_ = os.Remove(corpusPath(rawPath))
	args := []string{"run-backend", "--raw-out", rawPath, "--label-filter", filter, "--profile", o.profile,
		"--spec-timeout", o.specTimeout.String(), "--command", command}
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
		args = append(args, "--record", filepath.Join(o.record, safe))
	}
	if o.noCorpus {
		args = append(args, "--no-corpus")
	}
	c := exec.Command(self, args...)
	c.Env = append(os.Environ(), childBackendEnv+"="+backend, "CONFORM_RUN_ID="+runID)
	ownProcessGroup(c)
	logFile, err := os.Create(filepath.Join(rawDir, safe+".log"))
	if err != nil {
		return report.Run{StartError: "create log: " + err.Error()}, exitUsage
	}
	defer logFile.Close()
	c.Stdout = logFile
	stderr, err := c.StderrPipe()
	if err != nil {
		return report.Run{StartError: err.Error()}, exitUsage
	}
	p.start(name)
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
		fmt.Fprintln(logFile, line)
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
	p.done(name, code)
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

// progress prints, for each backend, how many specs are done of how many, and failures as
// they happen.
type progress struct {
	mu     sync.Mutex
	w      io.Writer
	total  map[string]int
	done_  map[string]int
	failed map[string]int
	step   map[string]int
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, total: map[string]int{}, done_: map[string]int{}, failed: map[string]int{}, step: map[string]int{}}
}

func (p *progress) start(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%s] starting\n", name)
}

func (p *progress) event(name string, e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case "total":
		p.total[name] = e.Total
		fmt.Fprintf(p.w, "[%s] %d specs to run\n", name, e.Total)
	case "spec":
		p.done_[name]++
		if e.Failure != "" {
			p.failed[name]++
			fmt.Fprintf(p.w, "[%s] FAIL %s: %s\n        %s\n", name, e.Rule, e.Text, e.Failure)
		}
		total := p.total[name]
		if total > 0 {
			pct := p.done_[name] * 10 / total
			if pct > p.step[name] {
				p.step[name] = pct
				fmt.Fprintf(p.w, "[%s] %d/%d specs done, %d failed\n", name, p.done_[name], total, p.failed[name])
			}
		}
	}
}

func (p *progress) done(name string, code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "[%s] finished: %d specs, %d failed (exit %d)\n", name, p.done_[name], p.failed[name], code)
}

func printSummary(w io.Writer, r report.Report, dir string) {
	fmt.Fprintln(w)
	for _, b := range r.Backends {
		c := b.Counts
		fmt.Fprintf(w, "%-16s %-18s passed %d, failed %d, errors %d, expected failures %d, documented differences %d, skipped %d\n",
			b.Name, b.Verdict, c.Passed, c.Failed, c.Errors, c.ExpectedFailures, c.DocumentedDiffs, c.SkippedCapability)
	}
	fmt.Fprintf(w, "\nReport: %s\n", filepath.Join(dir, report.FileMarkdown))
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

// suiteNodeFailed reports whether a suite-level node of run (BeforeSuite, AfterSuite, a
// reporting node) failed: the report's rule cells show only specs.
func suiteNodeFailed(run report.Run) bool {
	for _, s := range run.Ginkgo.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt && s.State.Is(types.SpecStateFailureStates) {
			return true
		}
	}
	return false
}

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
