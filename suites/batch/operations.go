package batch

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// allKinds is a transaction with one operation of each write kind over the entities that
// seedForAllKinds stores, and the state it leads to.
func seedForAllKinds() []api.Entity {
	return []api.Entity{
		entity("replace", "Old", api.Int32(1), "Gone", api.String("g")),
		entity("merge", "Old", api.Int32(1), "Kept", api.String("k")),
		entity("upsert-replace", "Gone", api.Bool(true)),
		entity("upsert-merge", "Kept", api.Bool(true)),
		entity("delete", "V", api.Int32(1)),
	}
}

func allKinds() []api.BatchOp {
	return []api.BatchOp{
		insertOp("insert", "New", api.Int64(1)),
		replaceOp("replace", "Old", api.Int32(2)),
		mergeOp("merge", "Old", api.Int32(2), "Added", api.Double(0.5)),
		upsertReplaceOp("upsert-replace", "Fresh", api.String("f")),
		upsertMergeOp("upsert-merge", "Fresh", api.String("f")),
		deleteOp("delete"),
		upsertReplaceOp("created-by-replace", "C", api.Int32(1)),
		upsertMergeOp("created-by-merge", "C", api.Int32(2)),
	}
}

func afterAllKinds() []api.Entity {
	return []api.Entity{
		entity("insert", "New", api.Int64(1)),
		entity("replace", "Old", api.Int32(2)),
		entity("merge", "Old", api.Int32(2), "Kept", api.String("k"), "Added", api.Double(0.5)),
		entity("upsert-replace", "Fresh", api.String("f")),
		entity("upsert-merge", "Kept", api.Bool(true), "Fresh", api.String("f")),
		entity("created-by-replace", "C", api.Int32(1)),
		entity("created-by-merge", "C", api.Int32(2)),
	}
}

var _ = framework.Describe("Entity group transactions", func(f *framework.F) {
	f.It("batch.all-kinds", "applies insert, replace, merge, both upserts and delete in one transaction", func(ctx context.Context) {
		b, table := transactionTable(ctx, f)
		seed(ctx, b, table, seedForAllKinds()...)
		_, err := b.SubmitBatch(ctx, table, allKinds())
		Expect(err).To(SucceedOnBackend())
		Expect(table).To(HoldExactly(ctx, b, afterAllKinds()...))
	})

	f.DescribeTable("batch.all-kinds", "applies a transaction of one operation",
		func(ctx context.Context, op api.BatchOp, want []api.Entity) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "Old", api.Int32(1), "Keep", api.String("k")), entity("other", "V", api.Int32(0)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{op})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, append(want, entity("other", "V", api.Int32(0)))...))
		},
		Entry("that inserts", insertOp("n", "V", api.Int32(5)),
			[]api.Entity{entity("r", "Old", api.Int32(1), "Keep", api.String("k")), entity("n", "V", api.Int32(5))}),
		Entry("that replaces", replaceOp("r", "Old", api.Int32(2)), []api.Entity{entity("r", "Old", api.Int32(2))}),
		Entry("that merges", mergeOp("r", "Old", api.Int32(2)), []api.Entity{entity("r", "Old", api.Int32(2), "Keep", api.String("k"))}),
		Entry("that inserts or replaces", upsertReplaceOp("r", "New", api.Bool(true)), []api.Entity{entity("r", "New", api.Bool(true))}),
		Entry("that inserts or merges", upsertMergeOp("r", "New", api.Bool(true)),
			[]api.Entity{entity("r", "Old", api.Int32(1), "Keep", api.String("k"), "New", api.Bool(true))}),
		Entry("that deletes", deleteOp("r"), []api.Entity{}),
	)

	Context("when it succeeds", func() {
		f.It("batch.results.order", "returns one 2xx result per operation in request order", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, seedForAllKinds()...)
			ops := allKinds()
			res, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(len(ops)), "results for %s", describeOps(ops))
			for i, op := range ops {
				if op.Kind == api.BatchInsert {
					// 201 or 204 is batch.results.insert-status's subject; this rule asks for 2xx.
					Expect(res[i].Status/100).To(Equal(2), "result %d answers %s with status %d", i, describeOps(ops[i:i+1]), res[i].Status)
				} else {
					Expect(res[i].Status).To(Equal(204), "result %d answers %s", i, describeOps(ops[i:i+1]))
				}
			}
		})

		f.It("batch.results.order", "returns the results of inserts and deletes at their own positions", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("d1"), entity("d2"))
			ops := []api.BatchOp{deleteOp("d1"), insertOp("i1"), insertOp("i2"), deleteOp("d2"), insertOp("i3")}
			res, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(len(ops)), "results for %s", describeOps(ops))
			for i, op := range ops {
				if op.Kind == api.BatchInsert {
					Expect(res[i].ETag).NotTo(BeEmpty(), "result %d, of an insert, carries no ETag", i)
					Expect(res[i].Status/100).To(Equal(2), "result %d answers an insert with status %d", i, res[i].Status)
				} else {
					Expect(res[i].Status).To(Equal(204), "result %d answers a delete", i)
				}
			}
		})

		f.It("batch.results.etag", "returns each written entity's current ETag", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, seedForAllKinds()...)
			ops := allKinds()
			res, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(len(ops)), "results for %s", describeOps(ops))
			current := map[int]string{}
			for i, op := range ops {
				if op.Kind != api.BatchDelete {
					current[i] = etagOf(ctx, f, b, table, op.Entity.RowKey)
				}
			}
			f.Requires("batch.results.order", "each result stands at its operation's position", func() {
				for i := range ops {
					for j, etag := range current {
						// Two entities written by one transaction may share an ETag (Azurite
						// stamps them within the same tick): only a result that carries
						// another operation's ETag and not its own stands out of place.
						misplaced := j != i && res[i].ETag == etag && etag != current[i]
						Expect(misplaced).To(BeFalse(), "the result at %d carries the ETag of operation %d", i, j)
					}
				}
			})
			for i, op := range ops {
				if op.Kind == api.BatchDelete {
					continue
				}
				Expect(res[i].ETag).NotTo(BeEmpty(), "the %s at %d returned no ETag", op.Kind, i)
				Expect(res[i].ETag).To(Equal(current[i]),
					"the %s at %d returned an ETag that a read of %q does not show", op.Kind, i, op.Entity.RowKey)
			}
		})

		f.It("batch.results.delete-etag", "returns no ETag for a delete", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("d"))
			res, err := b.SubmitBatch(ctx, table, []api.BatchOp{insertOp("i"), deleteOp("d")})
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(2), "results of an insert and a delete")
			f.Requires("batch.results.order", "the result of the insert stands first", func() {
				Expect(res[1].ETag).NotTo(Equal(etagOf(ctx, f, b, table, "i")), "the result at 1, of the delete, carries the inserted entity's ETag")
			})
			Expect(res[1].ETag).To(BeEmpty(), "the ETag of a delete result")
		})

		f.It("batch.results.insert-status", "answers an insert with 201 or 204", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			res, err := b.SubmitBatch(ctx, table, []api.BatchOp{insertOp("i", "V", api.Int32(1))})
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(1), "results of one insert")
			Expect(res[0].Status).To(BeElementOf(201, 204), "the status of an insert result")
			f.Choice("status of an insert in a transaction", http.StatusText(res[0].Status))
		})
	})

	Context("with merge, replace and null properties", func() {
		f.It("batch.merge-replace", "keeps the properties a merge does not send", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "A", api.Int32(1), "B", api.Int32(1)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{mergeOp("r", "B", api.Int32(2))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("r", "A", api.Int32(1), "B", api.Int32(2))))
		})

		f.It("batch.merge-replace", "removes the properties a replace does not send", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "A", api.Int32(1), "B", api.Int32(1)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{replaceOp("r", "B", api.Int32(2))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("r", "B", api.Int32(2))))
		})

		f.It("batch.merge-replace", "ignores a null sent by a merge", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "A", api.Int32(1)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{mergeOp("r", "A", api.Null(api.EdmInt32), "N", api.Null(api.EdmString))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("r", "A", api.Int32(1))))
		})

		f.It("batch.merge-replace", "keeps the old value of a property an insert-or-merge sends as null", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "A", api.Int32(1), "B", api.Int32(1)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{upsertMergeOp("r", "A", api.Null(api.EdmInt32), "B", api.Int32(2))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("r", "A", api.Int32(1), "B", api.Int32(2))))
		})

		f.It("batch.merge-replace", "removes a property an insert-or-replace sends as null or leaves out", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r", "A", api.Int32(1), "B", api.Int32(1), "C", api.Int32(1)))
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{upsertReplaceOp("r", "A", api.Null(api.EdmInt32), "B", api.Int32(2))})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("r", "B", api.Int32(2))))
		})
	})
})
