package record

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

var quick = driver.RetryPolicy{MaxRetries: 3, Delay: time.Millisecond, MaxDelay: time.Second}

// lossy creates tables, but loses the answer to the first create of each (500
// OperationTimedOut after carrying it out), as a real service that timed out may.
type lossy struct {
	api.Backend
	tables map[string]bool
	lost   bool
}

func (l *lossy) CreateTable(_ context.Context, name string) error {
	if l.tables[name] {
		return spec.ErrTableAlreadyExists.New()
	}
	l.tables[name] = true
	if !l.lost {
		l.lost = true
		return &spec.Error{Status: 500, Code: "OperationTimedOut"}
	}
	return nil
}

func (l *lossy) GetEntity(context.Context, string, string, string, []string) (api.Entity, error) {
	return api.Entity{}, &driver.TransportError{Op: "get", Err: io.ErrUnexpectedEOF}
}

func (l *lossy) DeleteTable(context.Context, string) error { return spec.ErrResourceNotFound.New() }

// A create carried out but answered 500 OperationTimedOut, then 409 on its retry, created
// the table: it is not a failure of tables.create.listed (issue 20, item 13).
func TestACreateAppliedButAnswered500IsTheTableCreated(t *testing.T) {
	r := NewWithRetry(&lossy{tables: map[string]bool{}}, quick)
	if err := r.CreateTable(context.Background(), "t1"); err != nil {
		t.Fatalf("500 OperationTimedOut, then 409: the table was created, got %v", err)
	}
	err, _ := quick.Retry(context.Background(), func(context.Context) error { return &spec.Error{Status: 500, Code: "OperationTimedOut"} }, nil)
	if !driver.Unanswered(err) {
		t.Fatalf("a timeout that stays is unanswered: %v", err)
	}
	calls := r.Calls()
	if len(calls) != 2 || calls[0].Mark != MarkRetriedAttempt || calls[1].Mark != MarkRetried {
		t.Fatalf("calls %+v: want a retried attempt, then the retried answer", calls)
	}
	if err := r.CreateTable(context.Background(), "t2"); err != nil {
		t.Fatalf("a plain create: %v", err)
	}
}

func TestAnUnansweredCallIsMarkedAndOutlivesALongHistory(t *testing.T) {
	r := NewWithRetry(&lossy{tables: map[string]bool{}}, quick)
	if _, err := r.GetEntity(context.Background(), "t", "p", "r", nil); !driver.IsTransport(err) {
		t.Fatalf("want the transport error after the retries, got %v", err)
	}
	for range 3 * DefaultLimit {
		_ = r.DeleteTable(context.Background(), "x")
	}
	calls := r.Calls()
	if len(calls) != DefaultLimit {
		t.Fatalf("%d calls kept, want %d", len(calls), DefaultLimit)
	}
	var marked int
	for _, c := range calls {
		if c.Mark == MarkTransport {
			marked++
		}
	}
	if marked != 1 {
		t.Fatalf("the unanswered call was dropped from a long history (issue 20, item 12): %d marked", marked)
	}
}

type rawOnly struct {
	api.Backend
	url string
}

func (b rawOnly) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, method, b.url+"/"+path, strings.NewReader(string(body)))
}

func (b rawOnly) Do(req *http.Request) (*http.Response, error) { return http.DefaultClient.Do(req) }

func TestRawExchangesAreRetriedAndRecorded(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch n.Add(1) {
		case 1:
			w.Header().Set("x-ms-error-code", "ServerBusy")
			w.Header().Set("x-ms-retry-after-ms", "1")
			w.WriteHeader(503)
		case 2:
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
		default:
			_, _ = w.Write(body)
		}
	}))
	defer srv.Close()
	r := NewWithRetry(rawOnly{url: srv.URL}, quick)
	raw := r.Capable().(driver.RawHTTP)
	req, err := raw.NewRequest(context.Background(), http.MethodPost, "Tables", []byte(`{"TableName":"t","Extra":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := raw.Do(req)
	if err != nil {
		t.Fatalf("503, then a reset, then the answer: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	if string(got) != `{"TableName":"t","Extra":1}` {
		t.Fatalf("the body was not sent again whole: %q", got)
	}
	if calls := r.Calls(); len(calls) != 3 || calls[2].Mark != MarkRetried {
		t.Fatalf("calls %+v: want three attempts, the last marked as a retried answer (a reset may hide an applied request)", calls)
	}
	if !r.Wrote("Extra") {
		t.Error("a raw JSON body's members count as written")
	}
}

// failing answers 500 InternalError to the first failures calls of each kind, then serves.
type failing struct {
	api.Backend
	failures, creates int
}

func (f *failing) CreateTable(context.Context, string) error {
	if f.creates++; f.creates <= f.failures {
		return spec.ErrInternalError.New()
	}
	return nil
}

// A 500 InternalError is retried as the SDKs retry it; one that persists is the backend's
// answer: no mark, no "answered to a retry", so the spec is judged on it (issue 31, item 6).
func TestA500IsRetriedAndAPersistentOneIsTheAnswer(t *testing.T) {
	once := &failing{failures: 1}
	r := NewWithRetry(once, quick)
	if err := r.CreateTable(context.Background(), "t1"); err != nil {
		t.Fatalf("one 500, then created: %v", err)
	}
	if calls := r.Calls(); len(calls) != 2 || calls[0].Mark != MarkRetriedAttempt {
		t.Fatalf("calls %+v: want the 500 retried, then the answer", calls)
	}
	always := &failing{failures: 100}
	r = NewWithRetry(always, quick)
	err := r.CreateTable(context.Background(), "t2")
	if e, ok := driver.AsError(err); !ok || e.Status != 500 || AfterRetryOfApplied(err) || driver.Unanswered(err) {
		t.Fatalf("a persistent 500 must come back as itself, judged as an answer: %v", err)
	}
	calls := r.Calls()
	if always.creates != 4 || len(calls) != 4 || calls[3].Mark != "" {
		t.Fatalf("%d creates, calls %+v: want 1 + 3 retries, the last unmarked", always.creates, calls)
	}
}

func TestARaw500IsRetriedAndAPersistentOneIsRead(t *testing.T) {
	var n atomic.Int32
	var failFirst atomic.Int32
	failFirst.Store(1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= failFirst.Load() {
			w.Header().Set("x-ms-error-code", "InternalError")
			w.WriteHeader(500)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	send := func() (*http.Response, []Call) {
		r := NewWithRetry(rawOnly{url: srv.URL}, quick)
		raw := r.Capable().(driver.RawHTTP)
		req, err := raw.NewRequest(context.Background(), http.MethodGet, "Tables", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatalf("raw exchange: %v", err)
		}
		return resp, r.Calls()
	}
	if resp, calls := send(); resp.StatusCode != 200 || len(calls) != 2 {
		t.Fatalf("a 500, then the answer: status %d, calls %+v", resp.StatusCode, calls)
	}
	n.Store(0)
	failFirst.Store(100)
	resp, calls := send()
	if resp.StatusCode != 500 || len(calls) != 4 || calls[3].Mark != "" {
		t.Fatalf("a persistent 500 is the answer the spec reads, unmarked: status %d, calls %+v", resp.StatusCode, calls)
	}
}

// lowerKeys answers every insert with the entity under its keys in lower case.
type lowerKeys struct{ api.Backend }

func (lowerKeys) InsertEntity(_ context.Context, _ string, e api.Entity) (api.Entity, error) {
	e.PartitionKey, e.RowKey = strings.ToLower(e.PartitionKey), strings.ToLower(e.RowKey)
	return e, nil
}

func TestKeysOfAnEntityCopiedFromAnAnswerAreNotTheSpecsOwn(t *testing.T) {
	r := NewWithRetry(lowerKeys{}, driver.DefaultRetry)
	ctx := context.Background()
	sent := api.NewEntity("Sales", "Jones", nil)
	got, err := r.InsertEntity(ctx, "t", sent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.InsertEntity(ctx, "copies", got); err != nil { // a copy of what came back
		t.Fatal(err)
	}
	if !r.MayHaveWrittenKey(sent.Key()) {
		t.Errorf("the key the spec sent is not noted as written")
	}
	if r.MayHaveWrittenKey(got.Key()) {
		t.Errorf("the key that came back in an answer, then copied, is noted as the spec's own")
	}
	if r.MayHaveWrittenKey(api.Key{PartitionKey: "other", RowKey: "r"}) {
		t.Errorf("a key the spec never wrote is noted as written")
	}
}
