package patterns

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	. "github.com/tableconform/conform/suites/matchers"
)

// maxPages bounds every query a spec runs to its end; the data sets are small.
const maxPages = 200

// maxAttempts bounds the retries of optimistic-concurrency loops, so that a backend that
// answers 412 forever fails the spec instead of hanging it.
const maxAttempts = 50

// errCrash is what a worker returns when a spec makes it stop between two steps.
var errCrash = errors.New("worker stopped between two steps (crash injected by the spec)")

// props builds a property map from name/value pairs.
func props(kv ...any) map[string]api.Value {
	m := make(map[string]api.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return m
}

// entity builds an entity from keys and name/value pairs.
func entity(pk, rk string, kv ...any) api.Entity { return api.NewEntity(pk, rk, props(kv...)) }

// strip returns e as it would be sent: keys and custom properties only.
func strip(e api.Entity) api.Entity {
	return api.NewEntity(e.PartitionKey, e.RowKey, e.Clone().Properties)
}

// quote renders s as an OData string literal, doubling single quotes.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// and joins filter clauses, each in parentheses.
func and(clauses ...string) string {
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = "(" + c + ")"
	}
	return strings.Join(parts, " and ")
}

// cmp renders one comparison with a string literal: cmp("RowKey", "ge", "empid_000100").
func cmp(prop, op, value string) string { return prop + " " + op + " " + quote(value) }

// load stores es in table with batches, failing the spec on error (setting up).
func load(ctx context.Context, b driver.Backend, table string, es []api.Entity) {
	GinkgoHelper()
	Expect(fixtures.InsertAll(ctx, b, table, es)).To(SucceedOnBackend(), "setting up: load %d entities into %s", len(es), table)
}

// queryAll runs q to its end and returns every entity, in the order they came.
func queryAll(ctx context.Context, b driver.Backend, table string, q api.Query) ([]api.Entity, error) {
	r, err := QueryAll(ctx, b, table, q, maxPages)
	return r.Entities(), err
}

// mustQueryAll is queryAll for setting up and reading back state.
func mustQueryAll(ctx context.Context, b driver.Backend, table string, q api.Query) []api.Entity {
	GinkgoHelper()
	es, err := queryAll(ctx, b, table, q)
	Expect(err).To(SucceedOnBackend(), "query %s with filter %q", table, q.Filter)
	return es
}

// mustGet reads one entity.
func mustGet(ctx context.Context, b driver.Backend, table, pk, rk string) api.Entity {
	GinkgoHelper()
	got, err := b.GetEntity(ctx, table, pk, rk, nil)
	Expect(err).To(SucceedOnBackend(), "reading (%q,%q) from %s", pk, rk, table)
	return got
}

// mustUpdate writes e and returns the new ETag.
func mustUpdate(ctx context.Context, b driver.Backend, table string, e api.Entity, mode api.UpdateMode, ifMatch string) string {
	GinkgoHelper()
	etag, err := b.UpdateEntity(ctx, table, e, mode, ifMatch)
	Expect(err).To(SucceedOnBackend(), "%s %s with If-Match %q", mode, e, ifMatch)
	return etag
}

// keys returns the keys of es.
func keys(es []api.Entity) []api.Key {
	out := make([]api.Key, len(es))
	for i, e := range es {
		out[i] = e.Key()
	}
	return out
}

// sortByKey sorts es in the service's result order.
func sortByKey(es []api.Entity) []api.Entity {
	out := append([]api.Entity(nil), es...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out
}

// isStatus reports whether err is a service error with the given status.
func isStatus(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status
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
