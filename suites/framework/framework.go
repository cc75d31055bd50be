package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
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

var (
	runIDPattern = regexp.MustCompile(`^[a-z0-9]{8}$`)
	runID        = newRunID()
)

func newRunID() string {
	// A run id from the environment (conform run passes its own to its backend processes)
	// must keep table names inside RunTablePattern.
	if id := strings.ToLower(os.Getenv("CONFORM_RUN_ID")); runIDPattern.MatchString(id) {
		return id
	}
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return string(b)
}

// RunTablePattern matches exactly the names of the tables conform creates: "cf", a run id
// of 8 lower-case letters or digits, then "p<process>t<n>" (RunTableName) with an optional
// suffix of letters and digits (a spec's variants of its table: "x"+suffix, "Case"), or
// "b<n>" (a benchmark's table). `conform clean` and every delete a run makes are guarded
// by it, so that a user's table such as "cfusers" is never touched.
var RunTablePattern = regexp.MustCompile(`^cf[a-z0-9]{8}(p[0-9]+t[0-9]+[A-Za-z0-9]*|b[0-9]+)$`)

// IsRunTable reports whether name is the name of a table some conform run created.
func IsRunTable(name string) bool { return RunTablePattern.MatchString(name) }

// IsThisRunsTable reports whether name is the name of a table this run created.
func IsThisRunsTable(name string) bool {
	return IsRunTable(name) && strings.HasPrefix(name, RunPrefix())
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
func (f *F) Backend() api.Backend {
	ginkgo.GinkgoHelper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recorder == nil {
		t, err := f.target.open()
		if err != nil {
			backendUnavailable(err)
		}
		f.recorder = record.NewWithRetry(t.Backend, retryPolicy(*f.target.cfg))
		record.Track(f.recorder)
	}
	return f.recorder.Capable()
}

// Info returns the opened backend's description.
func (f *F) Info() driver.Info {
	ginkgo.GinkgoHelper()
	if _, err := f.target.open(); err != nil {
		backendUnavailable(err)
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

// SendUnsigned sends a hand-made request as it is, without the credentials the raw
// capability's Do would add, through the spec's recorder (retried and recorded as every
// call of the spec).
func (f *F) SendUnsigned(req *http.Request) (*http.Response, error) {
	ginkgo.GinkgoHelper()
	f.Backend()
	return f.currentRecorder().SendUnsigned(req)
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

// tableSeq numbers the tables of this process, across all its backends: two backends of
// one run may be the same service behind different endpoints.
var tableSeq atomic.Int64

// tableSlot is the process part of this process's table names: CONFORM_TABLE_SLOT, which
// `conform run` sets to a different number for each backend process of a run, or else
// Ginkgo's parallel process number.
func tableSlot() int {
	if n, err := strconv.Atoi(os.Getenv("CONFORM_TABLE_SLOT")); err == nil && n > 0 {
		return n
	}
	return ginkgo.GinkgoParallelProcess()
}

// TableName returns a new unique table name for this run without creating it
// (RunTableName). The spec that creates a table with it must delete it (or use NewTable).
func (f *F) TableName() string {
	return RunTableName(tableSlot(), tableSeq.Add(1))
}

// ProcessTablePrefix is the prefix of every table this process of the run names: "cf", the
// run id, "p", its slot, "t". Only this process creates tables under it.
func ProcessTablePrefix() string { return fmt.Sprintf("%sp%dt", RunPrefix(), tableSlot()) }

// RunTableName is the name of table n of process slot of this run: "cf", the run id, "p",
// slot, "t", n. RunTablePattern matches exactly such names.
func RunTableName(slot int, n int64) string {
	return fmt.Sprintf("%sp%dt%d", RunPrefix(), slot, n)
}

// NewTable creates a table with a unique name and deletes it when the spec ends (kept when
// the spec failed and Config.KeepFailedTables is set).
func (f *F) NewTable(ctx context.Context) string {
	ginkgo.GinkgoHelper()
	name := f.TableName()
	f.CleanupTable(name)                      // registered first: a create whose answer is lost may still have created it
	err := f.Backend().CreateTable(ctx, name) // retried by the recorder
	if isStatus(err, 409) && record.AfterRetryOfApplied(err) {
		err = nil // the lost first attempt created it (issue 20: not a failure of tables.create.listed)
	}
	if err != nil {
		Blocked("tables.create.listed", "create table "+name, err)
	}
	return name
}

// CleanupTable deletes the named table when the spec ends, ignoring "not found".
func (f *F) CleanupTable(name string) {
	if !IsThisRunsTable(name) {
		ginkgo.Fail(fmt.Sprintf("conform refuses to clean up table %q: it is not one of this run's tables (%s, prefix %q)", name, RunTablePattern, RunPrefix()))
	}
	ginkgo.DeferCleanup(func(ctx ginkgo.SpecContext) {
		if f.target.cfg.KeepFailedTables && ginkgo.CurrentSpecReport().Failed() {
			ginkgo.GinkgoWriter.Printf("keeping table %s of a failed spec\n", name)
			return
		}
		if !IsThisRunsTable(name) {
			return
		}
		del := func(ctx context.Context) error { return f.target.target.Backend.DeleteTable(ctx, name) }
		if err := RetrySetup(ctx, del); err != nil && !isStatus(err, 404) {
			// What is left is deleted by the run's sweep of its prefix at its end.
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

// runRule runs a spec's body for rule r: it attaches the rule to the report and, to a
// failure, the call history and typed marks of its failed calls. With a baseline entry for
// the spec, a failure that matches the entry's signature becomes an expected failure, one
// that does not is a changed failure (a new failure, with old and new evidence), a
// transport error stays an error, and a pass fails the spec as an unexpected pass, unless
// the entry is flaky.
func (f *F) runRule(r spec.Rule, body func()) {
	ginkgo.AddReportEntry(EntryRule, RuleEntry{ID: r.ID, Level: string(r.Level), Area: string(r.Area),
		Feature: string(r.FeatureOrCore()), Text: r.Text, Source: r.Source}, ginkgo.ReportEntryVisibilityNever)
	f.mu.Lock()
	f.recorder = nil
	f.mu.Unlock()
	record.Track(nil)
	ginkgo.DeferCleanup(func() {
		if sr := ginkgo.CurrentSpecReport(); sr.Failed() {
			var calls []record.Call
			if rec := f.currentRecorder(); rec != nil {
				calls = rec.Calls()
				ginkgo.AddReportEntry(EntryHistory, rec.History(), ginkgo.ReportEntryVisibilityFailureOrVerbose)
				markCalls(calls)
			}
			ginkgo.AddReportEntry(EntrySignature, FailureSignature(sr.Failure.Message, calls), ginkgo.ReportEntryVisibilityNever)
		}
	})
	if _, err := f.target.open(); err != nil {
		backendUnavailable(err)
	}
	exp, expected := f.target.baseline.Lookup(r.ID, SpecText(ginkgo.CurrentSpecReport()))
	if !expected {
		body()
		return
	}
	if err := gomega.InterceptGomegaFailure(body); err != nil {
		var calls []record.Call
		if rec := f.currentRecorder(); rec != nil {
			calls = rec.Calls()
		}
		if inconclusive(calls) {
			ginkgo.Fail(err.Error()) // no answer: an error, whatever the baseline lists
		}
		got := FailureSignature(err.Error(), calls)
		if !exp.Signature.Matches(got) {
			ginkgo.AddReportEntry(EntryChangedFailure, ChangedFailureEntry{Rule: r.ID, Old: exp.Signature, OldEvidence: exp.Evidence,
				New: got, NewFailure: err.Error()}, ginkgo.ReportEntryVisibilityNever)
			ginkgo.Fail(fmt.Sprintf("the baseline of %s lists this spec as failing with %s (%s), but it failed with %s:\n%s",
				f.target.name, exp.Signature, exp.Evidence, got, err.Error()))
		}
		if exp.Flaky {
			ginkgo.AddReportEntry(EntryFlaky, FlakyEntry{Reason: exp.Reason, Failed: true}, ginkgo.ReportEntryVisibilityNever)
		}
		ginkgo.AddReportEntry(EntryExpected, ExpectedEntry{Rule: r.ID, Evidence: exp.Evidence, Failure: err.Error()},
			ginkgo.ReportEntryVisibilityNever)
		return
	}
	if exp.Flaky {
		ginkgo.AddReportEntry(EntryFlaky, FlakyEntry{Reason: exp.Reason}, ginkgo.ReportEntryVisibilityNever)
		return
	}
	if exp.Spec != "" {
		file := f.target.baselineFile
		ginkgo.AddReportEntry(EntryUnexpectedPass, UnexpectedPassEntry{Rule: r.ID, Evidence: exp.Evidence, Baseline: file},
			ginkgo.ReportEntryVisibilityNever)
		ginkgo.Fail(fmt.Sprintf("the baseline of %s expects this spec of rule %s to fail (%s), but it passed; remove the entry from %s",
			f.target.name, r.ID, exp.Evidence, file))
	}
}

func (f *F) currentRecorder() *record.Recorder {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recorder
}

// SpecText is a spec's text below its backend container: the identity baselines use.
func SpecText(r ginkgo.SpecReport) string {
	texts := r.ContainerHierarchyTexts
	if len(texts) > 0 && strings.HasPrefix(texts[0], backendContainerPrefix) {
		texts = texts[1:]
	}
	return strings.Join(append(append([]string(nil), texts...), r.LeafNodeText), " ")
}
