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

var _ = framework.Describe("Insert Entity", func(f *framework.F) {
	f.DescribeTable("modify.insert.stores", "stores the entity as sent",
		func(ctx context.Context, p map[string]api.Value) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", p)
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, e))
		},
		Entry("with no custom property", map[string]api.Value{}),
		Entry("with one String property", props("Name", api.String("Ada"))),
		Entry("with a property of each EDM type", everyType()),
	)

	f.It("modify.insert.stores", "returns the stored entity with its keys, properties, a Timestamp and an ETag", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		e := api.NewEntity("p", "r", everyType())
		got, err := b.InsertEntity(ctx, table, e)
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(MatchEntity(e))
		Expect(got.ETag).NotTo(BeEmpty(), "the insert returned no ETag")
		Expect(got.Timestamp.IsZero()).To(BeFalse(), "the insert returned no Timestamp")
	})

	Context("when the entity already exists", func() {
		f.It("modify.insert.conflict", "fails with 409 EntityAlreadyExists", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := entity("p", "r", "Age", api.Int32(3))
			mustInsert(ctx, b, table, e)
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(HaveFailedWith(409, "EntityAlreadyExists"))
		})

		f.It("modify.insert.conflict", "leaves the stored entity and its ETag unchanged", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			first := entity("p", "r", "Age", api.Int32(3), "Name", api.String("old"))
			mustInsert(ctx, b, table, first)
			// Two reads before the refused insert: when they disagree, the backend's reads
			// give a fresh ETag (entities.reads.stable's subject) and the ETag cannot show
			// whether the insert changed anything; the properties still do.
			before, again := mustGet(ctx, b, table, "p", "r"), mustGet(ctx, b, table, "p", "r")
			_, err := b.InsertEntity(ctx, table, entity("p", "r", "Age", api.String("new"), "Extra", api.Bool(true)))
			Expect(err).To(HaveFailedWith(409, "EntityAlreadyExists"))
			got := mustGet(ctx, b, table, "p", "r")
			Expect(got).To(MatchEntity(first))
			if before.ETag == again.ETag {
				Expect(got.ETag).To(Equal(again.ETag), "the refused insert changed the stored entity's ETag (two reads before it agreed on it)")
			}
		})
	})

	Context("when an entity with the same keys was deleted", func() {
		f.It("modify.insert.after-delete", "succeeds and stores only the new properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Old", api.Int32(1), "Shared", api.String("old")))
			Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(SucceedOnBackend())
			fresh := entity("p", "r", "Shared", api.Int64(2))
			_, err := b.InsertEntity(ctx, table, fresh)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, fresh))
		})
	})
})

var _ = framework.Describe("Entity keys in writes", func(f *framework.F) {
	Context("with keys that differ only in letter case", func() {
		f.It("modify.keys.case-sensitive", "inserts both RowKeys as distinct entities", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			lower, upper := entity("p", "row", "V", api.Int32(1)), entity("p", "ROW", "V", api.Int32(2))
			_, err := b.InsertEntity(ctx, table, lower)
			Expect(err).To(SucceedOnBackend())
			_, err = b.InsertEntity(ctx, table, upper)
			Expect(err).To(SucceedOnBackend(), "a RowKey that differs only in case was taken for an existing one")
			Expect(table).To(HoldExactly(ctx, b, upper, lower))
		})

		f.It("modify.keys.case-sensitive", "inserts both PartitionKeys as distinct entities", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			lower, upper := entity("part", "r", "V", api.Int32(1)), entity("PART", "r", "V", api.Int32(2))
			_, err := b.InsertEntity(ctx, table, lower)
			Expect(err).To(SucceedOnBackend())
			_, err = b.InsertEntity(ctx, table, upper)
			Expect(err).To(SucceedOnBackend(), "a PartitionKey that differs only in case was taken for an existing one")
			Expect(table).To(HoldExactly(ctx, b, upper, lower))
		})

		f.It("modify.keys.case-sensitive", "deletes only the entity whose keys match exactly", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			lower, upper := entity("p", "row", "V", api.Int32(1)), entity("p", "ROW", "V", api.Int32(2))
			mustInsert(ctx, b, table, lower)
			insertCaseTwin(ctx, b, table, upper)
			Expect(scenario.DeleteAny(ctx, b, table, "p", "ROW")).To(SucceedOnBackend())
			scenario.RequireDeleted(ctx, f, b, table, scenario.Key("p", "ROW"))
			Expect(table).To(HoldExactly(ctx, b, lower))
		})

		f.It("modify.keys.case-sensitive", "replaces only the entity whose keys match exactly", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			lower, upper := entity("p", "row", "V", api.Int32(1)), entity("p", "ROW", "V", api.Int32(2))
			mustInsert(ctx, b, table, lower)
			insertCaseTwin(ctx, b, table, upper)
			changed := entity("p", "row", "V", api.Int32(3)) // of the same type: a type change is not this rule's subject
			mustUpdate(ctx, b, table, changed, api.Replace, api.IfMatchAny)
			Expect(table).To(HoldExactly(ctx, b, upper, changed))
		})

		f.It("modify.keys.case-sensitive", "creates a new entity when an upsert's RowKey differs only in case", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			lower := entity("p", "row", "V", api.Int32(1))
			mustInsert(ctx, b, table, lower)
			upper := entity("p", "ROW", "W", api.Int32(2))
			mustUpdate(ctx, b, table, upper, api.Merge, "")
			Expect(table).To(HoldExactly(ctx, b, upper, lower))
		})
	})
})

// insertCaseTwin inserts twin, whose RowKey differs only in case from an entity the spec
// stored: that the insert succeeds is modify.keys.case-sensitive's own subject, not the
// precondition modify.insert.stores.
func insertCaseTwin(ctx context.Context, b api.Backend, table string, twin api.Entity) {
	GinkgoHelper()
	_, err := b.InsertEntity(ctx, table, twin)
	Expect(err).To(SucceedOnBackend(), "a RowKey that differs only in case was taken for an existing one")
}
