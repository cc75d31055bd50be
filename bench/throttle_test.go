package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/provision"
)

// throttler answers a share of the requests with a throttling answer, as Storage (503
// ServerBusy) and Cosmos DB (429) do, once on is set.
type throttler struct {
	inner     http.Handler
	on        atomic.Bool
	every     int64 // throttle one request in every; 1 throttles all
	n         atomic.Int64
	throttled atomic.Int64
}

func (t *throttler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if t.on.Load() {
		if n := t.n.Add(1); n%t.every == 0 {
			t.throttled.Add(1)
			status, code, header := http.StatusServiceUnavailable, "ServerBusy", "X-Ms-Retry-After-Ms"
			if n%(2*t.every) == 0 {
				status, code, header = http.StatusTooManyRequests, "TooManyRequests", "Retry-After-Ms"
			}
			w.Header().Set(header, "1")
			w.Header().Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
			w.Header().Set("X-Ms-Error-Code", code)
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"odata.error":{"code":"` + code + `","message":{"lang":"en-US","value":"Please retry."}}}`))
			return
		}
	}
	t.inner.ServeHTTP(w, r)
}

// throttledRun runs PointGet through the REST driver against a reference server behind a
// throttler that throttles one request in every.
func throttledRun(t *testing.T, every int64, workers int, limit Limit) (Result, *throttler, error) {
	th := &throttler{inner: tableserver.New(reference.New()), every: every}
	srv := httptest.NewServer(th)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs := "throttled=DefaultEndpointsProtocol=http;AccountName=" + wire.DevAccountName + ";AccountKey=" + wire.DevAccountKey +
		";TableEndpoint=" + srv.URL + "/" + wire.DevAccountName + ";"
	tgt, err := provision.Open(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tgt.Close() })
	env := &Env{Backend: tgt.Backend, Name: "throttled", Seed: 3, Workers: workers, Quick: true}
	l, err := Prepare(ctx, env, CasesOf("PointGet", false)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { th.on.Store(false); _ = l.Close(context.Background()) })
	th.on.Store(true)
	res, err := l.Run(ctx, limit, nil)
	th.on.Store(false)
	return res, th, err
}

// TestThrottlingIsRetriedAndCounted: 503 ServerBusy and 429 answers are retried after the
// wait they ask for, counted as throttles per kind, per second and per partition, and
// never as errors.
func TestThrottlingIsRetriedAndCounted(t *testing.T) {
	res, th, err := throttledRun(t, 3, 1, Limit{Ops: 300}) // one worker: a retry is never throttled twice
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 300 || res.Errors != 0 || res.GaveUp != 0 {
		t.Fatalf("requests %d errors %d given up %d; want 300, 0, 0", res.Requests, res.Errors, res.GaveUp)
	}
	if res.Throttles == 0 || res.Throttles != th.throttled.Load() {
		t.Fatalf("throttles %d, the server throttled %d", res.Throttles, th.throttled.Load())
	}
	var perSecond, perPartition, requests int64
	for _, s := range res.Raw.Series {
		perSecond += s.Throttles
		requests += s.Requests
	}
	for _, p := range res.Raw.Partitions {
		perPartition += p.Throttles
	}
	if perSecond != res.Throttles || perPartition != res.Throttles || requests != res.Requests {
		t.Fatalf("throttles per second %d, per partition %d, requests per second %d; want %d, %d, %d",
			perSecond, perPartition, requests, res.Throttles, res.Throttles, res.Requests)
	}
}

// TestThrottlingThatNeverEndsIsGivenUp: a request still throttled after the SDKs' three
// retries is given up and counted as such; the run does not fail on it.
func TestThrottlingThatNeverEndsIsGivenUp(t *testing.T) {
	res, th, err := throttledRun(t, 1, 4, Limit{Ops: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 20 || res.GaveUp != 20 || res.Errors != 0 || res.Throttles != 20*int64(1+sdkRetry.maxRetries) || th.throttled.Load() != res.Throttles {
		t.Fatalf("requests %d given up %d errors %d throttles %d (server %d)", res.Requests, res.GaveUp, res.Errors, res.Throttles, th.throttled.Load())
	}
}

func TestRetryPolicyWaitsAsTheSDKs(t *testing.T) {
	busy := func(after time.Duration) error {
		return wire.DecodeError(503, http.Header{"X-Ms-Retry-After-Ms": {strings.TrimSuffix(after.String(), "ms")}}, nil)
	}
	if d, ok := sdkRetry.wait(busy(5*time.Millisecond), 1); !ok || d != 5*time.Millisecond {
		t.Errorf("asked 5ms: %v %v", d, ok)
	}
	if _, ok := sdkRetry.wait(busy(5*time.Millisecond), 4); ok {
		t.Error("a fourth retry")
	}
	plain := wire.DecodeError(503, http.Header{}, nil)
	for try, lo := range map[int]time.Duration{1: 640 * time.Millisecond, 2: 1920 * time.Millisecond, 3: 4480 * time.Millisecond} {
		if d, ok := sdkRetry.wait(plain, try); !ok || d < lo || d > lo*13/8 {
			t.Errorf("try %d without Retry-After: %v, want %v to %v", try, d, lo, lo*13/8)
		}
	}
	if _, ok := sdkRetry.wait(wire.DecodeError(429, http.Header{"Retry-After": {"61"}}, nil), 1); ok {
		t.Error("a wait past 60 s is retried")
	}
	if Throttled(wire.DecodeError(500, http.Header{}, []byte(`{"odata.error":{"code":"InternalError"}}`))) || !Throttled(wire.DecodeError(500, http.Header{"X-Ms-Error-Code": {"OperationTimedOut"}}, nil)) {
		t.Error("500: only OperationTimedOut is throttling")
	}
}
