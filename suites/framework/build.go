package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/verdict"
)

const backendContainerPrefix = "[backend "

var built []*backendTarget

// Build declares the spec tree: for each backend of cfg, one container labelled
// "backend:NAME" holding every container that spec packages declared. Call it once, before
// RunSpecs.
func Build(cfg Config) error {
	if len(built) > 0 {
		return fmt.Errorf("framework.Build called twice")
	}
	if len(cfg.Backends) == 0 {
		return fmt.Errorf("no backend selected")
	}
	// A failed assertion concludes its spec through verdict.Decide (runRule).
	gomega.RegisterFailHandler(failHandler)
	c := cfg
	setupPolicy = retryPolicy(cfg)
	seen := map[string]bool{}
	registryMu.Lock()
	areas := append([]area(nil), registry...)
	registryMu.Unlock()
	for _, arg := range cfg.Backends {
		name := BackendName(arg)
		if seen[name] {
			return fmt.Errorf("backend %q selected twice", name)
		}
		seen[name] = true
		t := &backendTarget{arg: arg, name: name, cfg: &c}
		built = append(built, t)
		decorators := []any{ginkgo.Label(LabelBackend + name)}
		if cfg.Retries != nil {
			if n := cfg.Retries(name); n > 0 {
				decorators = append(decorators, ginkgo.FlakeAttempts(n+1))
			}
		}
		ginkgo.Describe(backendContainerPrefix+name+"]", append(decorators, func() {
			for _, a := range areas {
				f := &F{target: t}
				ginkgo.Describe(a.text, append(append([]any(nil), a.decorators...), func() { a.body(f) })...)
			}
		})...)
	}
	ginkgo.AfterSuite(func() {
		for _, t := range built {
			if err := t.close(); err != nil {
				ginkgo.GinkgoWriter.Printf("close backend %s: %v\n", t.name, err)
			}
		}
	})
	ginkgo.ReportAfterSuite("conform retries", func(r ginkgo.Report) {
		retried := RetriedSpecs(r)
		if len(retried) == 0 {
			return
		}
		text := strings.Join(retried, "\n") + "\n"
		fmt.Fprintf(os.Stderr, "conform: %d specs passed only when retried:\n%s", len(retried), text)
		if c.RetryLog != "" {
			if err := appendFile(c.RetryLog, text); err != nil {
				fmt.Fprintf(os.Stderr, "conform: write the retry log: %v\n", err)
			}
		}
	})
	ginkgo.ReportAfterSuite("conform baselines", func(r ginkgo.Report) {
		problems := append(UnexpectedPasses(r, built), StaleEntries(r, built)...)
		if len(problems) > 0 {
			ginkgo.Fail("baseline problems:\n" + strings.Join(problems, "\n"))
		}
	})
	return nil
}

// RetriedSpecs lists the specs of r that ran more than once (Config.Retries), one line
// each: the backend and spec, how many attempts, and the first failure.
func RetriedSpecs(r ginkgo.Report) []string {
	var out []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || s.NumAttempts < 2 {
			continue
		}
		first := s.Failure.Message
		if len(s.AdditionalFailures) > 0 {
			first = s.AdditionalFailures[0].Failure.Message
		}
		backend := ""
		if len(s.ContainerHierarchyTexts) > 0 {
			backend = s.ContainerHierarchyTexts[0] + " "
		}
		out = append(out, fmt.Sprintf("%s%s: %s after %d attempts; first: %s", backend, SpecText(s), s.State, s.NumAttempts, AssertionLine(strings.TrimPrefix(first, "Failure recorded during attempt 1:\n"))))
	}
	return out
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// UnexpectedPasses lists rule-level baseline entries (entries without Spec) whose rule ran
// on their backend and never failed.
func UnexpectedPasses(r ginkgo.Report, targets []*backendTarget) []string {
	var problems []string
	for _, t := range targets {
		if t.target == nil {
			continue
		}
		for _, e := range t.baseline.Expected {
			if e.Spec != "" || e.Flaky {
				continue
			}
			ran, failed := false, false
			for _, s := range r.SpecReports {
				if s.LeafNodeType != types.NodeTypeIt || !hasLabel(s, LabelBackend+t.name) || !hasLabel(s, e.Rule) {
					continue
				}
				if s.State == types.SpecStateSkipped || s.State == types.SpecStatePending {
					continue
				}
				ran = true
				if res, ok := ResultOf(s); s.State != types.SpecStatePassed || ok && res.State != verdict.StatePassed {
					failed = true
				}
			}
			if ran && !failed {
				problems = append(problems, fmt.Sprintf("the baseline of %s expects rule %s to fail (%s), but every spec of it passed; remove the entry from %s",
					t.name, e.Rule, e.Evidence, t.baselineFile))
			}
		}
	}
	return problems
}

// StaleEntries lists baseline entries that match no spec of their backend's tree (a spec
// renamed or removed, a rule that no longer exists): a stale entry could hide nothing, but
// it says something untrue, so it fails the run.
func StaleEntries(r ginkgo.Report, targets []*backendTarget) []string {
	var problems []string
	for _, t := range targets {
		if t.target == nil {
			continue
		}
		specs := map[string]bool{}
		rules := map[string]bool{}
		for _, s := range r.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt || !hasLabel(s, LabelBackend+t.name) {
				continue
			}
			for _, l := range s.Labels() {
				rules[l] = true
				specs[l+"\x00"+SpecText(s)] = true
			}
		}
		for _, e := range t.baseline.Expected {
			if rules[e.Rule] && (e.Spec == "" || specs[e.Rule+"\x00"+e.Spec]) {
				continue
			}
			problems = append(problems, fmt.Sprintf("stale baseline entry in %s: rule %s, spec %q matches no spec of %s; remove or update it",
				t.baselineFile, e.Rule, e.Spec, t.name))
		}
	}
	return problems
}

func hasLabel(s types.SpecReport, label string) bool {
	for _, l := range s.Labels() {
		if l == label {
			return true
		}
	}
	return false
}

// ResultOf returns what happened to a spec as its runner recorded it (EntryResult), and
// whether it did (a spec that never reached its body, or failed outside it, has none).
func ResultOf(s types.SpecReport) (verdict.Result, bool) {
	// A spec retried (Config.Retries) carries one result per attempt: the last one counts.
	var r verdict.Result
	found := false
	for i := len(s.ReportEntries) - 1; i >= 0 && !found; i-- {
		if s.ReportEntries[i].Name == EntryResult {
			found = entryValue(types.SpecReport{ReportEntries: s.ReportEntries[i : i+1]}, EntryResult, &r)
		}
	}
	return r, found
}

// BaselineOf returns the baseline entry that listed a spec, or nil.
func BaselineOf(s types.SpecReport) *fixtures.ExpectedFailure {
	var e fixtures.ExpectedFailure
	if entryValue(s, EntryBaseline, &e) {
		return &e
	}
	return nil
}

// entryValue decodes the first entry named name into v and reports whether there was one,
// whether the report was decoded from a file or is the live one.
func entryValue(s types.SpecReport, name string, v any) bool {
	for _, e := range s.ReportEntries {
		if e.Name != name {
			continue
		}
		data := []byte(e.Value.AsJSON)
		if len(data) == 0 {
			var err error
			if data, err = json.Marshal(e.Value.GetRawValue()); err != nil {
				return false
			}
		}
		return json.Unmarshal(data, v) == nil
	}
	return false
}

// RunSuite runs every declared spec against the backends of cfg from `go test`. args are
// Ginkgo's configurations (types.SuiteConfig, types.ReporterConfig), as for ginkgo.RunSpecs.
func RunSuite(t *testing.T, description string, cfg Config, args ...any) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	if err := Build(cfg); err != nil {
		t.Fatalf("conform: %v", err)
	}
	return ginkgo.RunSpecs(t, description, args...)
}
