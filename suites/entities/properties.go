package entities

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Entity properties", func(f *framework.F) {
	Context("with entities of several kinds in one partition", func() {
		// The design guide's example: employees and a department entity side by side.
		kinds := []api.Entity{
			api.NewEntity("Marketing", "00001", map[string]api.Value{
				"FirstName": api.String("Don"), "LastName": api.String("Hall"), "Age": api.Int32(34), "Email": api.String("donh@contoso.com")}),
			api.NewEntity("Marketing", "00002", map[string]api.Value{
				"FirstName": api.String("Jun"), "LastName": api.String("Cao"), "Age": api.Int32(47)}),
			api.NewEntity("Marketing", "Department", map[string]api.Value{
				"DepartmentName": api.String("Marketing"), "EmployeeCount": api.Int32(153)}),
			api.NewEntity("Marketing", "Empty", nil),
		}
		f.It("entities.schema.heterogeneous", "reads each entity back with exactly its own properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			for _, e := range kinds {
				insert(ctx, b, table, e)
			}
			for _, e := range kinds {
				Expect(get(ctx, b, table, e.PartitionKey, e.RowKey)).To(MatchEntity(e))
			}
		})
		f.It("entities.schema.heterogeneous", "queries every kind back with exactly its own properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			for _, e := range kinds {
				insert(ctx, b, table, e)
			}
			got := queryAll(ctx, b, table, api.Query{Filter: "PartitionKey eq 'Marketing'"})
			Expect(got).To(HaveLen(len(kinds)))
			for _, g := range got {
				for _, e := range kinds {
					if e.Key() == g.Key() {
						Expect(g).To(MatchEntity(e))
					}
				}
			}
		})
	})

	Context("with an entity read back after it was written", func() {
		written := api.NewEntity("p", "only", map[string]api.Value{"Name": api.String("n"), "Count": api.Int32(3)})
		f.It("entities.property.no-extra", "carries no member that was never written, through Get Entity, Query Entities and the insert's answer", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			echoed := insert(ctx, b, table, written)
			if len(echoed.Properties) > 0 {
				Expect(echoed).To(HaveOnlyWrittenProperties(), "the answer to Insert Entity")
			}
			Expect(get(ctx, b, table, written.PartitionKey, written.RowKey)).To(HaveOnlyWrittenProperties(), "Get Entity")
			for _, e := range queryAll(ctx, b, table, api.Query{}) {
				Expect(e).To(HaveOnlyWrittenProperties(), "Query Entities")
			}
		})
	})

	Context("with one property name holding different types in different entities", func() {
		values := []api.Value{
			api.String("42"), api.Int32(42), api.Int64(42), api.Double(42.5), api.Bool(true),
			api.Binary([]byte{4, 2}), api.Guid("5d6e4f0a-3c2b-4a19-8e7d-6c5b4a392817"),
		}
		f.It("entities.schema.type-per-entity", "reads each value back with its own type", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			// Each value alone in an entity comes back as itself: what then differs is the
			// shared name's.
			scenario.RequireRoundTrip(ctx, f, b, table, values...)
			var es []api.Entity
			for i, v := range values {
				e := api.NewEntity("p", string(rune('a'+i)), map[string]api.Value{"Value": v})
				insert(ctx, b, table, e)
				es = append(es, e)
			}
			for _, e := range es {
				Expect(get(ctx, b, table, e.PartitionKey, e.RowKey)).To(MatchEntity(e))
			}
			// Matched by key: the order of a query is the ordering rules' subject, not the types'.
			Expect(queryAll(ctx, b, table, api.Query{})).To(ConsistOfEntities(es...), "Query Entities")
		})
	})

	Context("with property names that differ only in letter case", func() {
		f.It("entities.property.name-case", "stores them as distinct properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", map[string]api.Value{
				"name": api.String("lower"), "Name": api.String("title"), "NAME": api.Int32(3), "Other": api.Int32(4)})
			insert(ctx, b, table, e)
			Expect(get(ctx, b, table, "p", "r")).To(MatchEntity(e))
			var got api.Entity
			// $select leaving out a property of another name is query.select.only's subject;
			// leaving out the names that differ only in case is this rule's.
			f.Requires("query.select.only", "read the entity back with $select=Name on Get Entity", func() {
				var err error
				got, err = b.GetEntity(ctx, table, "p", "r", []string{"Name"})
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(LackProperty("Other"), "$select=Name")
			})
			Expect(got).To(HaveProperty("Name", api.String("title")), "$select=Name")
			Expect(got).To(LackProperty("name"), "$select=Name")
			Expect(got).To(LackProperty("NAME"), "$select=Name")
		})
	})

	Context("with property names that are C# identifiers", func() {
		f.DescribeTable("entities.property.name-identifier", "reads the property back under its name",
			func(ctx context.Context, name string) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := api.NewEntity("p", "r", map[string]api.Value{name: api.Int32(7)})
				insert(ctx, b, table, e)
				Expect(get(ctx, b, table, "p", "r")).To(MatchEntity(e))
			},
			Entry("with an underscore inside", "first_name"),
			Entry("starting with an underscore", "_hidden"),
			Entry("with digits after the first letter", "a1b2c3"),
			Entry("of a single letter", "x"),
			Entry("with non-ASCII letters", "Größe"),
			Entry("in a non-Latin script", "名前"),
		)
	})

	Context("with property names that are not C# identifiers", func() {
		f.DescribeTable("entities.property.name-invalid", "refuses the entity with 400 or stores the property under exactly that name",
			func(ctx context.Context, name string) {
				acceptedOrRefused(ctx, f, name, "property name that is not an identifier")
			},
			Entry("with a hyphen", "first-name"),
			Entry("with a space", "first name"),
			Entry("starting with a digit", "1st"),
			Entry("with a control character", "a\x01b"),
			Entry("with a private-use character", "a\ue000b"),
		)
	})

	Context("with a system property name in another letter case", func() {
		f.DescribeTable("entities.property.name-system-case", "refuses the entity with 400 or stores an ordinary property",
			func(ctx context.Context, name string) {
				acceptedOrRefused(ctx, f, name, "system property name in another case")
			},
			Entry("partitionkey", "partitionkey"),
			Entry("ROWKEY", "ROWKEY"),
			Entry("timestamp", "timestamp"),
		)
	})

	Context("with names that Cosmos DB reserves", func() {
		f.DescribeTable("entities.property.name-cosmos-reserved", "stores them as ordinary properties",
			func(ctx context.Context, name string) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := api.NewEntity("p", "r", map[string]api.Value{name: api.String("value of " + name)})
				insert(ctx, b, table, e)
				Expect(get(ctx, b, table, "p", "r")).To(MatchEntity(e))
				Expect(queryAll(ctx, b, table, api.Query{})).To(ConsistOf(MatchEntity(e)))
			},
			Entry("id", "id"),
			Entry("ID", "ID"),
			Entry("rid", "rid"),
			Entry("etag", "etag"),
			Entry("ResourceId", "ResourceId"),
		)
	})

	Context("with a property sent as null", func() {
		f.DescribeTable("entities.property.null-not-stored", "stores the entity without it",
			func(ctx context.Context, w scenario.Write) {
				b, table := f.Backend(), f.NewTable(ctx)
				if w.Existing {
					insert(ctx, b, table, api.NewEntity("p", "r", map[string]api.Value{"Gone": api.Int32(1), "Kept": api.Int32(1)}))
				}
				e := api.NewEntity("p", "r", map[string]api.Value{"Gone": api.Null(api.EdmInt32), "Kept": api.Int32(2)})
				_, err := w.Do(ctx, b, table, e)
				w.RequireMatched(f, err)
				Expect(err).To(SucceedOnBackend(), w.Name)
				got := get(ctx, b, table, "p", "r")
				Expect(got).To(LackProperty("Gone"), "after %s with Gone=null", w.Name)
				Expect(got).To(HaveProperty("Kept", api.Int32(2)))
				listed := queryAll(ctx, b, table, api.Query{})
				Expect(listed).To(HaveLen(1))
				Expect(listed[0]).To(LackProperty("Gone"), "Query Entities after %s with Gone=null", w.Name)
			},
			Entry("by Insert Entity", scenario.Insert),
			Entry("by Update Entity", scenario.Replace),
			Entry("by Insert Or Replace Entity", scenario.InsertOrReplace),
		)
	})

	Context("when the body names a property twice", func() {
		f.DescribeTable("entities.property.duplicate", "refuses the entity with 400",
			func(ctx context.Context, body string) {
				raw, table := f.Raw(), f.NewTable(ctx)
				status, code := rawInsert(ctx, raw, table, body)
				Expect(status).To(Equal(http.StatusBadRequest), "Insert Entity with body %s answered %d %s", body, status, code)
				f.Choice("code for a duplicate property", code)
				Expect(queryAll(ctx, f.Backend(), table, api.Query{})).To(BeEmpty(), "the refused entity was stored")
			},
			Entry("with the same value", `{"PartitionKey":"p","RowKey":"r","V":1,"V":1}`),
			Entry("with different types", `{"PartitionKey":"p","RowKey":"r","V":1,"V":"one"}`),
			Entry("for a key", `{"PartitionKey":"p","RowKey":"r","RowKey":"s"}`),
		)
	})
})

// acceptedOrRefused inserts an entity with one property of the given name: a refusal must
// be a 400, an acceptance must store the property under exactly that name. The choice is
// recorded.
func acceptedOrRefused(ctx context.Context, f *framework.F, name, what string) {
	GinkgoHelper()
	b, table := f.Backend(), f.NewTable(ctx)
	e := api.NewEntity("p", "r", map[string]api.Value{name: api.Int32(7)})
	_, err := b.InsertEntity(ctx, table, e)
	f.Choice(what, OutcomeOf(err))
	if err != nil {
		Expect(err).To(HaveFailedWithStatus(400), "Insert Entity with property %q", name)
		return
	}
	Expect(get(ctx, b, table, "p", "r")).To(MatchEntity(e), "the accepted property %q", name)
}
