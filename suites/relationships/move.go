package relationships

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// Moving an employee to another department changes its PartitionKey: a transaction cannot
// span the two partitions, so the move is two idempotent steps that converge when repeated
// (the eventually consistent transactions pattern).

type moveStop int

const (
	moveToEnd moveStop = iota
	stopAfterInsert
	stopAfterDelete
)

// moveEmployee copies the employee (from, id) into partition to with Insert Or Replace and
// then deletes the original, accepting 404. It returns errCrash right after the step stop
// names. A missing original means an earlier run finished the delete.
func moveEmployee(ctx context.Context, b api.Backend, table, from, id, to string, stop moveStop) error {
	e, err := b.GetEntity(ctx, table, from, id, nil)
	if scenario.IsStatus(err, 404) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the employee: %w", err)
	}
	moved := scenario.Strip(e)
	moved.PartitionKey = to
	if _, err := b.UpdateEntity(ctx, table, moved, api.Replace, ""); err != nil {
		return fmt.Errorf("insert into %s: %w", to, err)
	}
	if stop == stopAfterInsert {
		return errCrash
	}
	if err := scenario.DeleteAny(ctx, b, table, from, id); err != nil && !scenario.IsStatus(err, 404) {
		return fmt.Errorf("delete from %s: %w", from, err)
	}
	if stop == stopAfterDelete {
		return errCrash
	}
	return nil
}

// kwokMoved returns the default employees with Ken Kwok (Sales, 000010) moved to Marketing.
func kwokMoved() (before, after []api.Entity, kwok api.Entity) {
	for _, e := range fixtures.Employees(0) {
		before = append(before, e)
		if e.PartitionKey == "Sales" && e.RowKey == "000010" {
			kwok = e
			e = e.Clone()
			e.PartitionKey = "Marketing"
		}
		after = append(after, e)
	}
	return before, after, kwok
}

var _ = framework.Describe("Moving an entity between partitions", func(f *framework.F) {
	f.It("rel.move.batch-refused", "refuses one transaction that deletes in one partition and inserts in another", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		before, _, kwok := kwokMoved()
		scenario.Load(ctx, b, table, before)
		moved := kwok.Clone()
		moved.PartitionKey = "Marketing"
		scenario.RequireTransactions(ctx, f, b, table)
		_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
			{Kind: api.BatchDelete, Entity: api.NewEntity(kwok.PartitionKey, kwok.RowKey, nil), IfMatch: api.IfMatchAny},
			{Kind: api.BatchInsert, Entity: moved},
		})
		Expect(err).To(HaveFailedWith(400))
		f.Choice("code of a transaction over two partitions", codeOf(err))
		Expect(table).To(HoldExactly(ctx, b, before...))
	})

	f.DescribeTable("rel.move.two-steps", "ends with the employee in the new partition only",
		func(ctx context.Context, stop moveStop) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireKeyIdentity(ctx, f, b, table) // the employee's RowKey in both partitions
			before, after, kwok := kwokMoved()
			scenario.Load(ctx, b, table, before)
			err := moveEmployee(ctx, b, table, "Sales", "000010", "Marketing", stop)
			if stop != moveToEnd {
				Expect(err).To(MatchError(errCrash))
				if stop == stopAfterInsert {
					Expect(table).To(HoldEntity(ctx, b, kwok), "between the steps the employee is in both partitions")
				}
				err = moveEmployee(ctx, b, table, "Sales", "000010", "Marketing", moveToEnd)
				// The run again repeats the Insert Or Replace: that a repeated upsert succeeds
				// is pattern.eventual.upsert-repeatable's subject.
				f.Requires("pattern.eventual.upsert-repeatable", "the move's run again, which repeats its Insert Or Replace, succeeds", func() {
					Expect(err).To(SucceedOnBackend())
				})
			}
			Expect(err).To(SucceedOnBackend())
			scenario.RequireDeleted(ctx, f, b, table, scenario.Key("Sales", "000010"))
			Expect(table).To(HoldExactly(ctx, b, after...))
		},
		Entry("when the move runs without stopping", moveToEnd),
		Entry("when it stops after the insert into the new partition and runs again", stopAfterInsert),
		Entry("when it stops after the delete from the old partition and runs again", stopAfterDelete),
	)
})
