package modification

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Merge Entity", func(f *framework.F) {
	Context("with If-Match * on an existing entity", func() {
		f.It("modify.merge.keeps-omitted", "keeps the properties not sent and sets the ones sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Keep", api.Int32(1), "Change", api.String("old")))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Change", api.String("new")), api.Merge)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Keep", api.Int32(1), "Change", api.String("new"))))
		})

		f.It("modify.merge.keeps-omitted", "adds the new properties sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Keep", api.Int32(1)))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Added", api.Int64(9), "When", api.DateTime(instant)), api.Merge)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Keep", api.Int32(1), "Added", api.Int64(9), "When", api.DateTime(instant))))
		})

		f.It("modify.merge.keeps-omitted", "keeps every property when none is sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			all := api.NewEntity("p", "r", everyType())
			mustInsert(ctx, b, table, all)
			_, err := scenario.UpdateAny(ctx, b, table, api.NewEntity("p", "r", nil), api.Merge)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, all))
		})

		f.It("modify.merge.null-ignored", "keeps the stored value of a property sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Stay", api.Int32(1), "Other", api.String("o")))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Stay", api.Null(api.EdmInt32), "Other", api.String("n")), api.Merge)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Stay", api.Int32(1), "Other", api.String("n"))))
		})

		f.It("modify.merge.null-ignored", "does not add a new property sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Stay", api.Int32(1)))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Nothing", api.Null(api.EdmString)), api.Merge)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Stay", api.Int32(1))))
		})

		f.DescribeTable("modify.merge.type-change", "changes the type of a property sent with another type",
			func(ctx context.Context, before, after api.Value) {
				b, table := f.Backend(), f.NewTable(ctx)
				mustInsert(ctx, b, table, entity("p", "r", "V", before, "Keep", api.Bool(true)))
				scenario.RequireRoundTrip(ctx, f, b, table, after)
				_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "V", after), api.Merge)
				Expect(err).To(SucceedOnBackend())
				Expect(mustGet(ctx, b, table, "p", "r")).To(HaveProperty("V", after), "V after the merge")
				// That the merge keeps Keep is modify.merge.keeps-omitted's subject.
				f.Requires("modify.merge.keeps-omitted", "the merge keeps the property it does not send", func() {
					Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "V", after, "Keep", api.Bool(true))))
				})
			},
			Entry("from Int32 to String", api.Int32(7), api.String("seven")),
			Entry("from Int32 to Int64", api.Int32(7), api.Int64(7)),
			Entry("from String to Guid", api.String(guid), api.Guid(guid)),
			Entry("from Double to Int32", api.Double(7), api.Int32(7)),
		)
	})

	Context("with If-Match * on a missing entity", func() {
		f.It("modify.update.missing-status", "fails with 404 and creates nothing when merging", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "V", api.Int32(1)), api.Merge)
			Expect(err).To(HaveFailedWith(404))
			Expect(table).To(HoldExactly(ctx, b))
		})

		f.It("modify.update.missing-status", "fails with 404 when only the same RowKey exists in another partition", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			other := entity("p1", "r", "V", api.Int32(1))
			mustInsert(ctx, b, table, other)
			_, err := scenario.UpdateAny(ctx, b, table, entity("p2", "r", "V", api.Int32(2)), api.Merge)
			Expect(err).To(HaveFailedWith(404))
			Expect(table).To(HoldExactly(ctx, b, other))
		})
	})
})
