package modification

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

var _ = framework.Describe("Insert Or Replace Entity", func(f *framework.F) {
	Context("when the entity is missing", func() {
		f.It("modify.insert-or-replace.creates", "creates it", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", everyType())
			_, err := b.UpdateEntity(ctx, table, e, api.Replace, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, e))
		})

		f.It("modify.insert-or-replace.creates", "creates it without the properties sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "V", api.Int32(1), "N", api.Null(api.EdmInt64)), api.Replace, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "V", api.Int32(1))))
		})
	})

	Context("when the entity exists", func() {
		f.It("modify.insert-or-replace.replaces", "replaces it whole, removing the properties not sent", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Old", api.Int32(1), "Same", api.String("a")))
			next := entity("p", "r", "Same", api.String("b"), "New", api.Bool(false))
			_, err := b.UpdateEntity(ctx, table, next, api.Replace, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, next))
		})

		f.It("modify.insert-or-replace.replaces", "removes the properties sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Gone", api.Int32(1), "Same", api.String("a")))
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "Gone", api.Null(api.EdmInt32), "Same", api.String("a")), api.Replace, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Same", api.String("a"))))
		})
	})
})

var _ = framework.Describe("Insert Or Merge Entity", func(f *framework.F) {
	Context("when the entity is missing", func() {
		f.It("modify.insert-or-merge.creates", "creates it", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", everyType())
			_, err := b.UpdateEntity(ctx, table, e, api.Merge, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, e))
		})

		f.It("modify.insert-or-merge.creates", "creates it without the properties sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "V", api.Int32(1), "N", api.Null(api.EdmString)), api.Merge, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "V", api.Int32(1))))
		})
	})

	Context("when the entity exists", func() {
		f.It("modify.insert-or-merge.merges", "keeps the properties not sent and sets the others", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Keep", api.Int32(1), "Change", api.String("a")))
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "Change", api.String("b"), "Add", api.Int64(3)), api.Merge, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Keep", api.Int32(1), "Change", api.String("b"), "Add", api.Int64(3))))
		})

		f.It("modify.insert-or-merge.merges", "keeps the old value of a property sent as null", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Old", api.Double(0.25), "Change", api.String("a")))
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "Old", api.Null(api.EdmDouble), "Change", api.String("b")), api.Merge, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "Old", api.Double(0.25), "Change", api.String("b"))))
		})

		f.It("modify.insert-or-merge.merges", "changes the type of a property sent with another type", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1), "Keep", api.Bool(true)))
			_, err := b.UpdateEntity(ctx, table, entity("p", "r", "V", api.String("one")), api.Merge, "")
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "V", api.String("one"), "Keep", api.Bool(true))))
		})
	})
})
