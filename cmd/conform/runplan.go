package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/report"
)

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

// planRun validates the options and decides what runs, before anything is started or
// written: a mistake is one line and exit status 2.
func planRun(o runOptions) (runPlan, error) {
	p := runPlan{o: o, filter: o.labelFilter}
	if err := p.checkFlags(); err != nil {
		return p, err
	}
	p.backends = o.backends
	p.usingDefault = len(p.backends) == 0
	if o.rerunFailed != "" {
		if done, err := p.planRerun(); done || err != nil {
			return p, err
		}
	}
	if p.usingDefault {
		p.backends = defaultBackends
	}
	if err := p.checkBackends(); err != nil {
		return p, err
	}
	if o.baselineDir == "" && (o.updateBaseline || isDir(defaultBaselineDir)) {
		p.o.baselineDir = defaultBaselineDir
	}
	p.command = reproduceCommand(p.backends, o, p.filter)
	return p, nil
}

// checkFlags refuses flags out of range and sets the suite timeout's default.
func (p *runPlan) checkFlags() error {
	o := p.o
	switch o.profile {
	case "", "storage", "cosmos":
	default:
		return usageErr("--profile must be storage or cosmos, not %q", o.profile)
	}
	if o.parallel < 0 {
		return usageErr("--parallel must be at least 1 (or 0 for the default)")
	}
	if o.backendsAtOnce < 1 {
		return usageErr("--parallel-backends must be at least 1")
	}
	if o.retryErrors < 0 {
		return usageErr("--retry-errors must be 0 or more")
	}
	switch {
	case o.suiteTimeout < 0:
		return usageErr("--suite-timeout must be more than 0")
	case o.suiteTimeout == 0:
		p.o.suiteTimeout = defaultSuiteTimeout
	}
	if o.labelFilter != "" {
		if _, err := types.ParseLabelFilter(o.labelFilter); err != nil {
			return usageErr("--label-filter %q is not a valid label expression: %s", o.labelFilter, firstLine(ansi.ReplaceAllString(err.Error(), "")))
		}
	}
	return nil
}

// planRerun plans --rerun-failed: the earlier run's failed rules as the filter, its raw
// results to merge with, and, when no backend was given, its backends. done is true when
// nothing is left to run (p.nothing says why).
func (p *runPlan) planRerun() (done bool, err error) {
	o := p.o
	prev, err := report.ReadJSON(filepath.Join(o.rerunFailed, report.FileJSON))
	if err != nil {
		return true, usageErr("--rerun-failed: %v", err)
	}
	ids, names := failedRules(prev)
	if len(ids) == 0 {
		for _, b := range prev.Backends {
			if b.Interrupted {
				// Every selected spec finished, but the run stopped after them: nothing
				// to re-run makes it finish, and its verdict stands.
				return true, &exitError{code: exitInterrupted, msg: fmt.Sprintf("nothing in %s to re-run, but the run of %s did not finish (%s): run it again",
					o.rerunFailed, b.Name, strings.Join(b.StoppedBy, "; "))}
			}
		}
		p.nothing = fmt.Sprintf("Nothing failed in %s.", o.rerunFailed)
		return true, nil
	}
	p.earlier = map[string]report.Run{}
	for _, b := range prev.Backends {
		raw, err := readEarlierRaw(filepath.Join(o.rerunFailed, "raw"), b.Name)
		if err != nil {
			return true, usageErr("--rerun-failed: the raw result of %s is missing, so the earlier report cannot be merged: %v", b.Name, err)
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
	if !p.usingDefault {
		return false, nil
	}
	p.backends, p.usingDefault = nil, false
	for _, n := range names {
		arg := p.earlier[n].Argument
		if arg == "" && all.Validate(n) == nil {
			arg = n // a report written before arguments were kept: a built-in name
		}
		if arg == "" {
			return true, usageErr("--rerun-failed: backend %s was given as a connection string, which conform does not keep; give it again: --backend %s=env:VARIABLE", n, n)
		}
		p.backends = append(p.backends, arg)
	}
	return false, nil
}

// checkBackends refuses a backend named twice, one that does not open, a filter that
// selects nothing on one, and --record of a backend that cannot be recorded.
func (p *runPlan) checkBackends() error {
	seen := map[string]bool{}
	for _, b := range p.backends {
		n := framework.BackendName(b)
		if n == "" || seen[n] {
			return usageErr("backend %q is empty or named twice", n)
		}
		seen[n] = true
		if err := all.Validate(b); err != nil {
			return usageErr("%v", err)
		}
		if p.filter != "" && selectedRules(p.filter, n) == 0 {
			return usageErr("--label-filter %q selects no spec on backend %s", p.o.labelFilter, n)
		}
	}
	if p.o.record != "" {
		for _, b := range p.backends {
			if err := recordable(b); err != nil {
				return usageErr("--record: %v", err)
			}
		}
	}
	return nil
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
