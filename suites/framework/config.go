package framework

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Target is an opened backend.
type Target struct {
	Backend api.Backend
	Info    driver.Info
	Close   func() error
}

// Opener opens a backend by its name or NAME=CONNECTION_STRING (suites/provision.Open).
type Opener func(ctx context.Context, target string) (*Target, error)

// Config selects what the suite runs against.
type Config struct {
	// Backends are the backends to build the tree for, by name or NAME=CONNECTION_STRING.
	Backends []string
	// Open opens one of them.
	Open Opener
	// Profile is the expectation profile: "" or "storage" (Azure Table Storage), "cosmos".
	Profile string
	// BaselineDir overrides the embedded baselines (files named fixtures.BaselineFile).
	BaselineDir string
	// SpecTimeout bounds every spec; a backend that hangs fails the spec instead of the run.
	SpecTimeout time.Duration
	// KeepFailedTables keeps the tables of failed specs for inspection.
	KeepFailedTables bool
	// IgnoreBaselines runs without expected failures (used to rewrite a baseline).
	IgnoreBaselines bool
	// Retries, when set, says how many times a failed spec is run again on a backend (0:
	// never). Every spec that passed only when retried is listed by RetriedSpecs and
	// written to RetryLog. `conform run` never retries a spec: it reports a transport
	// error as such, and --retry-errors re-runs it on request.
	Retries func(backend string) int
	// RetryLog, when set, is a file that each spec passed only on a retry is appended to,
	// one line each (CONFORM_RETRY_LOG), so that `make test` can show them.
	RetryLog string
	// RetryDelay, when set, replaces the first delay of the retry policy of calls
	// (driver.DefaultRetry): tests under injected faults keep their time small.
	RetryDelay time.Duration
}

// DefaultSpecTimeout bounds a spec when Config.SpecTimeout is zero.
const DefaultSpecTimeout = 90 * time.Second

// ConfigFromEnv reads the configuration of a `go test` run:
// CONFORM_BACKENDS (comma-separated; default "reference"), CONFORM_PROFILE,
// CONFORM_BASELINE_DIR, CONFORM_SPEC_TIMEOUT (a Go duration), CONFORM_KEEP_FAILED=1,
// CONFORM_IGNORE_BASELINES=1, CONFORM_RETRY_LOG (a file), CONFORM_RETRY_DELAY
// (RetryDelayEnv). Connection strings hold ';' but never ',' so the comma split
// is safe.
func ConfigFromEnv(open Opener) Config {
	c := Config{Open: open, Profile: os.Getenv("CONFORM_PROFILE"), BaselineDir: os.Getenv("CONFORM_BASELINE_DIR")}
	for _, b := range strings.Split(os.Getenv("CONFORM_BACKENDS"), ",") {
		if b = strings.TrimSpace(b); b != "" {
			c.Backends = append(c.Backends, b)
		}
	}
	if len(c.Backends) == 0 {
		c.Backends = []string{"reference"}
	}
	if d, err := time.ParseDuration(os.Getenv("CONFORM_SPEC_TIMEOUT")); err == nil && d > 0 {
		c.SpecTimeout = d
	}
	c.KeepFailedTables = os.Getenv("CONFORM_KEEP_FAILED") == "1"
	c.IgnoreBaselines = os.Getenv("CONFORM_IGNORE_BASELINES") == "1"
	c.RetryLog = os.Getenv("CONFORM_RETRY_LOG")
	c.RetryDelay = RetryDelayFromEnv()
	return c
}

// BackendName returns the name a backend argument gives its backend: the part before '='
// of NAME=CONNECTION_STRING, or the whole argument.
func BackendName(arg string) string {
	if i := strings.IndexByte(arg, '='); i > 0 {
		return arg[:i]
	}
	return arg
}
