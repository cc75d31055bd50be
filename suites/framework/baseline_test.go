package framework

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// refusingBackend answers every insert with the error in answer (nil: success); other
// operations are not used by these specs.
type refusingBackend struct {
	api.Backend
	answer map[string]error // by RowKey
}

func (b refusingBackend) InsertEntity(_ context.Context, _ string, e api.Entity) (api.Entity, error) {
	return e, b.answer[e.RowKey]
}

type quietT struct{ failed bool }

func (t *quietT) Fail() { t.failed = true }

// The baseline machinery, run as a real suite against a fake backend: a listed failure
// with the listed signature is intercepted (expected failure); one that fails with another
// status is a changed failure; a listed spec that passes is an unexpected pass unless its
// entry is flaky; a transport error is never intercepted; an entry matching no spec is
// stale and fails the suite.
func TestBaselineInterception(t *testing.T) {
	const rule = "modify.insert.stores"
	specText := func(s string) string { return "baseline machinery " + s }
	dir := t.TempDir()
	entries := []fixtures.ExpectedFailure{
		{Rule: rule, Spec: specText("listed failure"), Evidence: "400 X", Signature: fixtures.Signature{Status: 400, Code: "X"}},
		{Rule: rule, Spec: specText("changed failure"), Evidence: "400 X", Signature: fixtures.Signature{Status: 400, Code: "X"}},
		{Rule: rule, Spec: specText("flaky pass"), Evidence: "400 X", Flaky: true, Reason: "clock"},
		{Rule: rule, Spec: specText("flaky failure"), Evidence: "400 X", Signature: fixtures.Signature{Status: 400, Code: "X"}, Flaky: true, Reason: "clock"},
		{Rule: rule, Spec: specText("unexpected pass"), Evidence: "400 X"},
		{Rule: rule, Spec: specText("transport error"), Evidence: "400 X"},
		{Rule: rule, Spec: specText("no such spec"), Evidence: "400 X"},
	}
	data, _ := json.Marshal(fixtures.Baseline{Backend: "fake", Version: "1", Expected: entries})
	if err := os.WriteFile(filepath.Join(dir, fixtures.BaselineFile("fake-kind", "1")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	x400 := &spec.Error{Status: 400, Code: "X"}
	backend := refusingBackend{answer: map[string]error{
		"listed": x400, "changed": &spec.Error{Status: 500, Code: "InternalError"}, "flaky-failure": x400,
		"transport": &driver.TransportError{Op: "insert", Err: context.DeadlineExceeded},
	}}
	Describe("baseline machinery", func(f *F) {
		insert := func(rk string) func(ctx context.Context) {
			return func(ctx context.Context) {
				_, err := f.Backend().InsertEntity(ctx, "t", api.NewEntity("p", rk, nil))
				gomega.Expect(err).NotTo(gomega.HaveOccurred())
			}
		}
		f.It(rule, "listed failure", insert("listed"))
		f.It(rule, "changed failure", insert("changed"))
		f.It(rule, "flaky pass", insert("ok"))
		f.It(rule, "flaky failure", insert("flaky-failure"))
		f.It(rule, "unexpected pass", insert("ok"))
		f.It(rule, "transport error", insert("transport"))
	})
	gomega.RegisterFailHandler(ginkgo.Fail)
	// The backend is found by its kind: no file has its name.
	open := func(context.Context, string) (*Target, error) {
		return &Target{Backend: backend, Info: driver.Info{Name: "fake", Kind: "fake-kind", Version: "1"}}, nil
	}
	if err := Build(Config{Backends: []string{"fake"}, Open: open, BaselineDir: dir}); err != nil {
		t.Fatal(err)
	}
	var got types.Report
	ginkgo.ReportAfterSuite("capture", func(r ginkgo.Report) { got = r })
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	reporterConfig.Succinct = true
	qt := &quietT{}
	ginkgo.RunSpecs(qt, "baseline machinery", suiteConfig, reporterConfig)

	outcome := map[string]string{}
	for _, s := range got.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			if s.Failed() && strings.Contains(s.Failure.Message, "stale baseline entry") && strings.Contains(s.Failure.Message, "no such spec") {
				outcome["stale"] = "reported"
			}
			continue
		}
		var names []string
		for _, e := range s.ReportEntries {
			if strings.HasPrefix(e.Name, "conform.") && e.Name != EntryRule && e.Name != EntryHistory && e.Name != EntrySignature && e.Name != EntryErrorAnswers {
				names = append(names, e.Name)
			}
		}
		outcome[s.LeafNodeText] = s.State.String() + " " + strings.Join(names, ",")
	}
	want := map[string]string{
		"listed failure":  "passed " + EntryExpected,
		"changed failure": "failed " + EntryChangedFailure,
		"flaky pass":      "passed " + EntryFlaky,
		"flaky failure":   "passed " + EntryFlaky + "," + EntryExpected,
		"unexpected pass": "failed " + EntryUnexpectedPass,
		"transport error": "failed " + EntryTransport,
		"stale":           "reported",
	}
	for k, w := range want {
		if outcome[k] != w {
			t.Errorf("%s: got %q, want %q", k, outcome[k], w)
		}
	}
	if !qt.failed {
		t.Error("the suite did not fail")
	}
}
