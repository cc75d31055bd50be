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
	"github.com/tableconform/conform/suites/verdict"
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

// notingMatcher never matches; its failure message announces itself as a failed
// precondition of rule (NoteFailedPrecondition), as an entity comparison that differs only by
// a type's round trip does.
type notingMatcher struct{ rule, message string }

func (m notingMatcher) Match(any) (bool, error) { return false, nil }

func (m notingMatcher) FailureMessage(any) string {
	NoteFailedPrecondition(m.rule, "read the entity back", m.message)
	return m.message
}

func (m notingMatcher) NegatedFailureMessage(any) string { return m.message }

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
		{Rule: rule, Spec: specText("flaky without a signature"), Evidence: "sometimes", Flaky: true, Reason: "clock"},
		{Rule: rule, Spec: specText("expected 409 then another failure"), Evidence: "409", Signature: fixtures.Signature{Status: 409, Code: "EntityAlreadyExists"}},
		{Rule: rule, Spec: specText("precondition listed"), Evidence: "blocked", Blocked: "tables.create.listed", Signature: fixtures.Signature{Status: 400, Code: "X"}},
	}
	data, _ := json.Marshal(fixtures.Baseline{Backend: "fake", Version: "1", Expected: entries})
	if err := os.WriteFile(filepath.Join(dir, fixtures.BaselineFile("fake-kind", "1")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	x400 := &spec.Error{Status: 400, Code: "X"}
	backend := refusingBackend{answer: map[string]error{
		"listed": x400, "changed": &spec.Error{Status: 500, Code: "InternalError"}, "flaky-failure": x400,
		"transport": &driver.TransportError{Op: "insert", Err: context.DeadlineExceeded},
		"conflict":  &spec.Error{Status: 409, Code: "EntityAlreadyExists"},
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
		f.It(rule, "flaky without a signature", insert("changed"))
		f.It(rule, "expected 409 then another failure", func(ctx context.Context) {
			_, err := f.Backend().InsertEntity(ctx, "t", api.NewEntity("p", "conflict", nil))
			gomega.Expect(err).To(gomega.HaveOccurred())
			_, err = f.Backend().InsertEntity(ctx, "t", api.NewEntity("p", "ok", nil))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect("changed").To(gomega.Equal("unchanged"), "the refused insert changed the entity")
		})
		precondition := func(ctx context.Context) {
			f.Requires("tables.create.listed", "create the spec's table", func() {
				_, err := f.Backend().InsertEntity(ctx, "t", api.NewEntity("p", "listed", nil))
				gomega.Expect(err).NotTo(gomega.HaveOccurred())
			})
			gomega.Expect("never").To(gomega.Equal("reached"))
		}
		f.It(rule, "precondition", precondition)
		f.It(rule, "precondition listed", precondition)
		// Issue 31, item 8: a failure in a named check carries the check's name; one after
		// the check ended does not.
		f.It(rule, "named check", func(context.Context) {
			f.Check(spec.CheckOrder, func() { gomega.Expect("b a").To(gomega.Equal("a b")) })
		})
		f.It(rule, "after a named check", func(context.Context) {
			f.Check(spec.CheckOrder, func() { gomega.Expect("a b").To(gomega.Equal("a b")) })
			gomega.Expect("a").To(gomega.Equal("a b"))
		})
		// Issue 30: a failure an assertion announces as a precondition's blocks the spec,
		// unless that precondition was checked and held earlier in the spec, or the note was
		// for another failure.
		f.It(rule, "noted precondition", func(context.Context) {
			gomega.Expect("got").To(notingMatcher{rule: "types.int32.round-trip", message: "V came back as an Int64"})
		})
		f.It(rule, "noted precondition that held", func(context.Context) {
			f.Requires("types.int32.round-trip", "probe an Int32", func() {})
			gomega.Expect("got").To(notingMatcher{rule: "types.int32.round-trip", message: "V came back as an Int64"})
		})
		f.It(rule, "noted for another failure", func(context.Context) {
			NoteFailedPrecondition("types.int32.round-trip", "read the entity back", "another failure")
			gomega.Expect("a").To(gomega.Equal("b"))
		})
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
		res, _ := ResultOf(s)
		d := verdict.Decide(res, spec.Must, verdict.Storage, BaselineOf(s))
		outcome[s.LeafNodeText] = s.State.String() + " " + string(d.Outcome)
		if res.Check != "" {
			outcome[s.LeafNodeText] += " in " + res.Check
		}
	}
	want := map[string]string{
		"listed failure":  "passed expected-failure",
		"changed failure": "failed fail",
		"flaky pass":      "passed pass", // a pass with a note: issue 31, item 10
		"flaky failure":   "passed flaky",
		"unexpected pass": "failed unexpected-pass",
		"transport error": "failed error",
		"stale":           "reported",
		// Issue 20, item 5: a flaky entry without a signature accepts no failure, and a
		// 409 the spec expected does not stand for a later failure.
		"flaky without a signature":         "failed fail",
		"expected 409 then another failure": "failed fail",
		// Items 8 and 9: a failed precondition blocks the spec, never fails it.
		"precondition":        "failed blocked",
		"precondition listed": "passed blocked",
		"named check":         "failed fail in " + spec.CheckOrder,
		"after a named check": "failed fail",
		// Issue 30.
		"noted precondition":           "failed blocked",
		"noted precondition that held": "failed fail",
		"noted for another failure":    "failed fail",
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
