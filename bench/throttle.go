package bench

import (
	"errors"
	"math/rand/v2"
	"time"

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
