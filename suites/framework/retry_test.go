package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

func TestRetrySetupRetriesOnlyThrottling(t *testing.T) {
	defer func(p driver.RetryPolicy) { setupPolicy = p }(setupPolicy)
	setupPolicy = driver.RetryPolicy{MaxRetries: 5, Delay: time.Millisecond, MaxDelay: time.Second}
	calls := 0
	busy := spec.ErrServerBusy.New()
	err := RetrySetup(context.Background(), func(context.Context) error {
		calls++
		if calls < 3 {
			return busy
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("throttled twice then fine: err %v after %d calls", err, calls)
	}
	calls = 0
	conflict := spec.ErrTableAlreadyExists.New()
	if err := RetrySetup(context.Background(), func(context.Context) error { calls++; return conflict }); !errors.Is(err, conflict) || calls != 1 {
		t.Fatalf("a refusal must not be retried: %v after %d calls", err, calls)
	}
	calls = 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := RetrySetup(ctx, func(context.Context) error { calls++; return busy }); err == nil || calls != 1 {
		t.Fatalf("a cancelled context must stop the retries: %v after %d calls", err, calls)
	}
}
