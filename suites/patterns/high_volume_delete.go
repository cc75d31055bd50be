package patterns

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The high volume delete pattern keeps each day's login attempts in a table of its own, so
// that deleting a day is one Delete Table instead of a scan and thousands of deletes.

// dayTables creates and loads one table per day (days 0..n-1) and returns their names and
// entities.
func dayTables(ctx context.Context, f *framework.F, b api.Backend, n int) ([]string, [][]api.Entity) {
	GinkgoHelper()
	var names []string
	var days [][]api.Entity
	for day := range n {
		name := f.TableName() + "d" + fixtures.LoginTableSuffix(day)
		f.Requires("tables.create.listed", fmt.Sprintf("create the table of day %d", day), func() {
			Expect(b.CreateTable(ctx, name)).To(SucceedOnBackend(), "setting up: create the table of day %d", day)
		})
		f.CleanupTable(name)
		es := fixtures.LoginAttempts(day, 0, 0)
		scenario.Load(ctx, b, name, es)
		names, days = append(names, name), append(days, es)
	}
	return names, days
}

// goneTable matches the answer to an operation on a deleted table.
func goneTable() types.GomegaMatcher {
	// The code of a 404 for a missing table is tables.missing.entity-operations' subject.
	return Or(HaveFailedWithStatus(404), HaveFailedWith(409, "TableBeingDeleted"))
}

var _ = framework.Describe("High volume delete pattern", func(f *framework.F) {
	Context("with a table per day of login attempts", func() {
		f.It("pattern.high-volume-delete.drop-table", "removes every entity of the day with one Delete Table", func(ctx context.Context) {
			b := f.Backend()
			names, days := dayTables(ctx, f, b, 3)
			Expect(b.DeleteTable(ctx, names[0])).To(SucceedOnBackend())
			page, err := b.QueryEntities(ctx, names[0], api.Query{})
			Expect(err).To(goneTable(), "a query of the deleted table returned %d entities", len(page.Entities))
			f.Choice("query of a table just deleted", statusAndCode(err))
			old := days[0][0]
			_, err = b.GetEntity(ctx, names[0], old.PartitionKey, old.RowKey, nil)
			Expect(err).To(goneTable())
		})

		f.It("pattern.high-volume-delete.others-kept", "keeps the other days' tables and all their entities", func(ctx context.Context) {
			b := f.Backend()
			names, days := dayTables(ctx, f, b, 3)
			Expect(b.DeleteTable(ctx, names[0])).To(SucceedOnBackend())
			Expect(names[1]).To(HoldExactly(ctx, b, days[1]...))
			Expect(names[2]).To(HoldExactly(ctx, b, days[2]...))
		})

		f.It("pattern.high-volume-delete.new-name", "creates and fills the next day's table under a new name at once", func(ctx context.Context) {
			b := f.Backend()
			names, _ := dayTables(ctx, f, b, 1)
			Expect(b.DeleteTable(ctx, names[0])).To(SucceedOnBackend())
			next := f.TableName() + "d" + fixtures.LoginTableSuffix(1)
			f.CleanupTable(next)
			Expect(b.CreateTable(ctx, next)).To(SucceedOnBackend())
			es := fixtures.LoginAttempts(1, 0, 0)
			scenario.Load(ctx, b, next, es)
			Expect(next).To(HoldExactly(ctx, b, es...))
		})
	})

	Context("when a deleted day's table name is used again", func() {
		f.It("pattern.high-volume-delete.name-reuse", "either refuses with 409 TableBeingDeleted for a while or accepts at once", func(ctx context.Context) {
			b := f.Backend()
			names, _ := dayTables(ctx, f, b, 1)
			Expect(b.DeleteTable(ctx, names[0])).To(SucceedOnBackend())
			err := b.CreateTable(ctx, names[0])
			Expect(err).To(SatisfyAny(SucceedOnBackend(), HaveFailedWith(409, "TableBeingDeleted")))
			if err == nil {
				f.Choice("creating a table under a name just deleted", "accepted at once")
			} else {
				f.Choice("creating a table under a name just deleted", "refused with 409 TableBeingDeleted")
			}
		})

		f.It("pattern.high-volume-delete.recreated-empty", "starts the re-created table empty", func(ctx context.Context) {
			b := f.Backend()
			names, _ := dayTables(ctx, f, b, 1)
			Expect(b.DeleteTable(ctx, names[0])).To(SucceedOnBackend())
			// Against a real endpoint this waits the documented 40 s and more (NameReuseBound).
			if _, err := f.WaitForDeletedName(ctx, b, names[0]); err != nil {
				Expect(err).To(HaveFailedWith(409, "TableBeingDeleted"))
				Skip("the backend still holds the deleted name after " + f.NameReuseBound().String() + "; nothing to check until it is released")
			}
			Expect(names[0]).To(HoldExactly(ctx, b))
			fresh := fixtures.LoginAttempts(5, 1, 2)
			scenario.Load(ctx, b, names[0], fresh)
			Expect(names[0]).To(HoldExactly(ctx, b, fresh...))
		})
	})

	Context("with every day in one table, deleted entity by entity", func() {
		f.It("pattern.high-volume-delete.batched-deletes", "removes exactly the old entities with transactions of up to 100 deletes", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			old := fixtures.LoginAttempts(0, 2, 130) // 130 attempts per user: two transactions each
			kept := append(fixtures.LoginAttempts(1, 0, 0), fixtures.LoginAttempts(2, 0, 0)...)
			scenario.Load(ctx, b, table, append(append([]api.Entity(nil), kept...), old...))

			cutoff := fixtures.SortableTime(fixtures.LoginEpoch.AddDate(0, 0, 1))
			found, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("RowKey", "lt", cutoff), Select: []string{"PartitionKey", "RowKey"}})
			Expect(err).To(SucceedOnBackend())
			Expect(found).To(ConsistOfKeys(Keys(old)...))
			for _, group := range fixtures.Batches(found) {
				ops := make([]api.BatchOp, len(group))
				for i, e := range group {
					ops[i] = api.BatchOp{Kind: api.BatchDelete, Entity: api.NewEntity(e.PartitionKey, e.RowKey, nil), IfMatch: api.IfMatchAny}
				}
				_, err := b.SubmitBatch(ctx, table, ops)
				Expect(err).To(SucceedOnBackend(), "delete %d entities of partition %q", len(ops), group[0].PartitionKey)
			}
			Expect(table).To(HoldExactly(ctx, b, kept...))
		})
	})
})
