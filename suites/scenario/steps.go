package scenario

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
)

// MaxPages bounds the queries over the design guide's small data sets (the pattern and
// relationship specs) that a spec runs to their end.
const MaxPages = 200

// MaxPagesFor bounds the pages a query over n entities may take before the spec gives up:
// generous for backends that return short or empty pages, finite for one that never ends a
// query.
func MaxPagesFor(n int) int { return 2*n + 50 }

// singleInsertLimit is the largest data set Load stores one insert at a time.
const singleInsertLimit = 200

// Load stores es in table for a spec whose rule is not about transactions: one insert at
// a time (up to singleInsertLimit entities), else with entity group transactions whose
// refusal is retried as single inserts, so that a backend with broken transactions still
// gets its data. A refused insert blocks the spec (framework.Blocked by
// modify.insert.stores): the spec's own rule never ran.
func Load(ctx context.Context, b api.Backend, table string, es []api.Entity) {
	ginkgo.GinkgoHelper()
	if err := LoadEntities(ctx, b, table, es); err != nil {
		framework.Blocked("modify.insert.stores", fmt.Sprintf("load %d entities into %s", len(es), table), err)
	}
}

// LoadEntities is Load's loading, returning the first refusal.
func LoadEntities(ctx context.Context, b api.Backend, table string, es []api.Entity) error {
	if len(es) <= singleInsertLimit {
		return insertEach(ctx, b, table, es, false)
	}
	for _, group := range fixtures.Batches(es) {
		ops := make([]api.BatchOp, len(group))
		for i, e := range group {
			ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: e}
		}
		_, err := b.SubmitBatch(ctx, table, ops)
		if err == nil {
			continue
		}
		if driver.IsTransport(err) {
			return err
		}
		// A refused transaction: store its entities one by one (one a broken backend
		// applied in part is already there).
		if err := insertEach(ctx, b, table, group, true); err != nil {
			return err
		}
	}
	return nil
}

func insertEach(ctx context.Context, b api.Backend, table string, es []api.Entity, presentIsStored bool) error {
	for _, e := range es {
		if _, err := b.InsertEntity(ctx, table, e); err != nil {
			if (presentIsStored || record.AfterRetryOfApplied(err)) && IsStatus(err, 409) {
				continue // stored already, by this load (a retried insert whose answer was lost)
			}
			return fmt.Errorf("insert (%q,%q) into %s: %w", e.PartitionKey, e.RowKey, table, err)
		}
	}
	return nil
}

// AllEntities runs q to its end (at most MaxPages pages, matchers.QueryAll) and returns
// every entity, in the order they came, with the query's error.
func AllEntities(ctx context.Context, b api.Backend, table string, q api.Query) ([]api.Entity, error) {
	r, err := matchers.QueryAll(ctx, b, table, q, MaxPages)
	return r.Entities(), err
}

// MustQueryAll runs q to its end over a table of about n entities (at most MaxPagesFor(n)
// pages) and fails the spec, with the optional Gomega description, unless it succeeds.
func MustQueryAll(ctx context.Context, b api.Backend, table string, q api.Query, n int, description ...any) matchers.Result {
	ginkgo.GinkgoHelper()
	r, err := matchers.QueryAll(ctx, b, table, q, MaxPagesFor(n))
	gomega.Expect(err).To(matchers.SucceedOnBackend(), description...)
	return r
}

// MustGet reads one entity and fails the spec unless the backend answers it.
func MustGet(ctx context.Context, b api.Backend, table, pk, rk string) api.Entity {
	ginkgo.GinkgoHelper()
	got, err := b.GetEntity(ctx, table, pk, rk, nil)
	gomega.Expect(err).To(matchers.SucceedOnBackend(), "reading (%q,%q) from %s", pk, rk, table)
	return got
}

// IsStatus reports whether err is a service error with the given HTTP status.
func IsStatus(err error, status int) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == status
}
