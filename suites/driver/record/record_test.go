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
