package record

import (
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
}

// Marks of failed calls (Call.Mark): reports classify specs by them, never by the text of
// a failure.
const (
	MarkTransport      = "transport"       // no answer came back (driver.IsTransport)
	MarkMalformed      = "malformed"       // an answer the driver could not read (driver.MalformedAnswerError)
	MarkNotExpressible = "not-expressible" // a request the driver cannot send (driver.ErrNotExpressible)
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
	inner api.Backend
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
}

// DefaultLimit is the number of calls a Recorder keeps.
const DefaultLimit = 64

// New wraps b.
func New(b api.Backend) *Recorder {
	return &Recorder{inner: b, history: &history{limit: DefaultLimit, written: map[string]bool{}}}
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

// noteRead notes the names of properties an answer carried that the spec had not written.
func (r *history) noteRead(es ...api.Entity) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		for n := range e.Properties {
			if !r.written[n] {
				if r.stray == nil {
					r.stray = map[string]bool{}
				}
				r.stray[n] = true
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
}

// noteJSONBody notes the member names of a JSON object sent as an entity body, without
// their annotations ("Age@odata.type" notes "Age").
func (r *history) noteJSONBody(req *http.Request) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE":
	default:
		return
	}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) >= r.limit {
		r.dropOne()
	}
	r.calls = append(r.calls, c)
}

// dropOne drops the oldest call that carries no mark, else the oldest call: a marked call
// (no answer, an unreadable answer, a retry) decides a spec's outcome and must outlive a long
// history.
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

func (r *Recorder) CreateTable(ctx context.Context, name string) error {
	start := time.Now()
	err := r.inner.CreateTable(ctx, name)
	r.add("CreateTable", name, start, "created", err)
	return err
}

func (r *Recorder) DeleteTable(ctx context.Context, name string) error {
	start := time.Now()
	err := r.inner.DeleteTable(ctx, name)
	r.add("DeleteTable", name, start, "deleted", err)
	return err
}

func (r *Recorder) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	start := time.Now()
	p, err := r.inner.QueryTables(ctx, q)
	r.add("QueryTables", fmt.Sprintf("filter=%q top=%d next=%q", q.Filter, q.Top, q.NextTableName), start,
		fmt.Sprintf("%d tables, next=%q", len(p.Tables), p.NextTableName), err)
	return p, err
}

func (r *Recorder) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	r.noteEntity(e)
	start := time.Now()
	out, err := r.inner.InsertEntity(ctx, table, e)
	r.noteRead(out)
	r.add("InsertEntity", table+" "+e.String(), start, "etag "+out.ETag, err)
	return out, err
}

func (r *Recorder) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	r.noteEntity(e)
	start := time.Now()
	etag, err := r.inner.UpdateEntity(ctx, table, e, mode, ifMatch)
	r.add("UpdateEntity("+mode.String()+")", fmt.Sprintf("%s %s If-Match=%q", table, e, ifMatch), start, "etag "+etag, err)
	return etag, err
}

func (r *Recorder) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	start := time.Now()
	err := r.inner.DeleteEntity(ctx, table, pk, rk, ifMatch)
	r.add("DeleteEntity", fmt.Sprintf("%s (%q,%q) If-Match=%q", table, pk, rk, ifMatch), start, "deleted", err)
	return err
}

func (r *Recorder) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	start := time.Now()
	e, err := r.inner.GetEntity(ctx, table, pk, rk, sel)
	r.noteRead(e)
	r.add("GetEntity", fmt.Sprintf("%s (%q,%q) select=%v", table, pk, rk, sel), start, e.String(), err)
	return e, err
}

func (r *Recorder) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	start := time.Now()
	p, err := r.inner.QueryEntities(ctx, table, q)
	r.noteRead(p.Entities...)
	got := fmt.Sprintf("%d entities", len(p.Entities))
	if n := len(p.Entities); n > 0 {
		got += fmt.Sprintf(" first (%q,%q) last (%q,%q)", p.Entities[0].PartitionKey, p.Entities[0].RowKey,
			p.Entities[n-1].PartitionKey, p.Entities[n-1].RowKey)
	}
	if !p.Continuation.IsZero() {
		got += fmt.Sprintf(", continuation (%q,%q)", p.Continuation.NextPartitionKey, p.Continuation.NextRowKey)
	}
	r.add("QueryEntities", fmt.Sprintf("%s filter=%q top=%v select=%v continuation=(%q,%q)", table, q.Filter, q.Top,
		q.Select, q.Continuation.NextPartitionKey, q.Continuation.NextRowKey), start, got, err)
	return p, err
}

func (r *Recorder) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for _, op := range ops {
		r.noteEntity(op.Entity)
	}
	start := time.Now()
	res, err := r.inner.SubmitBatch(ctx, table, ops)
	for _, x := range res {
		if x.Entity != nil {
			r.noteRead(*x.Entity)
		}
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
	r.add("SubmitBatch", sent.String(), start, fmt.Sprintf("%d results", len(res)), err)
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
	derived := &Recorder{inner: b, history: s.r.history}
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
	derived := &Recorder{inner: b, history: s.r.history}
	return derived.Capable(), nil
}

type rawRecorder struct {
	r   *Recorder
	raw driver.RawHTTP
}

func (w rawRecorder) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return w.raw.NewRequest(ctx, method, path, body)
}

func (w rawRecorder) Do(req *http.Request) (*http.Response, error) {
	w.r.noteJSONBody(req)
	start := time.Now()
	resp, err := w.raw.Do(req)
	got := ""
	if resp != nil {
		// wire.HeaderErrorCode by name: the recorder wraps every spec's backend, and what
		// specs reach may not include reference/wire (internal/archtest).
		got = resp.Status + " " + resp.Header.Get("x-ms-error-code")
	}
	w.r.add("HTTP", req.Method+" "+req.URL.Path, start, got, err)
	if resp != nil && resp.Body != nil {
		resp.Body = &readRecorder{ReadCloser: resp.Body, r: w.r, what: req.Method + " " + req.URL.Path, start: start}
	}
	return resp, err
}

// readRecorder records a failure to read an answer's body as a transport failure of the
// exchange (the answer did not arrive whole).
type readRecorder struct {
	io.ReadCloser
	r      *Recorder
	what   string
	start  time.Time
	failed bool
}

func (b *readRecorder) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && !b.failed {
		b.failed = true
		b.r.add("HTTP read", b.what, b.start, "", &driver.TransportError{Op: "read the answer to " + b.what, Err: err})
	}
	return n, err
}
