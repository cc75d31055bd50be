package framework

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
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
		ginkgo.Describe(backendContainerPrefix+name+"]", ginkgo.Label(LabelBackend+name), func() {
			for _, a := range areas {
				f := &F{target: t}
				ginkgo.Describe(a.text, append(append([]any(nil), a.decorators...), func() { a.body(f) })...)
			}
		})
	}
	ginkgo.AfterSuite(func() {
		for _, t := range built {
			if err := t.close(); err != nil {
				ginkgo.GinkgoWriter.Printf("close backend %s: %v\n", t.name, err)
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
				if s.State != types.SpecStatePassed || hasEntry(s, EntryExpected) {
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

func hasEntry(s types.SpecReport, name string) bool {
	for _, e := range s.ReportEntries {
		if e.Name == name {
			return true
		}
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
