package tables

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// Rules a step of the isolation spec relies on: each is a precondition there, never its
// subject (E-tables-independent).
const (
	ruleTransactionAtomic = "batch.atomic"
	ruleInsertStores      = "modify.insert.stores"
	ruleInsertConflict    = "modify.insert.conflict"
	ruleReplace           = "modify.replace.removes-omitted"
	ruleDeleteTable       = "tables.delete.removes"
)

var _ = framework.Describe("Tables are independent", func(f *framework.F) {
	// act does something to table other (which holds the entity p/committed) and says what.
	type act func(ctx context.Context, b api.Backend, other string) string
	f.DescribeTable("tables.isolation", "leaves the entities of a neighbouring table exactly as written",
		func(ctx context.Context, do act) {
			b := f.Backend()
			other, neighbour := f.NewTable(ctx), f.NewTable(ctx)
			before := api.NewEntity("n", "before", map[string]api.Value{"V": api.Int32(1)})
			f.Requires(ruleInsertStores, "write the neighbouring table", func() {
				_, err := b.InsertEntity(ctx, neighbour, before)
				Expect(err).To(SucceedOnBackend(), "Insert Entity n/before into %s", neighbour)
			})
			// A committed transaction in the other table: the point a backend that keeps
			// copies of the account would keep one at. A backend without transactions
			// (batch.all-kinds' subject) gets the entity by a plain insert: this rule is about
			// the neighbour, not about transactions working.
			committed := api.NewEntity("p", "committed", nil)
			if _, err := b.SubmitBatch(ctx, other, []api.BatchOp{{Kind: api.BatchInsert, Entity: committed}}); err != nil {
				f.Requires(ruleInsertStores, "write the other table", func() {
					_, err := b.InsertEntity(ctx, other, committed)
					Expect(err).To(SucceedOnBackend(), "Insert Entity p/committed into %s", other)
				})
			}
			// The neighbour's writes after that transaction: one entity replaced, two inserted.
			replaced := api.NewEntity("n", "before", map[string]api.Value{"V": api.Int32(2)})
			added := []api.Entity{
				api.NewEntity("n", "after1", map[string]api.Value{"V": api.Int32(3)}),
				api.NewEntity("m", "after2", map[string]api.Value{"V": api.String("x")}),
			}
			f.Requires(ruleReplace, "replace an entity of the neighbouring table", func() {
				_, err := b.UpdateEntity(ctx, neighbour, replaced, api.Replace, api.IfMatchAny)
				Expect(err).To(SucceedOnBackend(), "Update Entity n/before of %s", neighbour)
			})
			f.Requires(ruleInsertStores, "write the neighbouring table", func() {
				Expect(InsertAll(ctx, b, neighbour, added...)).To(SucceedOnBackend(), "Insert Entity into %s", neighbour)
				Expect(neighbour).To(HoldExactly(ctx, b, append([]api.Entity{replaced}, added...)...), "the neighbouring table %s as written", neighbour)
			})
			what := do(ctx, b, other)
			Expect(neighbour).To(HoldExactly(ctx, b, append([]api.Entity{replaced}, added...)...),
				"the neighbouring table %s after %s in table %s", neighbour, what, other)
		},
		Entry("across a failed transaction in another table", act(func(ctx context.Context, b api.Backend, other string) string {
			framework.Requires(ruleTransactionAtomic, "a transaction that inserts an existing entity fails", func() {
				_, err := b.SubmitBatch(ctx, other, []api.BatchOp{
					{Kind: api.BatchInsert, Entity: api.NewEntity("p", "new", nil)},
					{Kind: api.BatchInsert, Entity: api.NewEntity("p", "committed", nil)},
				})
				Expect(err).To(HaveFailedWithStatus(409, 400), "a transaction inserting p/committed again into %s", other)
			})
			return "a failed transaction"
		})),
		Entry("across a refused write in another table", act(func(ctx context.Context, b api.Backend, other string) string {
			framework.Requires(ruleInsertConflict, "an insert of an existing entity is refused", func() {
				_, err := b.InsertEntity(ctx, other, api.NewEntity("p", "committed", nil))
				Expect(err).To(HaveFailedWithStatus(409), "Insert Entity p/committed again into %s", other)
			})
			return "a refused insert"
		})),
		Entry("across the deletion of another table", act(func(ctx context.Context, b api.Backend, other string) string {
			framework.Requires(ruleDeleteTable, "delete the other table", func() {
				Expect(b.DeleteTable(ctx, other)).To(SucceedOnBackend(), "Delete Table %s", other)
			})
			return "Delete Table"
		})),
	)
})
