package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
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

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
	"github.com/tableconform/conform/suites/verdict"
)

// Report entry names the framework attaches to specs; suites/report reads them.
const (
	EntryRule    = "conform.rule"
	EntryBackend = "conform.backend"
	EntryChoice  = "conform.choice"
	EntryHistory = "conform.history"
	EntryInfo    = "conform.info"
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

// OrderPromised reports whether the profile promises the order of query results that rule
// is about: false where it expects no order (verdict.OrderNotPromised, Cosmos DB), so that a
// precondition on key order is left out there rather than blocking specs whose order check
// the profile excuses.
func (f *F) OrderPromised(rule string) bool {
	return verdict.ExpectationOf(ruleOf(rule), f.Profile(), "").Kind != verdict.OrderNotPromised
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
	requireSignedRequests(raw)
	return raw
}

// RuleSignedRequests is the rule whose subject is a request signed with Shared Key being
// served at all.
const RuleSignedRequests = "auth.shared-key.valid"

// requireSignedRequests is the precondition of every spec that sends hand-made requests:
// once per spec, a signed Query Tables whose filter names no table answers 200
// (RuleSignedRequests). A backend that refuses every signed request would otherwise fail
// each such spec on the rule it judges, whatever that rule's subject.
func requireSignedRequests(raw driver.RawHTTP) {
	ginkgo.GinkgoHelper()
	run := currentRun.Load()
	if run == nil || run.rule.ID == RuleSignedRequests {
		return
	}
	run.mu.Lock()
	probed := run.signedProbed
	run.signedProbed = true
	run.mu.Unlock()
	if probed {
		return
	}
	const step = "a signed Query Tables answers 200"
	ctx, cancel := context.WithTimeout(context.Background(), run.f.specTimeout())
	defer cancel()
	req, err := raw.NewRequest(ctx, http.MethodGet, "Tables?%24filter=TableName%20eq%20%27conformprobe%27", nil)
	if err != nil {
		ginkgo.Fail(fmt.Sprintf("conform: building the signed-request probe: %v", err))
	}
	req.Header.Set("Accept", "application/json;odata=nometadata")
	resp, err := raw.Do(req)
	if err != nil {
		Blocked(RuleSignedRequests, step, err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		Blocked(RuleSignedRequests, step, &driver.Error{Status: resp.StatusCode, Code: resp.Header.Get("x-ms-error-code"),
			Message: "a signed Query Tables answered " + resp.Status})
	}
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
	f.CleanupTable(name) // registered first: a create whose answer is lost may still have created it
	// The recorder retries the create; a retry that meets the table its lost first attempt
	// created counts as created (issue 20: not a failure of tables.create.listed).
	if err := f.Backend().CreateTable(ctx, name); err != nil {
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
	if run := currentRun.Load(); run != nil {
		run.mu.Lock()
		run.choices++
		run.mu.Unlock()
	}
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
// timeout; pass it to every backend call. The spec's location is its caller's line
// (ginkgo.Offset), so reports and docs/RULES.md name the spec file, not this one.
func (f *F) It(ruleID, text string, body func(ctx context.Context), decorators ...any) bool {
	r := ruleOf(ruleID)
	args := append([]any{ginkgo.Offset(1), ruleLabels(r), ginkgo.NodeTimeout(f.specTimeout())}, decorators...)
	args = append(args, func(ctx ginkgo.SpecContext) {
		f.runRule(r, func() { body(ctx) })
	})
	return ginkgo.It(text, args...)
}

// DescribeTable declares a table of specs for one rule, one per entry (boundaries named
// for what they test: "at exactly 1 KiB", "one byte over"). body's first parameter is a
// context.Context; the rest take the entry's parameters. The table's location is its
// caller's line (ginkgo.GinkgoHelper: a table takes no Offset); each entry keeps the line of
// its own ginkgo.Entry.
func (f *F) DescribeTable(ruleID, text string, body any, entries ...any) bool {
	ginkgo.GinkgoHelper()
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

// runRule runs a spec's body for rule r and concludes it through verdict.Decide, the one
// place an outcome is decided: it attaches the rule, the baseline's entry for the spec
// (EntryBaseline) and what happened (EntryResult), and fails the Ginkgo spec exactly when
// the decision is unexpected or got no answer. A failure the baseline lists with the same
// signature, an answer the profile documents, and a block the baseline lists end the spec
// without failing it; suites/report decides the same outcome from the same entries.
func (f *F) runRule(r spec.Rule, body func()) {
	ginkgo.AddReportEntry(EntryRule, RuleEntry{ID: r.ID, Level: string(r.Level), Area: string(r.Area),
		Feature: string(r.FeatureOrCore()), Text: r.Text, Source: r.Source}, ginkgo.ReportEntryVisibilityNever)
	f.mu.Lock()
	f.recorder = nil
	f.mu.Unlock()
	record.Track(nil)
	run := &specRun{f: f, rule: r, exp: verdict.ExpectationOf(r, f.Profile(), SpecText(ginkgo.CurrentSpecReport()))}
	ginkgo.DeferCleanup(func() {
		// A failure outside the body's assertions (a timeout, a panic): its evidence.
		if sr := ginkgo.CurrentSpecReport(); sr.Failed() && !run.isConcluded() {
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
	if e, listed := f.target.baseline.Lookup(r.ID, SpecText(ginkgo.CurrentSpecReport())); listed {
		run.entry = &e
		ginkgo.AddReportEntry(EntryBaseline, e, ginkgo.ReportEntryVisibilityNever)
	}
	currentRun.Store(run)
	defer currentRun.CompareAndSwap(run, nil)
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(stopSpec); !ok {
				panic(e)
			}
		}
	}()
	body()
	run.conclude(verdict.Result{State: verdict.StatePassed}, "", 1)
}

// stopSpec ends a spec's body whose failure is expected (the baseline lists it, the
// profile documents it): runRule recovers it, and the Ginkgo spec passes.
type stopSpec struct{}

// specRun is the running spec of this process, for the fail handler (specs of one
// process run one at a time).
type specRun struct {
	f     *F
	rule  spec.Rule
	exp   verdict.Expectation
	entry *fixtures.ExpectedFailure

	// mu guards what goroutines of the spec may touch: its choices, the precondition
	// running, whether it was concluded.
	mu      sync.Mutex
	choices int
	// precondition is the rule whose precondition check is running (Requires).
	precondition, step string
	// check is the named check running (F.Check).
	check     string
	concluded bool
	// noted is the failure an assertion announced as a precondition's (NoteFailedPrecondition);
	// held the rules whose precondition checks passed (Requires).
	noted *notedPrecondition
	held  map[string]bool
	// signedProbed is whether the spec ran the precondition of hand-made requests.
	signedProbed bool
}

// notedPrecondition is a failure announced before the fail handler sees it: the failure
// whose message holds message failed a step that rule covers.
type notedPrecondition struct{ rule, step, message string }

var currentRun atomic.Pointer[specRun]

func (run *specRun) isConcluded() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.concluded
}

// inPrecondition returns the rule and step of the precondition check running, if any.
func (run *specRun) inPrecondition() (rule, step string) {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.precondition, run.step
}

// failHandler is Gomega's fail handler while specs run: a failed assertion of a running
// spec concludes it (as blocked inside a precondition check); anywhere else it fails the
// Ginkgo node.
func failHandler(message string, callerSkip ...int) {
	skip := 0
	if len(callerSkip) > 0 {
		skip = callerSkip[0]
	}
	run := currentRun.Load()
	if run == nil || run.isConcluded() {
		ginkgo.Fail(message, skip+1)
		return
	}
	notedRule, notedStep, noted := run.takeNoted(message)
	if rule, step := run.inPrecondition(); rule != "" {
		run.conclude(verdict.Result{State: verdict.StateBlocked, BlockedBy: rule}, blockedMessage(rule, step, message), skip+2)
		return
	}
	if rule, step := notedRule, notedStep; noted {
		run.conclude(verdict.Result{State: verdict.StateBlocked, BlockedBy: rule}, blockedMessage(rule, step, message), skip+2)
		return
	}
	run.mu.Lock()
	check := run.check
	run.mu.Unlock()
	run.conclude(verdict.Result{State: verdict.StateFailed, Check: check}, message, skip+2)
}

// takeNoted returns the precondition noted for the failure with message, and forgets what
// was noted: a note holds for the one failure it announced.
func (run *specRun) takeNoted(message string) (rule, step string, ok bool) {
	run.mu.Lock()
	defer run.mu.Unlock()
	n := run.noted
	run.noted = nil
	if n == nil || n.message == "" || !strings.Contains(message, n.message) {
		return "", "", false
	}
	return n.rule, n.step, true
}

func blockedMessage(rule, step, failure string) string {
	return fmt.Sprintf("blocked by %s: %s failed: %s", rule, step, failure)
}

// conclude decides the spec's outcome from res (completed with its signature, its choices
// and the marks of its calls), attaches it, and ends the spec as the decision says: a
// Ginkgo failure when it is unexpected or got no answer, a skip when the driver could not
// send a request, else a pass (stopSpec when the body is still running). skip is the
// number of frames between conclude and the failing assertion.
func (run *specRun) conclude(res verdict.Result, message string, skip int) {
	ginkgo.GinkgoHelper()
	run.mu.Lock()
	if run.concluded {
		// Another goroutine of the spec concluded it first.
		run.mu.Unlock()
		ginkgo.Fail(message, skip+1)
		return
	}
	run.concluded = true
	choices := run.choices
	run.mu.Unlock()
	var calls []record.Call
	rec := run.f.currentRecorder()
	if rec != nil {
		calls = rec.Calls()
	}
	res.Choices = choices
	if res.State != verdict.StatePassed {
		res.Signature, res.Failure = FailureSignature(message, calls), message
		for _, a := range record.ErrorAnswers(calls) {
			res.Answers = append(res.Answers, fixtures.Signature{Status: a.Status, Code: a.Code})
		}
		switch {
		case inconclusive(calls):
			res.State = verdict.StateNoAnswer
		case (res.State == verdict.StateFailed || res.State == verdict.StateBlocked) && hasMark(calls, record.MarkNotExpressible):
			// The driver could not send a request the spec (or its precondition) needs.
			res.State = verdict.StateNotExpressible
		}
		if rec != nil {
			ginkgo.AddReportEntry(EntryHistory, rec.History(), ginkgo.ReportEntryVisibilityFailureOrVerbose)
		}
		markCalls(calls)
		ginkgo.AddReportEntry(EntrySignature, res.Signature, ginkgo.ReportEntryVisibilityNever)
	}
	ginkgo.AddReportEntry(EntryResult, res, ginkgo.ReportEntryVisibilityNever)
	d := verdict.Decide(res, run.rule.Level, run.exp, run.entry)
	switch {
	case res.State == verdict.StateNotExpressible:
		ginkgo.Skip("the driver cannot send this request: "+notExpressibleError(calls), skip+1)
	case d.Unexpected || d.Outcome == verdict.Error:
		if message == "" {
			message = d.Why
		} else if d.Why != "" {
			message = d.Why + ":\n" + message
		}
		ginkgo.Fail(message, skip+1)
	case res.State != verdict.StatePassed:
		panic(stopSpec{})
	}
}

func notExpressibleError(calls []record.Call) string {
	for _, c := range calls {
		if c.Mark == record.MarkNotExpressible {
			return c.Err
		}
	}
	return ""
}

// Requires runs check, a step the spec relies on whose behaviour rule covers (a
// precondition: loading data with a filter of another rule, reading back with $select, a
// batch being applied at all): when an assertion in check fails, the spec is blocked by
// rule, with the failure as its evidence, and its own rule is neither passed nor failed.
// step says what the spec was doing ("read the entity back with $select"). In a spec of
// rule itself, check is an ordinary part of the spec.
func (f *F) Requires(rule, step string, check func()) {
	ginkgo.GinkgoHelper()
	Requires(rule, step, check)
}

// Requires is F.Requires for helpers that have no F: the running spec is this process's.
func Requires(rule, step string, check func()) {
	ginkgo.GinkgoHelper()
	ruleOf(rule)
	run := currentRun.Load()
	if run == nil || run.rule.ID == rule {
		check() // a spec's own rule is no precondition: its failure fails the spec
		return
	}
	run.mu.Lock()
	prevRule, prevStep := run.precondition, run.step
	run.precondition, run.step = rule, step
	run.mu.Unlock()
	defer func() {
		run.mu.Lock()
		run.precondition, run.step = prevRule, prevStep
		run.mu.Unlock()
	}()
	check()
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.held == nil {
		run.held = map[string]bool{}
	}
	run.held[rule] = true
}

// Matchers note a failed precondition through the recorder (record.NotePrecondition), since
// they may not import the framework.
func init() { record.SetPreconditionNoter(NoteFailedPrecondition) }

// NoteFailedPrecondition announces, from inside an assertion about to fail with a message
// that holds message (a matcher's FailureMessage), that what failed is a step rule covers
// (step says which): the failure blocks the running spec by rule rather than failing its
// own rule, as if the step had run in Requires. In a spec of rule itself, or when the next
// failure is another, the note has no effect; nor when a precondition check of rule passed
// earlier in the spec (Requires): rule was shown to hold, so the failure is the spec's own.
// Outside a running spec it does nothing.
func NoteFailedPrecondition(rule, step, message string) {
	ruleOf(rule)
	run := currentRun.Load()
	if run == nil || run.rule.ID == rule {
		return
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.held[rule] {
		return
	}
	run.noted = &notedPrecondition{rule: rule, step: step, message: message}
}

// Check runs assertions, the spec's check called name (one of spec's Check constants: the
// order of results, a header, a refusal), so that a profile's difference without an error
// status can name the one assertion it excuses (spec.Cosmos.Check): a failed assertion in
// check is recorded with the name (verdict.Result.Check); any other failure of the spec is
// judged as written. Outside a running spec, check simply runs.
func (f *F) Check(name string, check func()) {
	ginkgo.GinkgoHelper()
	run := currentRun.Load()
	if run == nil {
		check()
		return
	}
	run.mu.Lock()
	prev := run.check
	run.check = name
	run.mu.Unlock()
	defer func() {
		run.mu.Lock()
		run.check = prev
		run.mu.Unlock()
	}()
	check()
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
