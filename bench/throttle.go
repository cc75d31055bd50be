package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Throttled reports whether err is a throttling answer: 429 (Cosmos DB, EVIDENCE.md 8),
// 503 ServerBusy or 500 OperationTimedOut (Storage, EVIDENCE.md 9). The benchmarks retry it
// and count it as a throttle, never as an error.
func Throttled(err error) bool {
	var e *spec.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == 429 || e.Status == 503 || e.Status == 500 && e.Code == "OperationTimedOut"
}

// retryPolicy is how the benchmarks retry a throttling answer: as the Azure SDKs' shared
// retry policy does (EVIDENCE.md E-sdk-retry), with the SDKs' defaults in sdkRetry.
type retryPolicy struct {
	maxRetries int
	delay      time.Duration // the first wait without a Retry-After; grows as delay×(2^try−1)
	maxDelay   time.Duration
}

var sdkRetry = retryPolicy{maxRetries: 3, delay: 800 * time.Millisecond, maxDelay: 60 * time.Second}

// wait returns how long to wait before retry number try (from 1) of a request that got
// err, and false when the request is not retried: the retries are spent, or the answer
// asked for a wait longer than maxDelay.
func (p retryPolicy) wait(err error, try int) (time.Duration, bool) {
	if try > p.maxRetries {
		return 0, false
	}
	var e *spec.Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		if e.RetryAfter > p.maxDelay {
			return 0, false
		}
		return e.RetryAfter, true
	}
	d := time.Duration(1<<min(try, 30)-1) * p.delay
	d = time.Duration(float64(d) * (0.8 + rand.Float64()/2))
	return min(d, p.maxDelay), true
}

// retrying is a backend whose requests are retried on throttling as the SDKs retry them,
// without measuring: what loading, verification and clean-up go through, so that a
// throttling service fails none of them. Safe for concurrent use when its backend is.
type retrying struct{ api.Backend }

// retry runs call until it is not throttled or sdkRetry gives up.
func retry(ctx context.Context, call func() error) error {
	for try := 1; ; try++ {
		err := call()
		if err == nil || !Throttled(err) {
			return err
		}
		wait, again := sdkRetry.wait(err, try)
		if !again {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (r retrying) CreateTable(ctx context.Context, name string) error {
	return retry(ctx, func() error { return r.Backend.CreateTable(ctx, name) })
}

func (r retrying) DeleteTable(ctx context.Context, name string) error {
	return retry(ctx, func() error { return r.Backend.DeleteTable(ctx, name) })
}

func (r retrying) QueryTables(ctx context.Context, q api.TableQuery) (p api.TablePage, err error) {
	err = retry(ctx, func() error { p, err = r.Backend.QueryTables(ctx, q); return err })
	return p, err
}

func (r retrying) InsertEntity(ctx context.Context, table string, e api.Entity) (out api.Entity, err error) {
	err = retry(ctx, func() error { out, err = r.Backend.InsertEntity(ctx, table, e); return err })
	return out, err
}

func (r retrying) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (etag string, err error) {
	err = retry(ctx, func() error { etag, err = r.Backend.UpdateEntity(ctx, table, e, mode, ifMatch); return err })
	return etag, err
}

func (r retrying) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return retry(ctx, func() error { return r.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch) })
}

func (r retrying) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (e api.Entity, err error) {
	err = retry(ctx, func() error { e, err = r.Backend.GetEntity(ctx, table, pk, rk, sel); return err })
	return e, err
}

func (r retrying) QueryEntities(ctx context.Context, table string, q api.Query) (p api.Page, err error) {
	err = retry(ctx, func() error { p, err = r.Backend.QueryEntities(ctx, table, q); return err })
	return p, err
}

func (r retrying) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) (res []api.BatchResult, err error) {
	err = retry(ctx, func() error { res, err = r.Backend.SubmitBatch(ctx, table, ops); return err })
	return res, err
}

var _ api.Backend = retrying{}
