package scenario

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/matchers"
)

// MaxPages bounds the queries over the design guide's small data sets (the pattern and
// relationship specs) that a spec runs to their end.
const MaxPages = 200

// MaxPagesFor bounds the pages a query over n entities may take before the spec gives up:
// generous for backends that return short or empty pages, finite for one that never ends a
// query.
func MaxPagesFor(n int) int { return 2*n + 50 }

// Load stores es in table with entity group transactions (fixtures.InsertAll) and fails the
// spec when the backend refuses (setting up).
func Load(ctx context.Context, b api.Backend, table string, es []api.Entity) {
	ginkgo.GinkgoHelper()
	gomega.Expect(fixtures.InsertAll(ctx, b, table, es)).To(matchers.SucceedOnBackend(), "setting up: load %d entities into %s", len(es), table)
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
