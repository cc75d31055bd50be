package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Call is one recorded call.
type Call struct {
	Op       string        `json:"op"`
	Sent     string        `json:"sent"`
	Got      string        `json:"got"`
	Status   int           `json:"status,omitempty"`
	Code     string        `json:"code,omitempty"`
	Request  string        `json:"requestId,omitempty"`
	Duration time.Duration `json:"duration"`
	// Mark classifies a failed call: MarkTransport, MarkMalformed, MarkNotExpressible, or
	// "" (no error, or a service error).
	Mark string `json:"mark,omitempty"`
	// Err is the call's error, when it failed.
	Err string `json:"error,omitempty"`
	// RawStatus and RawCode are the error status (300 or more) and code of a raw HTTP
	// exchange, which Status and Code leave out: a raw request's error answer is often what
	// its spec asked for. The code is x-ms-error-code, or the odata.error code of the body.
	RawStatus int    `json:"rawStatus,omitempty"`
	RawCode   string `json:"rawCode,omitempty"`
}

// Marks of failed calls (Call.Mark): reports classify specs by them, never by the text of
// a failure.
const (
	MarkTransport      = "transport"       // no answer came back (driver.IsTransport)
	MarkMalformed      = "malformed"       // an answer the driver could not read (driver.MalformedAnswerError)
	MarkNotExpressible = "not-expressible" // a request the driver cannot send (driver.ErrNotExpressible)
	// MarkRetriedAttempt: an attempt that got no answer or a busy answer and was retried.
	MarkRetriedAttempt = "retried-attempt"
	// MarkRetried: the answer to a retry after an attempt that may have been carried out; a
	// spec that fails on it is inconclusive, not a failure of its rule.
	MarkRetried = "retried"
)

// MarkOf classifies err as Call.Mark does.
func MarkOf(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, driver.ErrNotExpressible):
		return MarkNotExpressible
	case driver.IsTransport(err):
		return MarkTransport
	}
	if _, ok := driver.AsMalformed(err); ok {
		return MarkMalformed
	}
	return ""
}

func (c Call) String() string {
	return fmt.Sprintf("%s %s -> %s (%s)", c.Op, c.Sent, c.Got, c.Duration.Round(time.Microsecond))
}

// Recorder wraps a Backend and records its calls. It keeps at most Limit calls (the most
// recent ones). It forwards the optional capabilities of the wrapped backend.
type Recorder struct {
	inner  api.Backend
	policy driver.RetryPolicy
	*history
}

// history is shared by a Recorder and the recorders derived from it (WithSAS).
type history struct {
	limit   int
	mu      sync.Mutex
	calls   []Call
	dropped int
	// written holds the names of the properties the spec sent in its writes; stray the
	// names that came back in an entity before the spec wrote them (a write that copies an
	// entity read back does not make its stray members the spec's own).
	written map[string]bool
	stray   map[string]bool
	// values holds, by entity and property name, the distinct values the spec sent through
	// the api (at most maxNotedValues a property); opaque the names sent in a raw body or
	// beyond that bound, whose values are unknown.
	values map[api.Key]map[string]map[api.Value]bool
	opaque map[string]bool
	// sent holds the same values by property name alone, whichever entity they were sent to.
	sent map[string]map[api.Value]bool
	// readBack holds, by property name, the values that came back in an answer before the
	// spec sent them (a write that copies an entity read back does not make them its own).
	readBack map[string]map[api.Value]bool
	// keys holds the keys of the entities the spec sent through the api, but those that came
	// back in an answer before it sent them (keysRead: a write that copies an entity read
	// back does not make its key the spec's own); rawWrites is whether it also wrote
	// entities over raw HTTP, whose keys are not noted.
	keys, keysRead map[api.Key]bool
	rawWrites      bool
}

// maxNotedValues bounds the distinct values noted for one property name.
const maxNotedValues = 4096

// DefaultLimit is the number of calls a Recorder keeps.
const DefaultLimit = 64

// NewWithRetry wraps b, retrying calls as p says (driver.RetryPolicy): every call of a spec,
// its setup, its data loading and the operation it measures alike, each attempt recorded.
func NewWithRetry(b api.Backend, p driver.RetryPolicy) *Recorder {
	return &Recorder{inner: b, policy: p, history: &history{limit: DefaultLimit, written: map[string]bool{}}}
}

// Wrote reports whether a write through the recorder (or a recorder derived from it) sent a
// property named name: an entity of Insert, Update or Merge Entity, of an operation of a
// transaction, or a JSON entity body sent over raw HTTP.
func (r *history) Wrote(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written[name]
}

func (r *history) noteWritten(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[string]bool{}
	}
	for _, n := range names {
		if !r.stray[n] {
			r.written[n] = true
		}
	}
}

// noteRead notes the names of properties an answer carried that the spec had not written,
// and the values it carried that the spec had not sent.
func (r *history) noteRead(es ...api.Entity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		if !r.keys[e.Key()] {
			if r.keysRead == nil {
				r.keysRead = map[api.Key]bool{}
			}
			r.keysRead[e.Key()] = true
		}
		for n := range e.Properties {
			if !r.written[n] {
				if r.stray == nil {
					r.stray = map[string]bool{}
				}
				r.stray[n] = true
			}
		}
		for n, v := range e.Properties {
			if r.values[e.Key()][n][v] {
				continue
			}
			if r.readBack == nil {
				r.readBack = map[string]map[api.Value]bool{}
			}
			if r.readBack[n] == nil {
				r.readBack[n] = map[api.Value]bool{}
			}
			if len(r.readBack[n]) < maxNotedValues {
				r.readBack[n][v] = true
			}
		}
	}
}

func (r *history) noteEntity(e api.Entity) {
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	r.noteWritten(names...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[api.Key]bool{}
	}
	if !r.keysRead[e.Key()] {
		r.keys[e.Key()] = true
	}
	if r.values == nil {
		r.values = map[api.Key]map[string]map[api.Value]bool{}
	}
	byName := r.values[e.Key()]
	if byName == nil {
		byName = map[string]map[api.Value]bool{}
		r.values[e.Key()] = byName
	}
	for n, v := range e.Properties {
		seen := byName[n]
		switch {
		case seen[v] || r.readBack[n][v]:
			continue
		case len(seen) >= maxNotedValues:
			r.markOpaque(n)
			continue
		case seen == nil:
			seen = map[api.Value]bool{}
			byName[n] = seen
		}
		seen[v] = true
		if r.sent == nil {
			r.sent = map[string]map[api.Value]bool{}
		}
		if r.sent[n] == nil {
			r.sent[n] = map[api.Value]bool{}
		}
		r.sent[n][v] = true
	}
}

// markOpaque notes that the spec sent values of name that are not noted; r.mu is held.
func (r *history) markOpaque(name string) {
	if r.opaque == nil {
		r.opaque = map[string]bool{}
	}
	r.opaque[name] = true
}

// MayHaveWritten reports whether the spec may have sent v as property name of the entity
// with key: it sent the same value there (for a null, a null of any type), or values of name
// that were not noted (a raw body).
func (r *history) MayHaveWritten(key api.Key, name string, v api.Value) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opaque[name] || r.values[key][name][v] {
		return true
	}
	if v.Null { // a null of any type
		for w := range r.values[key][name] {
			if w.Null {
				return true
			}
		}
	}
	return false
}

// noteJSONBody notes the member names of a JSON object sent as an entity body, without
// their annotations ("Age@odata.type" notes "Age").
func (r *history) noteJSONBody(req *http.Request) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE":
	default:
		return
	}
	r.mu.Lock()
	r.rawWrites = true
	r.mu.Unlock()
	if req.GetBody == nil {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 8<<20))
	if err != nil {
		return
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return
	}
	names := make([]string, 0, len(members))
	for n := range members {
		name, _, _ := strings.Cut(n, "@")
		names = append(names, name)
	}
	r.noteWritten(names...)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.markOpaque(n)
	}
}

// running is the history of the spec running in this process (Track), which entity
// comparisons consult (WrittenByRunningSpec). Ginkgo runs one spec at a time per process.
var running atomic.Pointer[history]

// Track makes r the recorder of the spec running in this process; nil ends tracking.
func Track(r *Recorder) {
	if r == nil {
		running.Store(nil)
		return
	}
	running.Store(r.history)
}

// WrittenByRunningSpec reports whether the running spec wrote a property named name
// (Recorder.Wrote); tracked is false when no spec's recorder is tracked, and then written
// says nothing.
func WrittenByRunningSpec(name string) (written, tracked bool) {
	h := running.Load()
	if h == nil {
		return false, false
	}
	return h.Wrote(name), true
}

// MayHaveSent reports whether the spec may have sent v as property name of any entity
// (MayHaveWritten, whichever the entity).
func (r *history) MayHaveSent(name string, v api.Value) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opaque[name] || r.sent[name][v]
}

// SentByRunningSpec reports whether the running spec sent v as property name of some entity
// (Recorder.MayHaveSent); outside a tracked spec it is false: nothing says it did.
func SentByRunningSpec(name string, v api.Value) bool {
	h := running.Load()
	if h == nil {
		return false
	}
	return h.MayHaveSent(name, v)
}

// MayHaveBeenWrittenByRunningSpec reports whether the running spec may have sent v as the
// property name of the entity with key (Recorder.MayHaveWritten); outside a tracked spec it is true: nothing says
// it did not.
func MayHaveBeenWrittenByRunningSpec(key api.Key, name string, v api.Value) bool {
	h := running.Load()
	if h == nil {
		return true
	}
	return h.MayHaveWritten(key, name, v)
}

// MayHaveWrittenKey reports whether the spec may have written an entity with key: it sent
// one through the api, or it wrote entities over raw HTTP, whose keys are not noted.
func (r *history) MayHaveWrittenKey(key api.Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rawWrites || r.keys[key]
}

// KeyMayHaveBeenWrittenByRunningSpec reports whether the running spec may have written an
// entity with key (Recorder.MayHaveWrittenKey); outside a tracked spec it is true: nothing
// says it did not.
func KeyMayHaveBeenWrittenByRunningSpec(key api.Key) bool {
	h := running.Load()
	if h == nil {
		return true
	}
	return h.MayHaveWrittenKey(key)
}

// Unwrap returns the wrapped backend.
func (r *Recorder) Unwrap() api.Backend { return r.inner }

// Calls returns the recorded calls, oldest first.
func (r *history) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls...)
}

// History renders the recorded calls, one a line.
func (r *history) History() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	if r.dropped > 0 {
		fmt.Fprintf(&b, "(%d earlier calls not kept)\n", r.dropped)
	}
	for i, c := range r.calls {
		fmt.Fprintf(&b, "%3d. %s\n", i+1, c)
	}
	return b.String()
}

func (r *history) add(op, sent string, start time.Time, got string, err error) {
	r.addCall(newCall(op, sent, start, got, err))
}

func newCall(op, sent string, start time.Time, got string, err error) Call {
	c := Call{Op: op, Sent: sent, Got: got, Duration: time.Since(start)}
	if err != nil {
		c.Got = "error: " + err.Error()
		c.Err, c.Mark = err.Error(), MarkOf(err)
		if e, ok := driver.AsError(err); ok {
			c.Status, c.Code, c.Request = e.Status, e.Code, e.RequestID
		} else if m, ok := driver.AsMalformed(err); ok {
			c.Status = m.Status
		}
	}
	return c
}

func (r *history) addCall(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) >= r.limit {
		r.dropOne()
	}
	r.calls = append(r.calls, c)
}

// RetriedError is the answer to a call retried after an attempt that the service may have
// carried out (driver.MayHaveBeenApplied): a 409 to a create, a 404 to a delete, may be the
// answer to that first attempt's effect. It wraps the answer, so that it reads as one.
type RetriedError struct{ Err error }

func (e *RetriedError) Error() string {
	return e.Err.Error() + " (answered to a retry: an earlier attempt may have been carried out)"
}

// Unwrap returns the answer.
func (e *RetriedError) Unwrap() error { return e.Err }

// AfterRetryOfApplied reports whether err answered a retry after an attempt that may have
// been carried out (RetriedError).
func AfterRetryOfApplied(err error) bool {
	var r *RetriedError
	return errors.As(err, &r)
}

// attempt is one try of a call, kept until the call's end decides its mark.
type attempt struct {
	start     time.Time
	got       string
	err       error
	rawStatus int
	rawCode   string
}

// retry runs one call of the backend under the recorder's retry policy and records each
// attempt: an attempt that was retried is marked MarkRetriedAttempt; the last one is marked
// MarkTransport when it stays unanswered (driver.Unanswered), MarkRetried when it answered a
// retry after an attempt that may have been carried out (its error is then a RetriedError).
// A 500 that persists through the retries (driver.ServerFault) is neither: it is the
// backend's answer, judged as any other.
func (r *Recorder) retry(ctx context.Context, op, sent string, do func(context.Context) (string, error)) error {
	return r.retryAttempts(ctx, op, sent, func(ctx context.Context) attempt {
		start := time.Now()
		got, err := do(ctx)
		return attempt{start: start, got: got, err: err}
	})
}

// retryAttempts is retry for calls that describe their attempts themselves (raw exchanges
// with their error answers).
func (r *Recorder) retryAttempts(ctx context.Context, op, sent string, do func(context.Context) attempt) error {
	var tries []attempt
	err, applied := r.policy.Retry(ctx, func(ctx context.Context) error {
		t := do(ctx)
		tries = append(tries, t)
		return t.err
	}, nil)
	for i, t := range tries {
		c := newCall(op, sent, t.start, t.got, t.err)
		c.RawStatus, c.RawCode = t.rawStatus, t.rawCode
		c.Duration = t.dur(tries, i)
		if len(tries) > 1 {
			c.Op = fmt.Sprintf("%s (attempt %d)", op, i+1)
		}
		switch {
		case i < len(tries)-1:
			c.Mark = MarkRetriedAttempt
		case t.err != nil && driver.Unanswered(t.err):
			c.Mark = MarkTransport
		case applied && !driver.ServerFault(t.err):
			c.Mark = MarkRetried
		}
		r.addCall(c)
	}
	if applied && err != nil && !driver.Unanswered(err) && !driver.ServerFault(err) {
		return &RetriedError{Err: err}
	}
	return err
}

// dur is the time attempt i took: until the next attempt started, or until now for the last.
func (t attempt) dur(all []attempt, i int) time.Duration {
	if i+1 < len(all) {
		return all[i+1].start.Sub(t.start)
	}
	return time.Since(t.start)
}

// settledBy reports whether err answered a retry after an attempt that may have been
// carried out (RetriedError) with the status that attempt's effect explains: 409 to a
// create, 404 to a delete. The call then did what it was asked; it stays marked MarkRetried,
// so that a spec failing later is inconclusive, never a rule's failure.
func settledBy(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status && AfterRetryOfApplied(err)
}

func (r *Recorder) CreateTable(ctx context.Context, name string) error {
	err := r.retry(ctx, "CreateTable", name, func(ctx context.Context) (string, error) {
		return "created", r.inner.CreateTable(ctx, name)
	})
	if settledBy(err, http.StatusConflict) {
		return nil
	}
	return err
}

func (r *Recorder) DeleteTable(ctx context.Context, name string) error {
	err := r.retry(ctx, "DeleteTable", name, func(ctx context.Context) (string, error) {
		return "deleted", r.inner.DeleteTable(ctx, name)
	})
	if settledBy(err, http.StatusNotFound) {
		return nil
	}
	return err
}

func (r *Recorder) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	var p api.TablePage
	err := r.retry(ctx, "QueryTables", fmt.Sprintf("filter=%q top=%d next=%q", q.Filter, q.Top, q.NextTableName), func(ctx context.Context) (string, error) {
		var err error
		p, err = r.inner.QueryTables(ctx, q)
		return fmt.Sprintf("%d tables, next=%q", len(p.Tables), p.NextTableName), err
	})
	return p, err
}

func (r *Recorder) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	r.noteEntity(e)
	var out api.Entity
	err := r.retry(ctx, "InsertEntity", table+" "+e.String(), func(ctx context.Context) (string, error) {
		var err error
		out, err = r.inner.InsertEntity(ctx, table, e)
		return "etag " + out.ETag, err
	})
	if settledBy(err, http.StatusConflict) {
		// A lost first attempt may have stored it: what is stored says whether it did.
		if got, gerr := r.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil); gerr == nil && sameProperties(e, got) {
			return got, nil
		}
	}
	r.noteRead(out)
	return out, err
}

// sameProperties reports whether got holds exactly the custom properties of sent.
func sameProperties(sent, got api.Entity) bool {
	for _, n := range api.UnionPropertyNames(sent, got) {
		w, inSent := sent.Properties[n]
		g, inGot := got.Properties[n]
		if w.Null && !inGot {
			continue
		}
		if !inSent || !inGot || !w.Equal(g) {
			return false
		}
	}
	return true
}

func (r *Recorder) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	r.noteEntity(e)
	var etag string
	err := r.retry(ctx, "UpdateEntity("+mode.String()+")", fmt.Sprintf("%s %s If-Match=%q", table, e, ifMatch), func(ctx context.Context) (string, error) {
		var err error
		etag, err = r.inner.UpdateEntity(ctx, table, e, mode, ifMatch)
		return "etag " + etag, err
	})
	return etag, err
}

func (r *Recorder) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	err := r.retry(ctx, "DeleteEntity", fmt.Sprintf("%s (%q,%q) If-Match=%q", table, pk, rk, ifMatch), func(ctx context.Context) (string, error) {
		return "deleted", r.inner.DeleteEntity(ctx, table, pk, rk, ifMatch)
	})
	if settledBy(err, http.StatusNotFound) {
		return nil
	}
	return err
}

func (r *Recorder) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	var e api.Entity
	err := r.retry(ctx, "GetEntity", fmt.Sprintf("%s (%q,%q) select=%v", table, pk, rk, sel), func(ctx context.Context) (string, error) {
		var err error
		e, err = r.inner.GetEntity(ctx, table, pk, rk, sel)
		return e.String(), err
	})
	r.noteRead(e)
	return e, err
}

func (r *Recorder) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	var p api.Page
	sent := fmt.Sprintf("%s filter=%q top=%v select=%v continuation=(%q,%q)", table, q.Filter, q.Top,
		q.Select, q.Continuation.NextPartitionKey, q.Continuation.NextRowKey)
	err := r.retry(ctx, "QueryEntities", sent, func(ctx context.Context) (string, error) {
		var err error
		p, err = r.inner.QueryEntities(ctx, table, q)
		got := fmt.Sprintf("%d entities", len(p.Entities))
		if n := len(p.Entities); n > 0 {
			got += fmt.Sprintf(" first (%q,%q) last (%q,%q)", p.Entities[0].PartitionKey, p.Entities[0].RowKey,
				p.Entities[n-1].PartitionKey, p.Entities[n-1].RowKey)
		}
		if !p.Continuation.IsZero() {
			got += fmt.Sprintf(", continuation (%q,%q)", p.Continuation.NextPartitionKey, p.Continuation.NextRowKey)
		}
		return got, err
	})
	r.noteRead(p.Entities...)
	return p, err
}

func (r *Recorder) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for _, op := range ops {
		r.noteEntity(op.Entity)
	}
	var sent strings.Builder
	fmt.Fprintf(&sent, "%s %d ops:", table, len(ops))
	for i, op := range ops {
		if i == 8 {
			fmt.Fprintf(&sent, " ...")
			break
		}
		fmt.Fprintf(&sent, " %s(%q,%q)", op.Kind, op.Entity.PartitionKey, op.Entity.RowKey)
	}
	var res []api.BatchResult
	err := r.retry(ctx, "SubmitBatch", sent.String(), func(ctx context.Context) (string, error) {
		var err error
		res, err = r.inner.SubmitBatch(ctx, table, ops)
		return fmt.Sprintf("%d results", len(res)), err
	})
	for _, x := range res {
		if x.Entity != nil {
			r.noteRead(*x.Entity)
		}
	}
	return res, err
}

// Info forwards driver.Describer.
func (r *Recorder) Info() driver.Info {
	if d, ok := r.inner.(driver.Describer); ok {
		return d.Info()
	}
	return driver.Info{}
}

// Capable returns a Backend that is r plus whichever optional capabilities the wrapped
// backend has, so that capability checks see through the recorder.
func (r *Recorder) Capable() api.Backend {
	sas, hasSAS := r.inner.(driver.SASIssuer)
	raw, hasRaw := r.inner.(driver.RawHTTP)
	switch {
	case hasSAS && hasRaw:
		return &struct {
			*Recorder
			driver.SASIssuer
			driver.RawHTTP
		}{r, sasRecorder{r, sas}, rawRecorder{r, raw}}
	case hasSAS:
		return &struct {
			*Recorder
			driver.SASIssuer
		}{r, sasRecorder{r, sas}}
	case hasRaw:
		return &struct {
			*Recorder
			driver.RawHTTP
		}{r, rawRecorder{r, raw}}
	}
	return r
}

type sasRecorder struct {
	r   *Recorder
	sas driver.SASIssuer
}

func (s sasRecorder) WithSAS(ctx context.Context, opts driver.SASOptions) (api.Backend, error) {
	start := time.Now()
	b, err := s.sas.WithSAS(ctx, opts)
	s.r.add("WithSAS", fmt.Sprintf("table=%s sp=%s pk=[%q..%q] rk=[%q..%q] si=%s sip=%s spr=%s", opts.Table, opts.Permissions,
		opts.StartPK, opts.EndPK, opts.StartRK, opts.EndRK, opts.Identifier, opts.IPRange, opts.Protocol), start, "signed", err)
	if err != nil {
		return nil, err
	}
	derived := &Recorder{inner: b, policy: s.r.policy, history: s.r.history}
	return derived.Capable(), nil
}

func (s sasRecorder) WithAccountSAS(ctx context.Context, opts driver.AccountSASOptions) (api.Backend, error) {
	start := time.Now()
	b, err := s.sas.WithAccountSAS(ctx, opts)
	s.r.add("WithAccountSAS", fmt.Sprintf("ss=%s srt=%s sp=%s sip=%s spr=%s", opts.Services, opts.ResourceTypes, opts.Permissions,
		opts.IPRange, opts.Protocol), start, "signed", err)
	if err != nil {
		return nil, err
	}
	derived := &Recorder{inner: b, policy: s.r.policy, history: s.r.history}
	return derived.Capable(), nil
}

type rawRecorder struct {
	r   *Recorder
	raw driver.RawHTTP
}

func (w rawRecorder) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return w.raw.NewRequest(ctx, method, path, body)
}

// Do sends req as the recorder's retry policy says: an exchange that got no whole answer, or
// an answer that says the service was busy or timed out (driver.Retryable, read from the
// status and x-ms-error-code), is sent again while the request's body can be sent again.
// The answer's body is read whole before it is returned, so that an answer cut short is
// retried like one that never came. Every attempt is recorded, marked as retry does.
func (w rawRecorder) Do(req *http.Request) (*http.Response, error) {
	return w.r.exchange(w.raw.Do, req)
}

// SendUnsigned sends req as it is, around the raw capability's Do (which would sign it),
// with the same retries and records as Do: the exchanges of a spec about requests without
// credentials are recorded like every other.
func (r *Recorder) SendUnsigned(req *http.Request) (*http.Response, error) {
	return r.exchange(http.DefaultClient.Do, req)
}

func (r *Recorder) exchange(send func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
	r.noteJSONBody(req)
	what := req.Method + " " + req.URL.Path
	var resp *http.Response
	sent := 0
	err := r.retryAttempts(req.Context(), "HTTP", what, func(ctx context.Context) attempt {
		t := attempt{start: time.Now()}
		if sent++; sent > 1 && req.GetBody != nil { // a retry: the body is sent again
			body, err := req.GetBody()
			if err != nil {
				t.err = &driver.TransportError{Op: "send " + what + " again", Err: err}
				return t
			}
			req.Body = body
		}
		var err error
		resp, err = send(req)
		if err != nil {
			resp = nil
			if req.GetBody == nil && req.Body != nil && req.Body != http.NoBody {
				// Not sent again: its body is gone. Still no answer, marked as such.
				err = fmt.Errorf("%w (not retried: the body cannot be sent again)", err)
			}
			t.err = &driver.TransportError{Op: what, Err: err}
			return t
		}
		// wire.HeaderErrorCode by name: the recorder wraps every spec's backend, and what
		// specs reach may not include reference/wire (internal/archtest).
		code := resp.Header.Get("x-ms-error-code")
		t.got = resp.Status + " " + code
		var data []byte
		if resp.Body != nil {
			data, err = io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			resp.Body = io.NopCloser(bytes.NewReader(data))
			if err != nil {
				t.err = &driver.TransportError{Op: "read the answer to " + what, Err: err}
				return t
			}
		}
		if resp.StatusCode >= 300 {
			t.rawStatus, t.rawCode = resp.StatusCode, code
			if code == "" {
				// The code of a JSON error body (Cosmos DB for Table sends no header).
				t.rawCode = odataErrorCode(data[:min(len(data), maxErrorBody)])
			}
		}
		if resp.StatusCode >= 400 {
			busy := &spec.Error{Status: resp.StatusCode, Code: t.rawCode, RetryAfter: spec.RetryAfter(resp.Header, time.Now())}
			if driver.Retryable(ctx, busy) && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil) {
				t.err = busy
			}
		}
		return t
	})
	var retried *RetriedError
	if errors.As(err, &retried) {
		err = nil // the answer itself is what the spec reads; the call is marked MarkRetried
	}
	if _, busy := driver.AsError(err); busy {
		err = nil // still busy after the retries: the spec reads that answer; the call is marked
	}
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// dropOne drops the oldest call that carries no mark, else the oldest call: a marked call
// (no answer, an unreadable answer, a retry) decides a spec's outcome and must outlive a long
// history, such as that of parallel clients.
func (r *history) dropOne() {
	i := 0
	for j, c := range r.calls {
		if c.Mark == "" {
			i = j
			break
		}
	}
	r.calls = append(r.calls[:i], r.calls[i+1:]...)
	r.dropped++
}

// maxErrorBody bounds what the recorder reads of a raw error answer to find its code.
const maxErrorBody = 64 << 10

// odataErrorCode is the code of a JSON odata.error body, or "".
func odataErrorCode(body []byte) string {
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	_ = json.Unmarshal(body, &doc)
	return doc.Error.Code
}

// ErrorAnswers lists the error answers (status 300 or more, with their codes) of calls,
// oldest first: the service errors of backend calls and the error answers of raw exchanges,
// without the attempts that were retried.
func ErrorAnswers(calls []Call) []Answer {
	var out []Answer
	for _, c := range calls {
		switch {
		case c.Mark == MarkRetriedAttempt: // a busy or lost attempt, retried: not the backend's answer
		case c.Status >= 300:
			out = append(out, Answer{Status: c.Status, Code: c.Code})
		case c.RawStatus >= 300:
			out = append(out, Answer{Status: c.RawStatus, Code: c.RawCode})
		}
	}
	return out
}

// Answer is one error answer: its HTTP status and error code.
type Answer struct {
	Status int    `json:"status"`
	Code   string `json:"code,omitempty"`
}
