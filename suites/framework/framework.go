package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
)

// Report entry names the framework attaches to specs; suites/report reads them.
const (
	EntryRule     = "conform.rule"
	EntryBackend  = "conform.backend"
	EntryChoice   = "conform.choice"
	EntryExpected = "conform.expected-failure"
	EntryHistory  = "conform.history"
	EntryInfo     = "conform.info"
)

// Label prefixes.
const (
	LabelBackend = "backend:"
	LabelLevel   = "level:"
	LabelArea    = "area:"
	LabelFeature = "feature:"
)

// TablePrefix starts every table name a run creates; RunPrefix adds the run's id.
const TablePrefix = "cf"

var runID = newRunID()

func newRunID() string {
	if id := os.Getenv("CONFORM_RUN_ID"); id != "" {
		return strings.ToLower(id)
	}
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b)
}

// RunPrefix is the prefix of every table this run creates ("cf" + the run id). A run
// creates, changes and deletes only tables whose names start with it.
func RunPrefix() string { return TablePrefix + runID }

type area struct {
	text       string
	body       func(f *F)
	decorators []any
}

var (
	registryMu sync.Mutex
	registry   []area
)

// Describe declares a container of specs for one documented operation or pattern. body is
// called once per selected backend, at tree construction, with that backend's F.
// Decorators are Ginkgo decorators (Label, Ordered, Serial, ...).
func Describe(text string, body func(f *F), decorators ...any) bool {
	registryMu.Lock()
	defer registryMu.Unlock()
	registry = append(registry, area{text: text, body: body, decorators: decorators})
	return true
}

// F is a spec's handle on the backend it runs against.
type F struct {
	target *backendTarget

	mu       sync.Mutex
	recorder *record.Recorder
}

// Name returns the backend's name as selected.
func (f *F) Name() string { return f.target.name }

// Profile returns the expectation profile ("storage" when none was given).
func (f *F) Profile() string {
	if f.target.cfg.Profile == "" {
		return "storage"
	}
	return f.target.cfg.Profile
}

// Backend returns the backend for the running spec, wrapped in a recorder whose history is
// attached to the spec's report when it fails. It fails the spec when the backend cannot be
// opened.
func (f *F) Backend() driver.Backend {
	ginkgo.GinkgoHelper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recorder == nil {
		t, err := f.target.open()
		if err != nil {
			ginkgo.Fail(fmt.Sprintf("conform:backend-unavailable: %v", err))
		}
		f.recorder = record.New(t.Backend)
	}
	return f.recorder.Capable()
}

// Info returns the opened backend's description.
func (f *F) Info() driver.Info {
	ginkgo.GinkgoHelper()
	if _, err := f.target.open(); err != nil {
		ginkgo.Fail(fmt.Sprintf("conform:backend-unavailable: %v", err))
	}
	return f.target.target.Info
}

// Raw returns the raw-HTTP capability of the backend, or skips the spec without it.
func (f *F) Raw() driver.RawHTTP {
	ginkgo.GinkgoHelper()
	raw, ok := f.Backend().(driver.RawHTTP)
	if !ok {
		ginkgo.Skip("capability missing: " + string(driver.CapRawHTTP))
	}
	return raw
}

// SAS returns the SAS capability of the backend, or skips the spec without it.
func (f *F) SAS() driver.SASIssuer {
	ginkgo.GinkgoHelper()
	s, ok := f.Backend().(driver.SASIssuer)
	if !ok {
		ginkgo.Skip("capability missing: " + string(driver.CapSAS))
	}
	return s
}

// TableName returns a new unique table name for this run without creating it. The spec
// that creates a table with it must delete it (or use NewTable).
func (f *F) TableName() string {
	n := f.target.tables.Add(1)
	return fmt.Sprintf("%sp%dt%d", RunPrefix(), ginkgo.GinkgoParallelProcess(), n)
}

// NewTable creates a table with a unique name and deletes it when the spec ends (kept when
// the spec failed and Config.KeepFailedTables is set).
func (f *F) NewTable(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	name := f.TableName()
	b := f.Backend()
	err := RetrySetup(ctx, func(ctx context.Context) error { return b.CreateTable(ctx, name) })
	gomega.Expect(err).To(gomega.Succeed(), "create table %s", name)
	f.CleanupTable(name)
	return name
}

// CleanupTable deletes the named table when the spec ends, ignoring "not found".
func (f *F) CleanupTable(name string) {
	if !strings.HasPrefix(name, RunPrefix()) {
		ginkgo.Fail(fmt.Sprintf("conform refuses to clean up table %q: it does not start with this run's prefix %q", name, RunPrefix()))
	}
	ginkgo.DeferCleanup(func(ctx ginkgo.SpecContext) {
		if f.target.cfg.KeepFailedTables && ginkgo.CurrentSpecReport().Failed() {
			ginkgo.GinkgoWriter.Printf("keeping table %s of a failed spec\n", name)
			return
		}
		del := func(ctx context.Context) error { return f.target.target.Backend.DeleteTable(ctx, name) }
		if err := RetrySetup(ctx, del); err != nil {
			if e, ok := driver.AsError(err); ok && e.Status == 404 {
				return
			}
			ginkgo.GinkgoWriter.Printf("clean up table %s: %v\n", name, err)
		}
	}, ginkgo.NodeTimeout(f.specTimeout()))
}

func (f *F) specTimeout() time.Duration {
	if f.target.cfg.SpecTimeout > 0 {
		return f.target.cfg.SpecTimeout
	}
	return DefaultSpecTimeout
}

// Choice records which of the behaviours a MAY rule allows the backend chose; the report
// shows it as information.
func (f *F) Choice(what, chosen string) {
	ginkgo.AddReportEntry(EntryChoice, Choice{What: what, Chosen: chosen}, ginkgo.ReportEntryVisibilityNever)
}

// Choice is the value of an EntryChoice report entry.
type Choice struct {
	What   string `json:"what"`
	Chosen string `json:"chosen"`
}

// RuleEntry is the value of an EntryRule report entry.
type RuleEntry struct {
	ID      string `json:"id"`
	Level   string `json:"level"`
	Area    string `json:"area"`
	Feature string `json:"feature"`
	Text    string `json:"text"`
	Source  string `json:"source"`
}

// ExpectedEntry is the value of an EntryExpected report entry.
type ExpectedEntry struct {
	Rule     string `json:"rule"`
	Evidence string `json:"evidence"`
	Failure  string `json:"failure"`
}

func ruleOf(id string) spec.Rule {
	r, ok := spec.LookupRule(id)
	if !ok {
		panic(fmt.Sprintf("conform: spec declared with unknown rule id %q; add it to reference/spec", id))
	}
	return r
}

func ruleLabels(r spec.Rule) ginkgo.Labels {
	return ginkgo.Label(r.ID, LabelLevel+string(r.Level), LabelArea+string(r.Area), LabelFeature+string(r.FeatureOrCore()))
}

// It declares a spec that checks one rule. body receives a context bounded by the spec
// timeout; pass it to every backend call.
func (f *F) It(ruleID, text string, body func(ctx context.Context), decorators ...any) bool {
	r := ruleOf(ruleID)
	args := append([]any{ruleLabels(r), ginkgo.NodeTimeout(f.specTimeout())}, decorators...)
	args = append(args, func(ctx ginkgo.SpecContext) {
		f.runRule(r, func() { body(ctx) })
	})
	return ginkgo.It(text, args...)
}

// DescribeTable declares a table of specs for one rule, one per entry (boundaries named
// for what they test: "at exactly 1 KiB", "one byte over"). body's first parameter is a
// context.Context; the rest take the entry's parameters.
func (f *F) DescribeTable(ruleID, text string, body any, entries ...any) bool {
	r := ruleOf(ruleID)
	bv := reflect.ValueOf(body)
	bt := bv.Type()
	if bt.Kind() != reflect.Func || bt.NumIn() == 0 || bt.In(0) != reflect.TypeOf((*context.Context)(nil)).Elem() {
		panic(fmt.Sprintf("conform: DescribeTable %q: body must be func(context.Context, ...)", text))
	}
	in := []reflect.Type{reflect.TypeOf((*ginkgo.SpecContext)(nil)).Elem()}
	for i := 1; i < bt.NumIn(); i++ {
		in = append(in, bt.In(i))
	}
	wrapped := reflect.MakeFunc(reflect.FuncOf(in, nil, bt.IsVariadic()), func(args []reflect.Value) []reflect.Value {
		// A table's container takes no NodeTimeout, so the entry's context gets the bound.
		ctx, cancel := context.WithTimeout(args[0].Interface().(ginkgo.SpecContext), f.specTimeout())
		defer cancel()
		args[0] = reflect.ValueOf((context.Context)(ctx))
		f.runRule(r, func() {
			if bt.IsVariadic() {
				bv.CallSlice(args)
			} else {
				bv.Call(args)
			}
		})
		return nil
	})
	args := []any{ruleLabels(r), wrapped.Interface()}
	args = append(args, entries...)
	return ginkgo.DescribeTable(text, args...)
}

// runRule runs a spec's body for rule r: it attaches the rule to the report, turns a
// failure the backend's baseline expects into an expected failure, fails a spec the
// baseline expects to fail that passes, and attaches the call history to failures.
func (f *F) runRule(r spec.Rule, body func()) {
	ginkgo.AddReportEntry(EntryRule, RuleEntry{ID: r.ID, Level: string(r.Level), Area: string(r.Area),
		Feature: string(r.FeatureOrCore()), Text: r.Text, Source: r.Source}, ginkgo.ReportEntryVisibilityNever)
	f.mu.Lock()
	f.recorder = nil
	f.mu.Unlock()
	ginkgo.DeferCleanup(func() {
		f.mu.Lock()
		rec := f.recorder
		f.mu.Unlock()
		if rec != nil && ginkgo.CurrentSpecReport().Failed() {
			ginkgo.AddReportEntry(EntryHistory, rec.History(), ginkgo.ReportEntryVisibilityFailureOrVerbose)
		}
	})
	if _, err := f.target.open(); err != nil {
		ginkgo.Fail(fmt.Sprintf("conform:backend-unavailable: %v", err))
	}
	exp, expected := f.target.baseline.Lookup(r.ID, SpecText(ginkgo.CurrentSpecReport()))
	if !expected {
		body()
		return
	}
	if err := gomega.InterceptGomegaFailure(body); err != nil {
		ginkgo.AddReportEntry(EntryExpected, ExpectedEntry{Rule: r.ID, Evidence: exp.Evidence, Failure: err.Error()},
			ginkgo.ReportEntryVisibilityNever)
		return
	}
	if exp.Spec != "" {
		ginkgo.Fail(fmt.Sprintf("conform:unexpected-pass: the baseline of %s expects this spec of rule %s to fail (%s), but it passed; remove the entry from %s",
			f.target.name, r.ID, exp.Evidence, fixtures.BaselineFile(f.target.target.Info.Name, f.target.target.Info.Version)))
	}
}

// SpecText is a spec's text below its backend container: the identity baselines use.
func SpecText(r ginkgo.SpecReport) string {
	texts := r.ContainerHierarchyTexts
	if len(texts) > 0 && strings.HasPrefix(texts[0], backendContainerPrefix) {
		texts = texts[1:]
	}
	return strings.Join(append(append([]string(nil), texts...), r.LeafNodeText), " ")
}
