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

// neighbours are the entities around ("p","r") that share one of its keys.
func neighbours() []api.Entity {
	return []api.Entity{
		entity("p", "q", "V", api.Int32(10)),
		entity("p", "s", "V", api.Int32(11)),
		entity("o", "r", "V", api.Int32(12)),
		entity("pp", "r", "V", api.Int32(13)),
	}
}

var _ = framework.Describe("Design for data modification", func(f *framework.F) {
	// The neighbours and the keys the table holds are the subject; what the addressed entity
	// holds afterwards is the subject of the write's own rule (writeRule), a precondition.
	f.DescribeTable("modify.point.isolation", "changes only the entity the keys address",
		func(ctx context.Context, writeRule string, op func(context.Context, api.Backend, string) error, exists bool, want *api.Entity) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireKeyIdentity(ctx, f, b, table) // the neighbours share the addressed RowKey
			others := neighbours()
			for _, e := range others {
				mustInsert(ctx, b, table, e)
			}
			if exists {
				mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1), "W", api.String("w")))
			}
			Expect(op(ctx, b, table)).To(SucceedOnBackend())
			if exists && want == nil {
				scenario.RequireDeleted(ctx, f, b, table, scenario.Key("p", "r"))
			}
			expected := others
			if want != nil {
				expected = append(expected, *want)
			}
			for _, n := range others {
				Expect(table).To(HoldEntity(ctx, b, n), "a neighbour of (\"p\", \"r\")")
			}
			all, err := ReadTableAndPartitions(ctx, b, table, expected...)
			Expect(err).To(SucceedOnBackend(), "read the table")
			Expect(all).To(ConsistOfKeys(Keys(expected)...), "the keys of the entities the table holds")
			f.Requires(writeRule, "the addressed entity holds what the write stores", func() {
				Expect(table).To(HoldExactly(ctx, b, expected...))
			})
		},
		Entry("for a replace", "modify.replace.removes-omitted", func(ctx context.Context, b api.Backend, t string) error {
			_, err := scenario.UpdateAny(ctx, b, t, entity("p", "r", "V", api.Int32(2)), api.Replace)
			return err
		}, true, &api.Entity{PartitionKey: "p", RowKey: "r", Properties: props("V", api.Int32(2))}),
		Entry("for a merge", "modify.merge.keeps-omitted", func(ctx context.Context, b api.Backend, t string) error {
			_, err := scenario.UpdateAny(ctx, b, t, entity("p", "r", "V", api.Int32(3)), api.Merge)
			return err
		}, true, &api.Entity{PartitionKey: "p", RowKey: "r", Properties: props("V", api.Int32(3), "W", api.String("w"))}),
		Entry("for a delete", "modify.delete.removes", func(ctx context.Context, b api.Backend, t string) error {
			return scenario.DeleteAny(ctx, b, t, "p", "r")
		}, true, nil),
		Entry("for an insert next to entities that share one key", "modify.insert.stores", func(ctx context.Context, b api.Backend, t string) error {
			_, err := b.InsertEntity(ctx, t, entity("p", "r", "V", api.Int32(4)))
			return err
		}, false, &api.Entity{PartitionKey: "p", RowKey: "r", Properties: props("V", api.Int32(4))}),
	)

	Context("once a write is acknowledged", func() {
		f.It("modify.read-your-writes", "a point read returns the merged entity", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1), "W", api.Int32(1)))
			mustUpdate(ctx, b, table, entity("p", "r", "V", api.Int32(2)), api.Merge, api.IfMatchAny)
			f.Requires("modify.merge.keeps-omitted", "a query shows the merged entity", func() {
				Expect(table).To(HoldExactly(ctx, b, entity("p", "r", "V", api.Int32(2), "W", api.Int32(1))))
			})
			Expect(table).To(HoldEntity(ctx, b, entity("p", "r", "V", api.Int32(2), "W", api.Int32(1))))
		})

		f.It("modify.read-your-writes", "a point read made before the write does not hide it from the next one", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
			before, err := b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(before).To(MatchEntity(entity("p", "r", "V", api.Int32(1))))
			mustUpdate(ctx, b, table, entity("p", "r", "V", api.Int32(2)), api.Merge, api.IfMatchAny)
			after, err := b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(after).To(MatchEntity(entity("p", "r", "V", api.Int32(2))), "Get Entity after an acknowledged merge")
			f.Requires("modify.etag.changes", "the merge gives the entity a new ETag", func() {
				Expect(after.ETag).NotTo(Equal(before.ETag), "the ETag after the merge")
			})
		})

		f.It("modify.read-your-writes", "a filter on the changed property finds the new value and not the old one", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			for i, rk := range []string{"a", "b", "c"} {
				mustInsert(ctx, b, table, entity("p", rk, "State", api.String("new"), "N", api.Int32(int32(i))))
			}
			mustUpdate(ctx, b, table, entity("p", "b", "State", api.String("done")), api.Merge, api.IfMatchAny)
			done, err := b.QueryEntities(ctx, table, api.Query{Filter: "State eq 'done'"})
			Expect(err).To(SucceedOnBackend())
			Expect(done.Entities).To(HaveKeys(api.Key{PartitionKey: "p", RowKey: "b"}))
			fresh, err := b.QueryEntities(ctx, table, api.Query{Filter: "State eq 'new'"})
			Expect(err).To(SucceedOnBackend())
			Expect(fresh.Entities).To(ConsistOfKeys(api.Key{PartitionKey: "p", RowKey: "a"}, api.Key{PartitionKey: "p", RowKey: "c"}), "in any order: the order is ordering.key-order's subject")
		})

		f.It("modify.read-your-writes", "a partition query returns the replaced entity with only its new properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "Old", api.Int32(1)))
			next := entity("p", "r", "New", api.Int32(2))
			mustUpdate(ctx, b, table, next, api.Replace, "")
			f.Requires("modify.insert-or-replace.replaces", "a point read shows the replaced entity", func() {
				Expect(mustGet(ctx, b, table, "p", "r")).To(MatchEntity(next))
			})
			page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p'"})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(HaveLen(1), "the partition query returned %s", KeyList(page.Entities))
			Expect(page.Entities[0]).To(MatchEntity(next))
		})
	})
})
