package batch

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// failing builds the operation that makes a transaction fail, given the ETag that
// setUpFailures made stale; status and code are what it alone would answer, and alone is
// the rule whose subject is a transaction of that operation alone failing ("" for none).
type failing struct {
	op     func(stale string) api.BatchOp
	status int
	codes  []string
	alone  string
}

var (
	insertConflict = failing{func(string) api.BatchOp { return insertOp("exists", "V", api.Int32(9)) }, 409, []string{"EntityAlreadyExists"}, ""}
	replaceMissing = failing{func(string) api.BatchOp { return replaceOp("missing", "V", api.Int32(9)) }, 404, spec.Codes(spec.MissingEntityAnswers...), "batch.update.missing"}
	mergeMissing   = failing{func(string) api.BatchOp { return mergeOp("missing", "V", api.Int32(9)) }, 404, spec.Codes(spec.MissingEntityAnswers...), "batch.update.missing"}
	deleteMissing  = failing{func(string) api.BatchOp { return deleteOp("missing") }, 404, spec.Codes(spec.MissingEntityAnswers...), "batch.delete.missing-alone"}
	replaceStale   = failing{func(etag string) api.BatchOp { return withIfMatch(replaceOp("exists", "V", api.Int32(9)), etag) }, 412, []string{"UpdateConditionNotSatisfied"}, "batch.condition.etag"}
	mergeStale     = failing{func(etag string) api.BatchOp { return withIfMatch(mergeOp("exists", "V", api.Int32(9)), etag) }, 412, []string{"UpdateConditionNotSatisfied"}, "batch.condition.etag"}
	deleteStale    = failing{func(etag string) api.BatchOp { return withIfMatch(deleteOp("exists"), etag) }, 412, []string{"UpdateConditionNotSatisfied"}, "batch.condition.etag"}
)

// setUpFailures stores the entities the good operations change and the entity "exists",
// whose first ETag it makes stale by a replace; it returns the table's state and that ETag.
func setUpFailures(ctx context.Context, b api.Backend, table string) ([]api.Entity, string) {
	GinkgoHelper()
	stored := seed(ctx, b, table,
		entity("exists", "V", api.Int32(1)),
		entity("replaced", "V", api.Int32(1), "W", api.Int32(1)),
		entity("merged", "V", api.Int32(1)),
		entity("deleted", "V", api.Int32(1)),
		entity("upserted", "V", api.Int32(1)))
	stale := stored[0].ETag
	var current string
	framework.Requires("modify.replace.removes-omitted", "make the ETag of \"exists\" stale by a replace", func() {
		var err error
		current, err = b.UpdateEntity(ctx, table, entity("exists", "V", api.Int32(2)), api.Replace, api.IfMatchAny)
		Expect(err).To(SucceedOnBackend(), "setting up: make the ETag of \"exists\" stale")
	})
	framework.Requires("modify.etag.changes", "the replace gives \"exists\" a new ETag", func() {
		Expect(current).NotTo(Equal(stale), "the replace of \"exists\" kept its ETag")
	})
	return snapshot(ctx, b, table), stale
}

// requireFailsAlone is the precondition of a spec that puts bad among good operations: a
// transaction of bad alone fails with bad's status (bad.alone). On a backend where it
// succeeds, the spec's transaction has no failing operation to judge.
func requireFailsAlone(ctx context.Context, b api.Backend, table string, bad failing, stale string) {
	GinkgoHelper()
	if bad.alone == "" {
		return
	}
	op := bad.op(stale)
	framework.Requires(bad.alone, fmt.Sprintf("a transaction of the %s of %q alone fails", op.Kind, op.Entity.RowKey), func() {
		_, err := b.SubmitBatch(ctx, table, []api.BatchOp{op})
		Expect(err).To(HaveFailedWith(bad.status), "a transaction of the %s of %q alone", op.Kind, op.Entity.RowKey)
	})
}

// goodOps are operations that succeed on setUpFailures' state.
func goodOps() []api.BatchOp {
	return []api.BatchOp{
		insertOp("new1", "V", api.Int32(1)),
		replaceOp("replaced", "V", api.Int32(2)),
		mergeOp("merged", "M", api.Int32(2)),
		deleteOp("deleted"),
		upsertReplaceOp("upserted", "U", api.Int32(2)),
		upsertMergeOp("new2", "V", api.Int32(2)),
	}
}

// withFailureAt returns goodOps with bad inserted at index at.
func withFailureAt(bad api.BatchOp, at int) []api.BatchOp {
	ops := goodOps()
	ops = append(ops[:at], append([]api.BatchOp{bad}, ops[at:]...)...)
	return ops
}

const (
	first  = 0
	middle = 3
	last   = 6
)

var _ = framework.Describe("Entity group transaction atomicity", func(f *framework.F) {
	f.DescribeTable("batch.atomic", "applies none of its operations",
		func(ctx context.Context, bad failing, at int) {
			b, table := transactionTable(ctx, f)
			before, stale := setUpFailures(ctx, b, table)
			requireFailsAlone(ctx, b, table, bad, stale)
			ops := withFailureAt(bad.op(stale), at)
			_, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(HaveOccurred(), "transaction %s succeeded although operation %d must fail", describeOps(ops), at)
			Expect(table).To(HoldExactly(ctx, b, before...))
		},
		Entry("when an insert conflicts as the last operation", insertConflict, last),
		Entry("when an insert conflicts as the first operation", insertConflict, first),
		Entry("when an insert conflicts in the middle", insertConflict, middle),
		Entry("when a replace of a missing entity is the last operation", replaceMissing, last),
		Entry("when a replace of a missing entity is in the middle", replaceMissing, middle),
		Entry("when a merge of a missing entity is the first operation", mergeMissing, first),
		Entry("when a delete of a missing entity is the last operation", deleteMissing, last),
		Entry("when a delete of a missing entity is in the middle", deleteMissing, middle),
		Entry("when a replace with a stale ETag is the last operation", replaceStale, last),
		Entry("when a merge with a stale ETag is the first operation", mergeStale, first),
		Entry("when a delete with a stale ETag is in the middle", deleteStale, middle),
	)

	f.DescribeTable("batch.failure.code", "reports the failing operation's code",
		func(ctx context.Context, bad failing) {
			b, table := transactionTable(ctx, f)
			_, stale := setUpFailures(ctx, b, table)
			requireFailsAlone(ctx, b, table, bad, stale)
			_, err := b.SubmitBatch(ctx, table, withFailureAt(bad.op(stale), middle))
			Expect(err).To(HaveFailedWithStatusIn([]int{bad.status, 400}, bad.codes...))
			e, _ := driver.AsError(err)
			f.Choice(fmt.Sprintf("status of a failed transaction whose operation alone answers %d", bad.status), fmt.Sprint(e.Status))
		},
		Entry("for an insert conflict", insertConflict),
		Entry("for a replace of a missing entity", replaceMissing),
		Entry("for a merge of a missing entity", mergeMissing),
		Entry("for a delete of a missing entity", deleteMissing),
		Entry("for a stale ETag", replaceStale),
	)

	f.DescribeTable("batch.failure.index", "names the failing operation when it names one",
		func(ctx context.Context, bad failing, at int) {
			b, table := transactionTable(ctx, f)
			_, stale := setUpFailures(ctx, b, table)
			requireFailsAlone(ctx, b, table, bad, stale)
			_, err := b.SubmitBatch(ctx, table, withFailureAt(bad.op(stale), at))
			Expect(err).To(NameFailedOperation(at))
			if e, ok := driver.AsError(err); ok {
				f.Choice(fmt.Sprintf("index named for a failure at operation %d", at), fmt.Sprintf("indexed=%t", e.Indexed))
			}
		},
		Entry("at operation 0", insertConflict, first),
		Entry("at operation 3", insertConflict, middle),
		Entry("at operation 6", deleteMissing, last),
		Entry("for a stale ETag at operation 3", mergeStale, middle),
	)

	f.It("batch.failure.index", "names the second operation of a repeated row when it names one", func(ctx context.Context) {
		b, table := transactionTable(ctx, f)
		ops := []api.BatchOp{insertOp("a"), insertOp("b"), mergeOp("a", "V", api.Int32(1)), insertOp("c")}
		_, err := b.SubmitBatch(ctx, table, ops)
		f.Requires("batch.duplicate-row", "the transaction naming \"a\" twice is refused with 400 InvalidDuplicateRow", func() {
			Expect(err).To(HaveFailedWith(400, "InvalidDuplicateRow"))
		})
		Expect(err).To(NameFailedOperation(2))
	})

	Context("when its only operation deletes a missing entity", func() {
		f.It("batch.delete.missing-alone", "fails with 404, with or without an index", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{deleteOp("missing")})
			Expect(err).To(HaveFailedWith(404))
			Expect(err).To(NameFailedOperation(0))
		})
	})

	Context("with a replace or merge of a missing entity", func() {
		f.DescribeTable("batch.update.missing", "fails with 404 and creates nothing",
			func(ctx context.Context, op api.BatchOp) {
				b, table := transactionTable(ctx, f)
				_, err := b.SubmitBatch(ctx, table, []api.BatchOp{op})
				Expect(err).To(HaveFailedWith(404))
				Expect(table).To(HoldExactly(ctx, b))
			},
			Entry("for a replace alone", replaceOp("missing", "V", api.Int32(1))),
			Entry("for a merge alone", mergeOp("missing", "V", api.Int32(1))),
		)
	})

	Context("with If-Match on its operations", func() {
		f.DescribeTable("batch.condition.etag", "refuses a stale ETag with 412 UpdateConditionNotSatisfied",
			func(ctx context.Context, bad failing) {
				b, table := transactionTable(ctx, f)
				before, stale := setUpFailures(ctx, b, table)
				_, err := b.SubmitBatch(ctx, table, []api.BatchOp{bad.op(stale)})
				Expect(err).To(HaveFailedWith(412, "UpdateConditionNotSatisfied"))
				Expect(table).To(HoldExactly(ctx, b, before...))
			},
			Entry("for a replace", replaceStale),
			Entry("for a merge", mergeStale),
			Entry("for a delete", deleteStale),
		)

		f.DescribeTable("batch.condition.etag", "accepts the current ETag",
			func(ctx context.Context, bad failing, want []api.Entity) {
				b, table := transactionTable(ctx, f)
				stored := seed(ctx, b, table, entity("exists", "V", api.Int32(1), "W", api.Int32(1)))
				_, err := b.SubmitBatch(ctx, table, []api.BatchOp{bad.op(stored[0].ETag), insertOp("other")})
				Expect(err).To(SucceedOnBackend())
				// What a replace or merge in a transaction keeps is batch.merge-replace's subject.
				f.Requires("batch.merge-replace", "the transaction's write leaves what the single write leaves", func() {
					Expect(table).To(HoldExactly(ctx, b, append(want, entity("other"))...))
				})
			},
			Entry("for a replace", replaceStale, []api.Entity{entity("exists", "V", api.Int32(9))}),
			Entry("for a merge", mergeStale, []api.Entity{entity("exists", "V", api.Int32(9), "W", api.Int32(1))}),
			Entry("for a delete", deleteStale, []api.Entity{}),
		)
	})
})
