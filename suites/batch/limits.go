package batch

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// inserts returns n insert operations of rows "r000".."r(n-1)", each with a Binary payload
// of the given size (0 for none).
func inserts(n, payload int) []api.BatchOp {
	ops := make([]api.BatchOp, n)
	for i := range ops {
		e := entity(fmt.Sprintf("r%03d", i), "N", api.Int32(int32(i)))
		if payload > 0 {
			e.Properties["Blob"] = api.Binary([]byte(strings.Repeat(string(rune('a'+i%26)), payload)))
		}
		ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: e}
	}
	return ops
}

// Payload sizes: a Binary of n bytes travels as about 4n/3 base64 characters. 100 entities
// of 24 KiB make about 3.2 MiB of JSON, well under the limit with the multipart framing;
// 100 of 36 KiB make about 4.7 MiB, well over it.
const (
	payloadUnder = 24 << 10
	payloadOver  = 36 << 10
)

var _ = framework.Describe("Entity group transaction limits", func(f *framework.F) {
	Context("with 100 operations", func() {
		f.It("batch.limit.operations", "accepts 100 inserts", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			ops := inserts(spec.MaxBatchOperations, 0)
			res, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(SucceedOnBackend())
			Expect(res).To(HaveLen(spec.MaxBatchOperations), "results of 100 operations")
			Expect(snapshot(ctx, b, table)).To(HaveLen(spec.MaxBatchOperations), "entities stored by 100 inserts")
		})

		f.It("batch.limit.operations", "accepts 100 operations of mixed kinds", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			seed(ctx, b, table, entity("r000"), entity("r001"), entity("r002"), entity("r003"))
			ops := inserts(spec.MaxBatchOperations, 0)
			ops[0] = deleteOp("r000")
			ops[1] = replaceOp("r001", "N", api.Int32(-1))
			ops[2] = mergeOp("r002", "N", api.Int32(-2))
			ops[3] = upsertMergeOp("r003", "N", api.Int32(-3))
			_, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(SucceedOnBackend())
			Expect(snapshot(ctx, b, table)).To(HaveLen(spec.MaxBatchOperations-1), "entities after 96 inserts, 3 updates and 1 delete")
		})
	})

	Context("with 101 operations", func() {
		f.It("batch.limit.operations", "refuses the transaction with 400 InvalidInput and applies nothing", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			before := seed(ctx, b, table, entity("r000", "N", api.Int32(-1)))
			ops := inserts(spec.MaxBatchOperations+1, 0)
			ops[0] = replaceOp("r000", "N", api.Int32(0))
			_, err := b.SubmitBatch(ctx, table, ops)
			Expect(err).To(HaveFailedWith(400, "InvalidInput"))
			Expect(table).To(HoldExactly(ctx, b, before...))
		})

		f.It("batch.limit.operations-index", "names operation 99, operation 0 or none", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, inserts(spec.MaxBatchOperations+1, 0))
			f.Requires("batch.limit.operations", "a transaction of 101 inserts is refused with 400", func() {
				Expect(err).To(HaveFailedWith(400))
			})
			e, _ := driver.AsError(err)
			switch {
			case !e.Indexed:
				f.Choice("index named for 101 operations", "none")
			default:
				Expect(e.FailedIndex).To(BeElementOf(spec.MaxBatchOperations-1, 0), "the refusal names operation %d", e.FailedIndex)
				f.Choice("index named for 101 operations", fmt.Sprint(e.FailedIndex))
			}
		})
	})

	Context("with a body under 4 MiB", func() {
		f.It("batch.limit.payload", "accepts 100 inserts of 24 KiB each", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, inserts(spec.MaxBatchOperations, payloadUnder))
			Expect(err).To(SucceedOnBackend())
			Expect(snapshot(ctx, b, table)).To(HaveLen(spec.MaxBatchOperations), "entities stored by 100 inserts")
		})
	})

	Context("with a body over 4 MiB", func() {
		f.It("batch.limit.payload", "refuses 100 inserts of 36 KiB each with 413 RequestBodyTooLarge and applies nothing", func(ctx context.Context) {
			b, table := transactionTable(ctx, f)
			_, err := b.SubmitBatch(ctx, table, inserts(spec.MaxBatchOperations, payloadOver))
			Expect(err).To(HaveFailedWith(413, spec.ErrRequestBodyTooLarge.Code))
			Expect(table).To(HoldExactly(ctx, b))
		})
	})
})
