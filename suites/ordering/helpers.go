package ordering

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// rowKeys returns the keys of partition pk with the given RowKeys, in that order.
func rowKeys(pk string, rks ...string) []api.Key {
	out := make([]api.Key, len(rks))
	for i, rk := range rks {
		out[i] = scenario.Key(pk, rk)
	}
	return out
}

// shuffled returns keys in an order fixed by seed, so that no backend passes by keeping
// insertion order. Failure messages print the seed and the insertion order.
func shuffled(keys []api.Key, seed uint64) []api.Key {
	out := append([]api.Key(nil), keys...)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	// Never insert in the expected order: a backend that keeps insertion order must fail.
	same := true
	for i := range out {
		if out[i] != keys[i] {
			same = false
			break
		}
	}
	if same && len(out) > 1 {
		out[0], out[len(out)-1] = out[len(out)-1], out[0]
	}
	return out
}

// loadKeys creates a table and inserts one entity per key, in the order given.
func loadKeys(ctx context.Context, f *framework.F, keys []api.Key) string {
	GinkgoHelper()
	table := f.NewTable(ctx)
	es := make([]api.Entity, len(keys))
	for i, k := range keys {
		es[i] = api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"I": api.Int32(int32(i))})
	}
	for i, e := range es {
		f.Requires(insertRule(e.Key(), matchers.Keys(es[:i])), fmt.Sprintf("insert the entity %s of the spec's %d", e, len(es)), func() {
			Expect(matchers.InsertAll(ctx, f.Backend(), table, e)).To(matchers.SucceedOnBackend())
		})
	}
	return table
}

// insertRule is the rule whose subject is storing an entity with key k after the entities
// of earlier: an empty PartitionKey is entities.key.empty-partition-key's, an empty RowKey
// the subject of ordering.empty-row-key itself (it SHOULD be accepted;
// entities.key.empty-row-key leaves the refusal open), any other key scenario.InsertRule's.
func insertRule(k api.Key, earlier []api.Key) string {
	switch {
	case k.PartitionKey == "":
		return "entities.key.empty-partition-key"
	case k.RowKey == "":
		return "ordering.empty-row-key"
	}
	return scenario.InsertRule(k, earlier)
}

// expectOrder inserts want in a shuffled order, queries q to its end and expects exactly
// want, in that order (expectKeys).
func expectOrder(ctx context.Context, f *framework.F, q api.Query, want []api.Key, seed uint64) {
	GinkgoHelper()
	inserted := shuffled(want, seed)
	table := loadKeys(ctx, f, inserted)
	got := scenario.MustQueryAll(ctx, f.Backend(), table, q, len(want))
	if q.Top.IsSet() {
		scenario.ExpectPagedKeys(f, got, want, "query (filter %q, top %v); pages of %v", q.Filter, q.Top, got.PageSizes())
	} else if rule := countRule(q); rule != "" {
		f.Requires(rule, fmt.Sprintf("the query (filter %q) returns as many entities as the table holds", q.Filter), func() {
			Expect(got.Entities()).To(HaveLen(len(want)), "pages of %v", got.PageSizes())
		})
	}
	expectKeys(f, got.Entities(), want, "query (filter %q, top %v) over entities inserted in the order %v (seed %d); pages of %v",
		q.Filter, q.Top, inserted, seed, got.PageSizes())
}

// countRule names the rule whose subject is that q returns each entity it selects once:
// following the continuations of a paged query (pagination.exactly-once), a query without
// a PartitionKey condition reaching every partition (query.table-scan); "" for a query of
// one partition, whose count the spec's own rule judges.
func countRule(q api.Query) string {
	if _, paged := q.Top.Value(); paged {
		return "pagination.exactly-once"
	}
	if !strings.Contains(q.Filter, "PartitionKey") {
		return "query.table-scan"
	}
	return ""
}

// expectKeys expects got to hold exactly the entities of want, each once, and then, in the
// spec's order check (spec.CheckOrder), in want's order: a profile that promises no order
// (Cosmos DB) excuses the order, never a wrong set of entities.
func expectKeys(f *framework.F, got []api.Entity, want []api.Key, description ...any) {
	GinkgoHelper()
	Expect(got).To(matchers.ConsistOfKeys(want...), description...)
	f.Check(spec.CheckOrder, func() { Expect(got).To(matchers.HaveKeys(want...), description...) })
}

// requireEmptyRowKeyKept is the precondition of the empty RowKey's order: in a table of its
// own, an entity inserted with an empty RowKey (accepted: ordering.empty-row-key's own
// subject) comes back from a query with that key, not another
// (entities.key.empty-row-key's subject), so that it cannot collide with the spec's " ".
func requireEmptyRowKeyKept(ctx context.Context, f *framework.F) {
	GinkgoHelper()
	table := f.NewTable(ctx)
	e := api.NewEntity("a", "", map[string]api.Value{"I": api.Int32(0)})
	f.Requires(insertRule(e.Key(), nil), "insert an entity with an empty RowKey", func() {
		Expect(matchers.InsertAll(ctx, f.Backend(), table, e)).To(matchers.SucceedOnBackend())
	})
	f.Requires("entities.key.empty-row-key", "query the entity with an empty RowKey back with its key", func() {
		page, err := f.Backend().QueryEntities(ctx, table, api.Query{})
		Expect(err).To(matchers.SucceedOnBackend(), "query the entity with an empty RowKey")
		Expect(page.Entities).To(matchers.ConsistOfKeys(e.Key()), "the entity inserted with an empty RowKey")
	})
}
