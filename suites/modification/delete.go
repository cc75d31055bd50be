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

var _ = framework.Describe("Delete Entity", func(f *framework.F) {
	Context("with If-Match * on an existing entity", func() {
		f.It("modify.delete.removes", "removes it: a read then fails with 404", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(SucceedOnBackend())
			Expect(table).To(LackEntity(ctx, b, "p", "r"))
		})

		f.It("modify.delete.removes", "removes it from query results", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			keep := entity("p", "a", "V", api.Int32(1))
			mustInsert(ctx, b, table, keep)
			mustInsert(ctx, b, table, entity("p", "b", "V", api.Int32(2)))
			mustInsert(ctx, b, table, entity("p", "c", "V", api.Int32(3)))
			f.Requires("query.compare.int32", "query with the filter V ge 1 before the deletes", func() {
				page, err := b.QueryEntities(ctx, table, api.Query{Filter: "V ge 1"})
				Expect(err).To(SucceedOnBackend())
				Expect(page.Entities).To(HaveLen(3), "V ge 1 over three entities with V 1, 2, 3")
			})
			Expect(scenario.DeleteAny(ctx, b, table, "p", "b")).To(SucceedOnBackend())
			Expect(scenario.DeleteAny(ctx, b, table, "p", "c")).To(SucceedOnBackend())
			page, err := b.QueryEntities(ctx, table, api.Query{Filter: "V ge 1"})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(HaveKeys(keep.Key()))
		})
	})

	Context("when the entity is missing", func() {
		f.It("modify.delete.missing", "fails with 404", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(HaveFailedWith(404))
		})

		f.It("modify.delete.missing", "fails with 404 on a second delete of the same entity", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r"))
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(SucceedOnBackend())
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(HaveFailedWith(404))
		})
	})

	Context("without If-Match", func() {
		f.It("modify.delete.requires-if-match", "is refused with 400", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r"))
			Expect(b.DeleteEntity(ctx, table, "p", "r", "")).To(HaveFailedWith(400))
		})

		f.It("modify.delete.requires-if-match", "deletes nothing", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := entity("p", "r", "V", api.Int32(1))
			mustInsert(ctx, b, table, e)
			_ = b.DeleteEntity(ctx, table, "p", "r", "")
			Expect(table).To(HoldExactly(ctx, b, e))
		})
	})
})
