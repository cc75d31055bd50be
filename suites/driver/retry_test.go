package driver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

func TestRetryableAnswersAreTheSDKsBusyAndTimeoutAnswers(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		err       error
		retryable bool
		applied   bool
	}{
		{spec.ErrServerBusy.New(), true, false},
		{&spec.Error{Status: 429, Code: "TooManyRequests"}, true, false},
		{&spec.Error{Status: 500, Code: "OperationTimedOut"}, true, true},
		{&spec.Error{Status: 504}, true, true},
		{&TransportError{Op: "insert", Err: io.ErrUnexpectedEOF}, true, true},
		{spec.ErrInternalError.New(), true, true},
		{&spec.Error{Status: 500}, true, true},
		{&spec.Error{Status: 501, Code: "NotImplemented"}, false, false},
		{spec.ErrTableAlreadyExists.New(), false, true},
		{NewMalformedAnswer("get", 200, []byte("{not json"), errors.New("bad")), false, false},
		{&TransportError{Op: "insert", Err: context.DeadlineExceeded}, false, true},
		{nil, false, false},
	}
	for _, c := range cases {
		if got := Retryable(ctx, c.err); got != c.retryable {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.retryable)
		}
		if c.retryable {
			if got := MayHaveBeenApplied(c.err); got != c.applied {
				t.Errorf("MayHaveBeenApplied(%v) = %v, want %v", c.err, got, c.applied)
			}
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if Retryable(cancelled, spec.ErrServerBusy.New()) {
		t.Error("a cancelled context must stop the retries")
	}
}

func TestRetryHonoursTheWaitTheAnswerAsksFor(t *testing.T) {
	p := RetryPolicy{MaxRetries: 3, Delay: time.Hour, MaxDelay: time.Second}
	h := http.Header{}
	h.Set("x-ms-retry-after-ms", "30")
	busy := &spec.Error{Status: 503, Code: "ServerBusy", RetryAfter: spec.RetryAfter(h, time.Now())}
	if d, ok := p.Wait(1, busy); !ok || d != 30*time.Millisecond {
		t.Errorf("Wait after x-ms-retry-after-ms: 30 = %v, %v", d, ok)
	}
	h = http.Header{}
	h.Set("Retry-After", "5")
	if d, ok := p.Wait(1, &spec.Error{Status: 503, RetryAfter: spec.RetryAfter(h, time.Now())}); ok {
		t.Errorf("a wait over MaxDelay must not be retried, got %v", d)
	}
	if _, ok := p.Wait(4, busy); ok {
		t.Error("retried more than MaxRetries")
	}
	quick := RetryPolicy{MaxRetries: 3, Delay: time.Millisecond, MaxDelay: time.Second}
	calls := 0
	err, applied := quick.Retry(context.Background(), func(context.Context) error {
		calls++
		switch calls {
		case 1:
			return &spec.Error{Status: 500, Code: "OperationTimedOut"}
		case 2:
			return busy
		}
		return spec.ErrTableAlreadyExists.New()
	}, nil)
	if calls != 3 || !applied || !errors.Is(err, err) {
		t.Fatalf("500 OperationTimedOut, 503, 409: %d calls, applied %v, %v", calls, applied, err)
	}
	if e, ok := AsError(err); !ok || e.Code != "TableAlreadyExists" {
		t.Fatalf("the last answer must be returned, got %v", err)
	}
	calls = 0
	err, _ = quick.Retry(context.Background(), func(context.Context) error { calls++; return busy }, nil)
	if calls != 4 || !Unanswered(err) {
		t.Fatalf("always busy: %d calls (want 1 + 3 retries), unanswered %v", calls, Unanswered(err))
	}
}

// A 500 InternalError is retried as azcore retries it (its default StatusCodes hold 500);
// one that persists through the retries is the backend's answer, not "no answer" (issue 31,
// item 6).
func TestA500IsRetriedAndOneThatPersistsIsEvidence(t *testing.T) {
	quick := RetryPolicy{MaxRetries: 3, Delay: time.Millisecond, MaxDelay: time.Second}
	calls := 0
	err, applied := quick.Retry(context.Background(), func(context.Context) error {
		if calls++; calls == 1 {
			return spec.ErrInternalError.New()
		}
		return nil
	}, nil)
	if err != nil || calls != 2 || !applied {
		t.Fatalf("a 500, then the answer: %d calls, applied %v, %v (want 2 calls, the success, and the 500 counted as maybe applied)", calls, applied, err)
	}
	calls = 0
	err, _ = quick.Retry(context.Background(), func(context.Context) error { calls++; return spec.ErrInternalError.New() }, nil)
	if calls != 4 {
		t.Fatalf("always 500: %d calls, want 1 + 3 retries", calls)
	}
	if Unanswered(err) || !ServerFault(err) {
		t.Fatalf("a 500 that persists is evidence: Unanswered %v, ServerFault %v", Unanswered(err), ServerFault(err))
	}
	timedOut := &spec.Error{Status: 500, Code: "OperationTimedOut"}
	if ServerFault(timedOut) || !Unanswered(timedOut) {
		t.Error("a 500 OperationTimedOut is the service timing out: unanswered, not a server fault")
	}
}
