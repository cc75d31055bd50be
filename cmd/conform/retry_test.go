package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
)

func retrySpec(rule, text string, transport bool) types.SpecReport {
	s := types.SpecReport{ContainerHierarchyTexts: []string{"[backend x]", "Area"}, ContainerHierarchyLabels: [][]string{{framework.LabelBackend + "x"}, {rule}},
		LeafNodeText: text, LeafNodeType: types.NodeTypeIt, State: types.SpecStatePassed}
	if transport {
		s.State = types.SpecStateFailed
		s.Failure = types.Failure{Message: "unexpected EOF"}
		s.ReportEntries = types.ReportEntries{{Name: framework.EntryTransport, Value: types.WrapEntryValue(framework.TransportEntry{Op: "InsertEntity", Error: "unexpected EOF"})}}
	}
	return s
}

// Issue 20, item 14: --retry-errors creates its raw folder, re-runs the rules with specs
// that got no answer, and keeps the first pass: only the specs without an answer take the
// retry's result; a retry that cannot run leaves the first pass as it was.
func TestRetryErrorsKeepsTheFirstPass(t *testing.T) {
	rule := "modify.insert.stores"
	if _, ok := spec.LookupRule(rule); !ok {
		t.Fatalf("no rule %s", rule)
	}
	first := report.Run{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		retrySpec(rule, "a", false), retrySpec(rule, "b", true),
	}}}
	retried := report.Run{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		retrySpec(rule, "a", true), retrySpec(rule, "b", false), // a loses its answer this time
	}}}
	raw := filepath.Join(t.TempDir(), "raw")
	var w bytes.Buffer
	p := runPlan{o: runOptions{retryErrors: 1}, backends: []string{"x"}}
	var dirs []string
	rerun := func(i int, filter, dir string) report.Run {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("the retry's raw folder does not exist: %v", err)
		}
		if !strings.Contains(filter, rule) {
			t.Errorf("filter %q", filter)
		}
		dirs = append(dirs, dir)
		return retried
	}
	runs := retryErrorsWith(p, []report.Run{first}, raw, &w, func() bool { return false }, rerun)
	b := report.Build(runs, spec.Rules(), report.Meta{}).Backends[0]
	if len(dirs) != 1 || b.Counts.Errors != 0 || b.Counts.Passed != 2 {
		t.Fatalf("after the retry: %d reruns, counts %+v\n%s", len(dirs), b.Counts, w.String())
	}

	failing := func(int, string, string) report.Run {
		return report.Run{Backend: driver.Info{Name: "x"}, StartError: "create log: no such file or directory"}
	}
	runs = retryErrorsWith(p, []report.Run{first}, raw, &w, func() bool { return false }, failing)
	if b := report.Build(runs, spec.Rules(), report.Meta{}).Backends[0]; b.StartError != "" || b.Counts.Passed != 1 || b.Counts.Errors != 1 {
		t.Fatalf("a retry that could not run changed the first pass: %q %+v", b.StartError, b.Counts)
	}
	if !strings.Contains(w.String(), "the first pass stands") {
		t.Errorf("the failed retry was not reported:\n%s", w.String())
	}
}

// A backend that stopped answering is not retried by --retry-errors: its errors are its
// going, and a retry would wait out every spec again (issue 31).
func TestRetryErrorsLeavesABackendThatStoppedAnswering(t *testing.T) {
	rule := "modify.insert.stores"
	stopped := report.Run{Backend: driver.Info{Name: "x"}, StoppedAnswering: time.Now(), Ginkgo: types.Report{SpecReports: types.SpecReports{
		retrySpec(rule, "a", true),
	}}}
	var w bytes.Buffer
	p := runPlan{o: runOptions{retryErrors: 2}, backends: []string{"x"}}
	reruns := 0
	rerun := func(int, string, string) report.Run { reruns++; return report.Run{} }
	retryErrorsWith(p, []report.Run{stopped}, filepath.Join(t.TempDir(), "raw"), &w, func() bool { return false }, rerun)
	if reruns != 0 || strings.Count(w.String(), "[x] not retried: it stopped answering") != 1 {
		t.Fatalf("%d reruns of a backend that stopped answering:\n%s", reruns, w.String())
	}
}
