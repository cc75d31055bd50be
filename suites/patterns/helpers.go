package patterns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// maxAttempts bounds the retries of optimistic-concurrency loops, so that a backend that
// answers 412 forever fails the spec instead of hanging it.
const maxAttempts = 50

// errCrash is what a worker returns when a spec makes it stop between two steps.
var errCrash = errors.New("worker stopped between two steps (crash injected by the spec)")

// mustQueryAll is scenario.AllEntities for setting up and reading back state.
func mustQueryAll(ctx context.Context, b api.Backend, table string, q api.Query) []api.Entity {
	GinkgoHelper()
	es, err := scenario.AllEntities(ctx, b, table, q)
	Expect(err).To(SucceedOnBackend(), "query %s with filter %q", table, q.Filter)
	return es
}

// mustUpdate writes e and returns the new ETag.
func mustUpdate(ctx context.Context, b api.Backend, table string, e api.Entity, mode api.UpdateMode, ifMatch string) string {
	GinkgoHelper()
	etag, err := b.UpdateEntity(ctx, table, e, mode, ifMatch)
	Expect(err).To(SucceedOnBackend(), "%s %s with If-Match %q", mode, e, ifMatch)
	return etag
}

// requireStaleRefused is the precondition of a pattern spec that makes its transaction fail
// by an ETag another client made stale: the transaction failed with 412
// UpdateConditionNotSatisfied (or 400 with that code), the subject of batch.condition.etag.
// What the failure leaves behind is the pattern's own subject.
func requireStaleRefused(f *framework.F, err error) {
	GinkgoHelper()
	f.Requires("batch.condition.etag", "the transaction with a stale ETag fails", func() {
		Expect(err).To(HaveFailedWithStatusIn([]int{400, 412}))
	})
	f.Requires(scenario.RuleTransactionFailureCode, "the failed transaction reports UpdateConditionNotSatisfied", func() {
		Expect(err).To(HaveFailedWithStatusIn([]int{400, 412}, "UpdateConditionNotSatisfied"))
	})
}

// statusAndCode renders a service error as "404 TableNotFound" for recorded choices (no
// request id, so that reports of two runs compare); anything else as DescribeOutcome does.
func statusAndCode(err error) string {
	if e, ok := driver.AsError(err); ok {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return DescribeOutcome(err)
}

// department returns the employees of one department of the default data set.
func department(name string) []fixtures.Employee {
	var out []fixtures.Employee
	for _, e := range fixtures.EmployeeRecords(0) {
		if e.Department == name {
			out = append(out, e)
		}
	}
	return out
}

// runConcurrently runs n workers at once and returns their errors, indexed by worker.
func runConcurrently(n int, work func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			defer GinkgoRecover()
			errs[i] = work(i)
		})
	}
	wg.Wait()
	return errs
}

// barrier lets n goroutines wait until all of them reached it. Each goroutine calls wait
// once; specs use it to make concurrent updaters read the same version before any writes.
type barrier struct {
	wg  sync.WaitGroup
	all chan struct{}
}

func newBarrier(n int) *barrier {
	b := &barrier{all: make(chan struct{})}
	b.wg.Add(n)
	go func() { b.wg.Wait(); close(b.all) }()
	return b
}

// barrierTimeout bounds a wait at a barrier: a worker that failed before reaching it must
// not hold the others (the barrier only makes conflicts likely; passing it late is harmless).
const barrierTimeout = 5 * time.Second

// wait marks one arrival and blocks until all arrived, ctx ends or barrierTimeout passes.
func (b *barrier) wait(ctx context.Context) {
	b.wg.Done()
	select {
	case <-b.all:
	case <-ctx.Done():
	case <-time.After(barrierTimeout):
	}
}

// describeErrors renders the non-nil errors of concurrent workers for a failure message.
func describeErrors(errs []error) string {
	var parts []string
	for i, err := range errs {
		if err != nil {
			parts = append(parts, fmt.Sprintf("worker %d: %v", i, err))
		}
	}
	return strings.Join(parts, "\n")
}
