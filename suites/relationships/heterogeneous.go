package relationships

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// Work with heterogeneous entity types: employees and departments (and badges) share a
// table and a partition, told apart by an EntityType property or by a type prefix of the
// RowKey; a client reads and updates them without knowing their type in advance.

const propCode = "Code"

// typedSales returns the Sales department and its employees with an EntityType property.
func typedSales() (dept api.Entity, staff []api.Entity) {
	emps := fixtures.EmployeeRecords(0)
	dept = departmentOf(emps, "Sales").Entity().With(propEntityType, api.String("Department"))
	for _, e := range employeesOf(emps, "Sales") {
		staff = append(staff, e.Entity().With(propEntityType, api.String("Employee")))
	}
	return dept, staff
}

// prefixedSales returns the Sales partition with typed RowKeys: DEPARTMENT_SALES, an
// EMPLOYEE_<id> per employee and a BADGE_<id> per employee (the same ids, another type).
// Code is a String on the department, an Int32 on employees and a Double on badges.
func prefixedSales() map[string][]api.Entity {
	out := map[string][]api.Entity{
		"DEPARTMENT_": {scenario.Entity("Sales", "DEPARTMENT_SALES", fixtures.PropDepartmentName, api.String("Sales"), propCode, api.String("SLS"))},
	}
	for i, e := range employeesOf(fixtures.EmployeeRecords(0), "Sales") {
		out["EMPLOYEE_"] = append(out["EMPLOYEE_"], api.NewEntity("Sales", "EMPLOYEE_"+e.ID, e.Properties()).With(propCode, api.Int32(int32(100+i))))
		out["BADGE_"] = append(out["BADGE_"], scenario.Entity("Sales", "BADGE_"+e.ID, "Holder", api.String(e.FirstName+" "+e.LastName), propCode, api.Double(float64(i)+0.25)))
	}
	return out
}

var _ = framework.Describe("Work with heterogeneous entity types", func(f *framework.F) {
	f.DescribeTable("rel.heterogeneous.type-property", "selects one entity type of the partition with a filter on EntityType",
		func(ctx context.Context, typ string) {
			b, table := f.Backend(), f.NewTable(ctx)
			dept, staff := typedSales()
			scenario.Load(ctx, b, table, fixtures.Shuffle(append([]api.Entity{dept}, staff...), 22))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp(propEntityType, "eq", typ))})
			Expect(err).To(SucceedOnBackend())
			want := staff
			if typ == "Department" {
				want = []api.Entity{dept}
			}
			Expect(got).To(ConsistOfEntities(want...))
		},
		Entry("with EntityType eq 'Employee'", "Employee"),
		Entry("with EntityType eq 'Department'", "Department"),
	)

	f.It("rel.heterogeneous.rowkey-prefix", "returns exactly one type to a RowKey prefix range, the types grouped in key order", func(ctx context.Context) {
		scenario.RequireKeyOrder(ctx, f) // the rule is the pattern's range, not key order itself
		b, table := f.Backend(), f.NewTable(ctx)
		byType := prefixedSales()
		var all []api.Entity
		for _, es := range byType {
			all = append(all, es...)
		}
		scenario.Load(ctx, b, table, fixtures.Shuffle(all, 23))
		prefixes := []string{"EMPLOYEE_", "BADGE_"}
		gots := make([][]api.Entity, len(prefixes))
		for i, prefix := range prefixes {
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"),
				scenario.Cmp("RowKey", "ge", prefix), scenario.Cmp("RowKey", "lt", prefix[:len(prefix)-1]+"`"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(byType[prefix]...), "prefix %s", prefix)
			gots[i] = got
		}
		whole, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales")})
		Expect(err).To(SucceedOnBackend())
		grouped := append(append(scenario.SortByKey(byType["BADGE_"]), byType["DEPARTMENT_"]...), scenario.SortByKey(byType["EMPLOYEE_"])...)
		Expect(whole).To(ConsistOfEntities(grouped...))
		f.Check(spec.CheckOrder, func() {
			for i, prefix := range prefixes {
				Expect(gots[i]).To(MatchEntities(scenario.SortByKey(byType[prefix])...), "prefix %s", prefix)
			}
			Expect(whole).To(MatchEntities(grouped...))
		})
	})

	f.It("rel.heterogeneous.mixed-property-types", "keeps each entity type's own EDM type for a shared property name", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		byType := prefixedSales()
		var all []api.Entity
		for _, es := range byType {
			all = append(all, es...)
		}
		// Each type of Code, alone in an entity, comes back as itself: what then differs is
		// the shared name's.
		codes := map[api.EdmType]api.Value{}
		for _, e := range all {
			codes[e.Properties[propCode].Type] = e.Properties[propCode]
		}
		for _, t := range api.AllEdmTypes {
			if v, ok := codes[t]; ok {
				scenario.RequireRoundTrip(ctx, f, b, table, v)
			}
		}
		scenario.Load(ctx, b, table, all)
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales")})
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(ConsistOfEntities(all...))
		types := map[api.EdmType]bool{}
		for _, e := range got {
			types[e.Properties[propCode].Type] = true
		}
		Expect(types).To(HaveLen(3), "Code comes back as String, Int32 and Double")
	})

	f.It("rel.heterogeneous.untyped-update", "raises EmployeeCount of an entity read without its type and keeps the rest", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		dept, staff := typedSales()
		scenario.Load(ctx, b, table, append([]api.Entity{dept}, staff...))
		got := scenario.MustGet(ctx, b, table, "Sales", fixtures.DepartmentRowKey)
		count, ok := got.Properties[fixtures.PropEmployeeCount]
		Expect(ok).To(BeTrue(), "the entity read has an EmployeeCount property")
		raised := api.Int32(int32(count.Int()) + 1)
		_, err := b.UpdateEntity(ctx, table, scenario.Entity("Sales", fixtures.DepartmentRowKey, fixtures.PropEmployeeCount, raised), api.Merge, got.ETag)
		Expect(err).To(SucceedOnBackend())
		Expect(table).To(HoldEntity(ctx, b, dept.With(fixtures.PropEmployeeCount, raised)))
	})
})
