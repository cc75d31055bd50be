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
	return throttledCase(t, "PointGet", false, every, workers, limit)
}

// throttledCase runs the first case of family against a reference server behind a
// throttler that throttles one request in every, from the loading on when always is set,
// else during the timed phase only.
func throttledCase(t *testing.T, family string, always bool, every int64, workers int, limit Limit) (Result, *throttler, error) {
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
	th.on.Store(always)
	l, err := Prepare(ctx, env, CasesOf(family, false)[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(context.Background()); err != nil {
			t.Errorf("clean-up: %v", err)
		}
	})
	th.on.Store(true)
	res, err := l.Run(ctx, limit, nil)
	th.on.Store(always)
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

// TestThrottlingFailsNoLoadingOrCheck: loading, the read-backs that check a run's writes and
// the clean-up are retried on throttling too, unmeasured: a throttling service fails none
// of them, and only the timed phase's throttles are counted.
func TestThrottlingFailsNoLoadingOrCheck(t *testing.T) {
	res, th, err := throttledCase(t, "Insert", true, 2, 1, Limit{Ops: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 100 || res.Errors != 0 || res.GaveUp != 0 || res.Throttles == 0 || th.throttled.Load() <= res.Throttles {
		t.Fatalf("requests %d errors %d given up %d throttles %d; the server throttled %d in all",
			res.Requests, res.Errors, res.GaveUp, res.Throttles, th.throttled.Load())
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

func TestPaceRampsBetweenRates(t *testing.T) {
	flat := Limit{Rate: 100}
	if got := flat.startOf(250); got != 2500*time.Millisecond {
		t.Errorf("flat 100/s: step 250 at %v, want 2.5s", got)
	}
	for _, l := range []Limit{{Duration: 10 * time.Second, Rate: 100, RateTo: 300}, {Duration: 10 * time.Second, Rate: 300, RateTo: 100}, {Ops: 2000, Rate: 100, RateTo: 300}} {
		// Over 10 s the mean rate is 200/s: 2000 steps; after that, steps go at RateTo.
		if got := l.startOf(2000); got < 9999*time.Millisecond || got > 10001*time.Millisecond {
			t.Errorf("%+v: step 2000 at %v, want 10s", l, got)
		}
		if got := l.startOf(2000 + int64(l.RateTo)); got < 10999*time.Millisecond || got > 11001*time.Millisecond {
			t.Errorf("%+v: a second past the ramp at %v, want 11s", l, got)
		}
		prev := time.Duration(-1)
		for n := int64(0); n < 2500; n += 7 {
			at := l.startOf(n)
			if at <= prev {
				t.Fatalf("%+v: step %d at %v, not after %v", l, n, at, prev)
			}
			prev = at
		}
		// The pace at the start is Rate: the first second holds about Rate steps.
		if got := l.startOf(int64(l.Rate)); got < 900*time.Millisecond || got > 1100*time.Millisecond {
			t.Errorf("%+v: step %v at %v, want about 1s", l, l.Rate, got)
		}
	}
}
