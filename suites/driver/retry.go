package driver

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"
)

// RetryPolicy is how conform retries a call that got no answer, or an answer the Azure SDKs
// retry, as they do (azcore's defaults, runtime/policy_retry.go of azcore v1.20.0: the
// statuses 408, 429, 500, 502, 503 and 504, three retries, an exponential delay from 800 ms
// with jitter, at most 60 s, and the wait an answer asks for in Retry-After,
// x-ms-retry-after-ms or retry-after-ms; EVIDENCE.md 9). A real account throttles now and
// then, and a proxy in front of a backend fails a request now and then: such an answer says
// nothing about the rule a spec checks until it persists.
type RetryPolicy struct {
	// MaxRetries is how many times a call is retried after its first attempt.
	MaxRetries int
	// Delay is the first delay; the delay before retry n is (2^n - 1) x Delay, with jitter.
	Delay time.Duration
	// MaxDelay caps a delay; an answer asking for a longer wait is not retried.
	MaxDelay time.Duration
}

// DefaultRetry is azcore's policy.
var DefaultRetry = RetryPolicy{MaxRetries: 3, Delay: 800 * time.Millisecond, MaxDelay: 60 * time.Second}

// Retryable reports whether err is worth retrying: no answer came back (a reset, a dropped
// connection), or the answer is one of the statuses the Azure SDKs retry: 408, 429, 500,
// 502, 503 and 504 (azcore's default RetryOptions.StatusCodes), whatever its code. An
// answer the driver cannot read, a request it cannot send and the end of the caller's
// context are not retried.
func Retryable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	if IsTransport(err) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	e, ok := AsError(err)
	if !ok {
		return false
	}
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// ServerFault reports whether err is a 500 other than OperationTimedOut (InternalError, or a
// 500 without a code): the backend failed on what was asked. It is retried (Retryable), as
// the SDKs retry it; one that persists after the retries is the backend's answer and stays
// evidence, never "no answer" (Unanswered) and never an answer to a retry of an applied
// attempt.
func ServerFault(err error) bool {
	e, ok := AsError(err)
	return ok && e.Status == http.StatusInternalServerError && e.Code != "OperationTimedOut"
}

// MayHaveBeenApplied reports whether a retryable failure may hide a request the service
// carried out: the answer was lost (a reset after the request was sent), the service timed
// out while working on it (500 OperationTimedOut, 504, 502, 408) or failed part way (500).
// A busy service (503, 429) refused the request before doing anything.
func MayHaveBeenApplied(err error) bool {
	if IsTransport(err) {
		return true
	}
	e, ok := AsError(err)
	return ok && e.Status != http.StatusServiceUnavailable && e.Status != http.StatusTooManyRequests
}

// Wait returns the delay before retry n (1 for the first retry) after err, and false when
// the policy does not retry again: n is over MaxRetries, or the answer asks for a longer
// wait than MaxDelay.
func (p RetryPolicy) Wait(n int, err error) (time.Duration, bool) {
	if n > p.MaxRetries {
		return 0, false
	}
	if e, ok := AsError(err); ok && e.RetryAfter > 0 {
		if e.RetryAfter > p.MaxDelay {
			return 0, false
		}
		return e.RetryAfter, true
	}
	d := time.Duration(float64(p.Delay) * float64(int64(1)<<min(n, 30)-1) * (0.8 + rand.Float64()/2))
	return min(d, p.MaxDelay), true
}

// Retry runs call, and again after each retryable failure while the policy allows, sleeping
// as Wait says. attempt is told each attempt's error (nil for a success) before any wait.
// It returns the last error and whether an earlier attempt may have been applied
// (MayHaveBeenApplied), so that an answer such as 409 to a create whose first attempt was
// carried out is read as what it is.
func (p RetryPolicy) Retry(ctx context.Context, call func(context.Context) error, attempt func(n int, err error)) (err error, mayHaveBeenApplied bool) {
	for n := 0; ; n++ {
		err = call(ctx)
		if attempt != nil {
			attempt(n, err)
		}
		if !Retryable(ctx, err) {
			return err, mayHaveBeenApplied
		}
		wait, again := p.Wait(n+1, err)
		if !again {
			return err, mayHaveBeenApplied
		}
		mayHaveBeenApplied = mayHaveBeenApplied || MayHaveBeenApplied(err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err, mayHaveBeenApplied
		case <-t.C:
		}
	}
}

// Unanswered reports whether err, the last answer after the retries, still says nothing
// about the backend's behaviour: no answer, or a service still busy or timing out
// (Retryable, but for a ServerFault, which is evidence). A spec that meets one is an error
// (inconclusive), never a rule's failure.
func Unanswered(err error) bool {
	return IsTransport(err) || Retryable(context.Background(), err) && !ServerFault(err)
}
