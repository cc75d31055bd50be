package batch

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// inPartition returns op moved to another partition.
func inPartition(op api.BatchOp, partition string) api.BatchOp {
	op.Entity = op.Entity.Clone()
	op.Entity.PartitionKey = partition
	return op
}

var _ = framework.Describe("Entity group transaction scope", func(f *framework.F) {
	Context("with more than one PartitionKey", func() {
		f.DescribeTable("batch.partition.single", "refuses the transaction with 400 and applies nothing",
			func(ctx context.Context, at int) {
				b, table := transactionTable(ctx, f)
				before := seed(ctx, b, table, entity("m", "V", api.Int32(1)), api.NewEntity("q", "m", props("V", api.Int32(1))))
				ops := []api.BatchOp{insertOp("a"), mergeOp("m", "V", api.Int32(2)), insertOp("b"), insertOp("c")}
				ops[at] = inPartition(ops[at], "q")
				_, err := b.SubmitBatch(ctx, table, ops)
				Expect(err).To(HaveFailedWith(400), "a transaction over partitions p and q: %s", describeOps(ops))
				Expect(table).To(HoldExactly(ctx, b, before...))
			},
			Entry("when the last operation names another partition", 3),
			Entry("when the second operation names another partition", 1),
			Entry("when the first operation names another partition", 0),
		)

		f.It("batch.partition.code", "answers CommandsInBatchActOnDifferentPartitions or InvalidInput", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{insertOp("a"), inPartition(insertOp("b"), "q")})
			f.Requires("batch.partition.single", "a transaction over partitions p and q is refused with 400", func() {
				Expect(err).To(HaveFailedWith(400), "a transaction over partitions p and q")
			})
			Expect(err).To(HaveFailedWith(400, "CommandsInBatchActOnDifferentPartitions", "InvalidInput"))
			f.Choice("code for a mixed-partition transaction", DescribeOutcome(err))
		})
	})

	Context("when one entity appears twice", func() {
		f.DescribeTable("batch.duplicate-row", "refuses the transaction with 400 InvalidDuplicateRow and applies nothing",
			func(ctx context.Context, first, second api.BatchOp) {
				b, table := transactionTable(ctx, f)
				before := seed(ctx, b, table, entity("x", "V", api.Int32(1)))
				ops := []api.BatchOp{insertOp("a"), first, insertOp("b"), second}
				_, err := b.SubmitBatch(ctx, table, ops)
				Expect(err).To(HaveFailedWith(400, "InvalidDuplicateRow"), "transaction %s", describeOps(ops))
				Expect(table).To(HoldExactly(ctx, b, before...))
			},
			Entry("as two inserts of a new entity", insertOp("n", "V", api.Int32(1)), insertOp("n", "V", api.Int32(2))),
			Entry("as an insert and a merge", insertOp("n"), mergeOp("n", "V", api.Int32(2))),
			Entry("as a merge and a replace", mergeOp("x", "V", api.Int32(2)), replaceOp("x", "V", api.Int32(3))),
			Entry("as a replace and a delete", replaceOp("x", "V", api.Int32(2)), deleteOp("x")),
			Entry("as a delete and an insert", deleteOp("x"), insertOp("x", "V", api.Int32(3))),
			Entry("as an insert-or-merge and an insert-or-replace", upsertMergeOp("x", "V", api.Int32(2)), upsertReplaceOp("x", "W", api.Int32(3))),
			Entry("as an insert-or-replace and a delete", upsertReplaceOp("x", "V", api.Int32(2)), deleteOp("x")),
			Entry("as two merges of different properties", mergeOp("x", "A", api.Int32(2)), mergeOp("x", "B", api.Int32(3))),
		)
	})

	Context("with RowKeys that differ only in letter case", func() {
		f.It("batch.keys.case-sensitive", "treats them as different entities", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{insertOp("row", "V", api.Int32(1)), insertOp("ROW", "V", api.Int32(2)), insertOp("Row", "V", api.Int32(3))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("row", "V", api.Int32(1)), entity("ROW", "V", api.Int32(2)), entity("Row", "V", api.Int32(3))))
		})
	})

	Context("with a retrieve", func() {
		f.It("batch.retrieve.alone", "returns the entity when the retrieve is the only operation", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			want := entity("r", "V", api.Int32(7), "S", api.String("s"))
			seed(ctx, b, table, want, entity("other"))
			res, err := b.SubmitBatch(ctx, table, []api.BatchOp{retrieveOp("r")})
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(1), "results of a lone retrieve")
			Expect(res[0].Entity).NotTo(BeNil(), "the retrieve returned no entity")
			Expect(*res[0].Entity).To(MatchEntity(want))
		})

		f.DescribeTable("batch.retrieve.mixed", "refuses the transaction and applies nothing",
			func(ctx context.Context, ops []api.BatchOp) {
				b, table := transactionTable(ctx, f)
				before := seed(ctx, b, table, entity("r", "V", api.Int32(1)))
				_, err := b.SubmitBatch(ctx, table, ops)
				Expect(err).To(HaveOccurred(), "a transaction %s was accepted", describeOps(ops))
				Expect(driver.IsTransport(err) && !isClientRefusal(err)).To(BeFalse(), "the refusal was a transport error: %v", err)
				f.Choice("answer to a retrieve mixed with writes", DescribeOutcome(err))
				Expect(table).To(HoldExactly(ctx, b, before...))
			},
			Entry("when the retrieve comes first", []api.BatchOp{retrieveOp("r"), insertOp("n")}),
			Entry("when the retrieve comes last", []api.BatchOp{insertOp("n"), mergeOp("r", "V", api.Int32(2)), retrieveOp("r")}),
		)
	})

	Context("with no operation", func() {
		f.It("batch.empty", "is refused or succeeds with no result, and changes nothing", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			before := seed(ctx, b, table, entity("r"))
			res, err := b.SubmitBatch(ctx, table, nil)
			if err == nil {
				Expect(res).To(BeEmpty(), "an empty transaction returned results")
				f.Choice("answer to an empty transaction", "success with no result")
			} else {
				Expect(err).To(BeDocumentedRefusal(), "an empty transaction")
				f.Choice("answer to an empty transaction", DescribeOutcome(err))
			}
			Expect(table).To(HoldExactly(ctx, b, before...))
		})
	})

	Context("when the table does not exist", func() {
		f.It("batch.table.missing", "fails with 404 TableNotFound", func(ctx context.Context) {
			b, _ := transactionTable(ctx, f) // transactions work where the table exists
			name := f.TableName()
			f.CleanupTable(name)
			_, err := b.SubmitBatch(ctx, name, []api.BatchOp{insertOp("a"), insertOp("b")})
			Expect(err).To(HaveFailedWith(404, "TableNotFound"))
		})
	})
})

// isClientRefusal reports whether err is a driver's refusal to send a request, which the
// rules that allow a client-side refusal accept. Drivers refuse with a service-shaped
// *spec.Error or a plain error; only a *driver.TransportError is a failure to talk.
func isClientRefusal(err error) bool {
	var te *driver.TransportError
	return !errors.As(err, &te)
}
