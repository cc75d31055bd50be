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

var _ = framework.Describe("Update Entity", func(f *framework.F) {
	Context("with If-Match * on an existing entity", func() {
		f.It("modify.replace.removes-omitted", "removes the properties not sent and stores the ones sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Keep", api.Int32(1), "Drop", api.String("x"), "Change", api.Bool(false)))
			next := entity("p", "r", "Keep", api.Int32(1), "Change", api.Bool(true), "Add", api.Double(1.5))
			_, err := scenario.UpdateAny(ctx, b, table, next, api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, next))
		})

		f.It("modify.replace.removes-omitted", "leaves only the keys when no property is sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, api.NewEntity("p", "r", everyType()))
			empty := api.NewEntity("p", "r", nil)
			_, err := scenario.UpdateAny(ctx, b, table, empty, api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, empty))
		})

		f.It("modify.replace.null-removes", "does not store a stored property sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Gone", api.Int32(1), "Kept", api.String("k")))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Gone", api.Null(api.EdmInt32), "Kept", api.String("k")), api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Kept", api.String("k"))))
		})

		f.It("modify.replace.null-removes", "does not add a new property sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Kept", api.String("k")))
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "Kept", api.String("k"), "Nothing", api.Null(api.EdmString)), api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Kept", api.String("k"))))
		})

		f.DescribeTable("modify.replace.type-change", "stores the property with its new type",
			func(ctx context.Context, before, after api.Value) {
				b, table := f.Backend(), f.NewTable(ctx)
				mustInsert(ctx, b, table, entity("p", "r", "V", before))
				scenario.RequireRoundTrip(ctx, f, b, table, after)
				next := entity("p", "r", "V", after)
				_, err := scenario.UpdateAny(ctx, b, table, next, api.Replace)
				Expect(err).To(SucceedOnBackend())
				Expect(table).To(HoldEntity(ctx, b, next))
			},
			Entry("from Int32 to String", api.Int32(5), api.String("5")),
			Entry("from String to Int64", api.String("5"), api.Int64(5)),
			Entry("from Int32 to Int64 of the same value", api.Int32(5), api.Int64(5)),
			Entry("from Double to Boolean", api.Double(1), api.Bool(true)),
		)
	})

	Context("with If-Match * on a missing entity", func() {
		f.It("modify.update.missing-status", "fails with 404 and creates nothing", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r", "V", api.Int32(1)), api.Replace)
			Expect(err).To(HaveFailedWith(404))
			Expect(table).To(HoldExactly(ctx, b))
		})

		f.It("modify.update.missing-status", "fails with 404 when only another RowKey of the partition exists", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			other := entity("p", "r1", "V", api.Int32(1))
			mustInsert(ctx, b, table, other)
			_, err := scenario.UpdateAny(ctx, b, table, entity("p", "r2", "V", api.Int32(2)), api.Replace)
			Expect(err).To(HaveFailedWith(404))
			Expect(table).To(HoldExactly(ctx, b, other))
		})
	})
})

var _ = framework.Describe("Missing entities", func(f *framework.F) {
	// statusRule is the rule whose subject is the 404 itself (none for Get Entity, whose
	// 404 this rule covers): the code is this rule's subject.
	f.DescribeTable("modify.missing.code", "answer 404 ResourceNotFound",
		func(ctx context.Context, statusRule string, op func(context.Context, string) error) {
			table := f.NewTable(ctx)
			err := op(ctx, table)
			if statusRule != "" {
				f.Requires(statusRule, "the operation on a missing entity fails with 404", func() {
					Expect(err).To(HaveFailedWithStatusIn([]int{404}))
				})
			}
			Expect(err).To(HaveFailedWith(404, "ResourceNotFound"))
		},
		Entry("for Get Entity", "", func(ctx context.Context, table string) error {
			_, err := f.Backend().GetEntity(ctx, table, "p", "missing", nil)
			return err
		}),
		Entry("for Update Entity with If-Match *", "modify.update.missing-status", func(ctx context.Context, table string) error {
			_, err := scenario.UpdateAny(ctx, f.Backend(), table, entity("p", "missing"), api.Replace)
			return err
		}),
		Entry("for Merge Entity with If-Match *", "modify.update.missing-status", func(ctx context.Context, table string) error {
			_, err := scenario.UpdateAny(ctx, f.Backend(), table, entity("p", "missing"), api.Merge)
			return err
		}),
		Entry("for Delete Entity with If-Match *", "modify.delete.missing", func(ctx context.Context, table string) error {
			return scenario.DeleteAny(ctx, f.Backend(), table, "p", "missing")
		}),
	)

	f.DescribeTable("modify.update.etag-on-missing", "answer 404 or 412 to a specific ETag and create nothing",
		func(ctx context.Context, mode api.UpdateMode) {
			b, table := f.Backend(), f.NewTable(ctx)
			gone := mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(SucceedOnBackend())
			scenario.RequireDeleted(ctx, f, b, table, scenario.Key("p", "r"))
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "V", api.Int32(2)), mode, gone.ETag)
			Expect(err).To(HaveFailedWithStatusIn([]int{404, 412}))
			f.Choice(mode.String()+" with a specific ETag on a missing entity", DescribeOutcome(err))
			Expect(table).To(HoldExactly(ctx, b))
		},
		Entry("for Update Entity", api.Replace),
		Entry("for Merge Entity", api.Merge),
	)
})
