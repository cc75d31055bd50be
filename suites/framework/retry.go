package framework

import (
	"context"
	"time"

	"github.com/tableconform/conform/suites/driver"
)

// Throttled reports whether err is a real service's throttling answer: 503 ServerBusy,
// 500 OperationTimedOut (EVIDENCE.md 9), or 429 (Cosmos DB, EVIDENCE.md 8).
func Throttled(err error) bool {
	e, ok := driver.AsError(err)
	if !ok {
		return false
	}
	return e.Status == 503 || e.Status == 429 || (e.Status == 500 && e.Code == "OperationTimedOut")
}

// SetupAttempts bounds the retries of a setup or cleanup step.
const SetupAttempts = 6

// RetrySetup runs a setup or cleanup step (creating or deleting a spec's table, loading its
// data), retrying with exponential backoff while the service throttles. The operation a spec
// measures is never retried: its throttling is reported as what the backend answered.
func RetrySetup(ctx context.Context, step func(context.Context) error) error {
	delay := 200 * time.Millisecond
	var err error
	for attempt := 0; attempt < SetupAttempts; attempt++ {
		if err = step(ctx); err == nil || !Throttled(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
	return err
}
