package all_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"

	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
)

// TestConformance runs the whole suite against CONFORM_BACKENDS (default "reference").
// azurite-docker is left out, with one line, where no Docker engine answers.
func TestConformance(t *testing.T) {
	cfg := framework.ConfigFromEnv(all.Open)
	cfg.Backends = withoutUnavailableDocker(t, cfg.Backends)
	if len(cfg.Backends) == 0 {
		t.Skip("no backend left to run")
	}
	cfg.Retries = retries
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	ginkgo.ReportAfterSuite("conform summary", func(r ginkgo.Report) {
		for _, line := range backendSummaries(r, cfg.Profile) {
			t.Log(summaryPrefix + line)
		}
	})
	framework.RunSuite(t, "conform", cfg, suiteConfig, reporterConfig)
}

// summaryPrefix starts the lines make test repeats at its end (internal/testprogress).
const summaryPrefix = "conform summary: "

// backendSummaries says, per backend of a run, how many specs ran and how they ended, as
// the report classifies them (report.SpecOutcome): passed, expected failures (listed in
// the baseline), flaky (listed as flaky, or passed only on a second attempt), retried
// (run more than once), blocked (a precondition of another rule failed, so the spec's
// subject never ran; the baseline may expect it) and failed.
func backendSummaries(r ginkgo.Report, profile string) []string {
	type tally struct{ specs, passed, expected, flaky, retried, blocked, failed, skipped int }
	byBackend := map[string]*tally{}
	var order []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || report.IsLeftOut(s, report.SelectionOf(r.SuiteConfig.LabelFilter)) {
			continue
		}
		backend, rule := "", spec.Rule{}
		found := false
		for _, l := range s.Labels() {
			if b, ok := strings.CutPrefix(l, framework.LabelBackend); ok {
				backend = b
			} else if ru, ok := spec.LookupRule(l); ok {
				rule, found = ru, true
			}
		}
		if backend == "" || !found {
			continue
		}
		c := byBackend[backend]
		if c == nil {
			c = &tally{}
			byBackend[backend] = c
			order = append(order, backend)
		}
		c.specs++
		if s.NumAttempts > 1 {
			c.retried++
		}
		switch report.SpecOutcome(s, r.SuiteConfig.LabelFilter, rule, profile).Outcome {
		case verdict.Pass, verdict.Info:
			if s.NumAttempts > 1 {
				c.flaky++
			} else {
				c.passed++
			}
		case verdict.ExpectedFail, verdict.DocumentedDiff:
			c.expected++
		case verdict.Flaky:
			c.flaky++
		case verdict.Skipped, verdict.Partial:
			c.skipped++
		case verdict.Blocked:
			c.blocked++ // its own subject never ran: not a failure of its rule
		default:
			c.failed++
		}
	}
	var lines []string
	for _, b := range order {
		c := byBackend[b]
		lines = append(lines, fmt.Sprintf("%s: %d specs, %d passed, %d expected failures, %d flaky, %d retried, %d skipped, %d blocked, %d failed",
			b, c.specs, c.passed, c.expected, c.flaky, c.retried, c.skipped, c.blocked, c.failed))
	}
	return lines
}

// retries is how many times `go test` runs a failed spec again on a backend: once on a
// backend outside the project's own code (Azurite: through Docker's port proxy a concurrent
// spec saw EOF once in two runs), so that CI does not hang on one dropped connection while
// a failure that repeats still fails; never on the reference or a mutant of it, where a
// failure that goes away on a retry is a race in our own code. Each retry is listed
// (framework.RetriedSpecs, and CONFORM_RETRY_LOG, which `make test` prints).
func retries(backend string) int {
	base := strings.TrimSuffix(backend, all.SDKSuffix)
	if strings.HasPrefix(base, provision.Reference) || base == provision.Model || strings.HasPrefix(base, mutant.Prefix) {
		return 0
	}
	return 1
}

// Issue 20, item 6: make test never retries a spec of the reference.
func TestRetriesNeverApplyToTheReference(t *testing.T) {
	for _, b := range []string{provision.Reference, provision.Model, provision.ReferenceHTTP, provision.Reference + all.SDKSuffix, mutant.Prefix + "batch-not-atomic"} {
		if n := retries(b); n != 0 {
			t.Errorf("%s is retried %d times", b, n)
		}
	}
	for _, b := range []string{provision.Azurite, provision.AzuriteDocker, provision.Azurite + all.SDKSuffix, "mine"} {
		if retries(b) != 1 {
			t.Errorf("%s is not retried", b)
		}
	}
}

// withoutUnavailableDocker drops azurite-docker (and azurite-docker+sdk) when no Docker
// engine answers, and stops the test in one line when testcontainers would dial outside the
// machine (provision.CheckDocker).
func withoutUnavailableDocker(t *testing.T, backends []string) []string {
	var kept []string
	for _, b := range backends {
		name := framework.BackendName(b)
		if name != provision.AzuriteDocker && name != provision.AzuriteDocker+all.SDKSuffix {
			kept = append(kept, b)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := provision.CheckDocker(ctx)
		cancel()
		switch {
		case err == nil:
			kept = append(kept, b)
		case errors.Is(err, provision.ErrDockerUnavailable):
			t.Log(summaryPrefix + name + " left out: " + err.Error()) // make test says it in one line
		default:
			t.Fatal(err)
		}
	}
	return kept
}
