package framework

import (
	"context"
	"os"
	"time"

	"github.com/tableconform/conform/suites/driver"
)

// RetryDelayEnv overrides the first delay of the retry policy (a Go duration), for tests of
// the harness under injected faults that must stay short; a run against a real service
// keeps the SDKs' delays.
const RetryDelayEnv = "CONFORM_RETRY_DELAY"

// retryPolicy is the policy of cfg: driver.DefaultRetry, with Config.RetryDelay as its first
// delay when set.
func retryPolicy(cfg Config) driver.RetryPolicy {
	p := driver.DefaultRetry
	if cfg.RetryDelay > 0 {
		p.Delay = cfg.RetryDelay
	}
	return p
}

// RetryDelayFromEnv reads RetryDelayEnv; zero when unset or unreadable.
func RetryDelayFromEnv() time.Duration {
	d, err := time.ParseDuration(os.Getenv(RetryDelayEnv))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}

// setupPolicy is the retry policy of setup and cleanup steps outside a spec's recorder.
var setupPolicy = driver.DefaultRetry

// RetrySetup runs a setup or cleanup step (deleting a spec's table, sweeping a run's
// tables), retrying as the SDKs do while it gets no answer or the service throttles
// (driver.RetryPolicy). The calls of a spec go through its recorder, which retries them
// the same way and records each attempt.
func RetrySetup(ctx context.Context, step func(context.Context) error) error {
	err, _ := setupPolicy.Retry(ctx, step, nil)
	return err
}
