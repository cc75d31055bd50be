package relationships

import (
	"context"

	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// One-to-one relationships: an employee and its photo details, linked either by a key
// convention (the same partition, RowKeys "<id>" and "<id>_photo") or by an explicit
// reference (each stores the other's PartitionKey and RowKey).

const (
	propRelatedPK = "RelatedPartitionKey"
	propRelatedRK = "RelatedRowKey"
)

func photoDetails(e fixtures.Employee, rowKey string) api.Entity {
	return api.NewEntity(e.Department, rowKey, scenario.Props(
		"PhotoUri", api.String("https://contoso.blob.core.windows.net/photos/"+e.ID+".jpg"),
		"Width", api.Int32(480), "Height", api.Int32(640)))
}

var _ = framework.Describe("One-to-one relationships", func(f *framework.F) {
	f.It("rel.one-to-one.key-convention", "returns an employee and its photo details together to one range query", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		emps := fixtures.EmployeeRecords(0)
		es := fixtures.Employees(0)
		for _, e := range emps {
			es = append(es, photoDetails(e, e.ID+"_photo"))
		}
		scenario.Load(ctx, b, table, es)
		khan, _ := fixtures.FindEmployee(emps, "000123")
		_, next := fixtures.FindEmployee(emps, "000124")
		Expect(next).To(BeTrue(), "the fixture must hold the next employee id")
		pair := []api.Entity{khan.Entity(), photoDetails(khan, "000123_photo")}
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "ge", "000123"), scenario.Cmp("RowKey", "lt", "000124"))})
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(ContainKeys(Keys(pair)...), "the range query for 000123 holds the employee and its photo details")
		f.Requires("query.range", "the range query [000123, 000124) returns nothing beyond its bounds", func() {
			Expect(got).To(ConsistOfKeys(Keys(pair)...))
		})
		Expect(got).To(ConsistOfEntities(pair...))
		for _, want := range pair {
			Expect(table).To(HoldEntity(ctx, b, want))
		}
	})

	f.It("rel.one-to-one.explicit-reference", "leads from the employee to its photo details in another table and back", func(ctx context.Context) {
		b, employees, photos := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
		emps := fixtures.EmployeeRecords(0)
		var es, ps []api.Entity
		for _, e := range emps {
			photo := photoDetails(e, e.ID).With(propRelatedPK, api.String(e.Department)).With(propRelatedRK, api.String(e.ID))
			photo.PartitionKey = "photos"
			ps = append(ps, photo)
			es = append(es, e.Entity().With(propRelatedPK, api.String(photo.PartitionKey)).With(propRelatedRK, api.String(photo.RowKey)))
		}
		scenario.Load(ctx, b, employees, es)
		scenario.Load(ctx, b, photos, ps)

		wantJones, wantPhoto := entityWithKeys(es, "Sales", "000223"), entityWithKeys(ps, "photos", "000223")
		Expect(wantJones.Properties).NotTo(BeEmpty(), "the fixture must hold employee 000223 of Sales")
		jones := scenario.MustGet(ctx, b, employees, "Sales", "000223")
		Expect(jones).To(MatchEntity(wantJones))
		photo, err := b.GetEntity(ctx, photos, jones.Properties[propRelatedPK].Str, jones.Properties[propRelatedRK].Str, nil)
		Expect(err).To(SucceedOnBackend())
		Expect(photo).To(MatchEntity(wantPhoto))
		back, err := b.GetEntity(ctx, employees, photo.Properties[propRelatedPK].Str, photo.Properties[propRelatedRK].Str, nil)
		Expect(err).To(SucceedOnBackend())
		Expect(back).To(MatchEntity(wantJones))
	})
})

// entityWithKeys returns the entity of es with the keys (pk, rk), or an empty entity.
func entityWithKeys(es []api.Entity, pk, rk string) api.Entity {
	for _, e := range es {
		if e.PartitionKey == pk && e.RowKey == rk {
			return e
		}
	}
	return api.Entity{}
}
