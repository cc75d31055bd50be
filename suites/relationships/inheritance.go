package relationships

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// Inheritance relationships: the client's abstract Person has two concrete classes,
// Customer and Employee, stored in one table and told apart by an EntityType property.

const peoplePartition = "People"

var (
	customerProps = []string{propEntityType, fixtures.PropFirstName, fixtures.PropLastName, "CustomerSince", "CreditLimit"}
	employeeProps = []string{propEntityType, fixtures.PropFirstName, fixtures.PropLastName, fixtures.PropEmployeeID, fixtures.PropDepartmentName}
)

// people returns customers and employees as entities of one table, by class.
func people() map[string][]api.Entity {
	out := map[string][]api.Entity{}
	for i, e := range fixtures.EmployeeRecords(12) {
		out["Employee"] = append(out["Employee"], scenario.Entity(peoplePartition, "e"+e.ID,
			propEntityType, api.String("Employee"),
			fixtures.PropFirstName, api.String(e.FirstName), fixtures.PropLastName, api.String(e.LastName),
			fixtures.PropEmployeeID, api.String(e.ID), fixtures.PropDepartmentName, api.String(e.Department)))
		if i < 8 {
			out["Customer"] = append(out["Customer"], scenario.Entity(peoplePartition, fmt.Sprintf("c%04d", i+1),
				propEntityType, api.String("Customer"),
				fixtures.PropFirstName, api.String(e.LastName), fixtures.PropLastName, api.String(e.FirstName),
				"CustomerSince", api.DateTime(time.Date(2010+i, 3, 1, 0, 0, 0, 0, time.UTC)),
				"CreditLimit", api.Double(float64(1000*(i+1))+0.5)))
		}
	}
	return out
}

var _ = framework.Describe("Inheritance relationships", func(f *framework.F) {
	f.DescribeTable("rel.inheritance.entity-type", "selects one class with a filter on EntityType",
		func(ctx context.Context, class string, names []string) {
			b, table := f.Backend(), f.NewTable(ctx)
			byClass := people()
			scenario.Load(ctx, b, table, fixtures.Shuffle(append(append([]api.Entity(nil), byClass["Customer"]...), byClass["Employee"]...), 21))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", peoplePartition), scenario.Cmp(propEntityType, "eq", class))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(byClass[class]...))
			for _, e := range got {
				Expect(e).To(HavePropertyNames(names...))
			}
		},
		Entry("with the customers", "Customer", customerProps),
		Entry("with the employees", "Employee", employeeProps),
	)

	f.It("rel.inheritance.entity-type", "resolves every entity of an unfiltered query to its class by EntityType", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		byClass := people()
		scenario.Load(ctx, b, table, append(append([]api.Entity(nil), byClass["Customer"]...), byClass["Employee"]...))
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", peoplePartition)})
		Expect(err).To(SucceedOnBackend())
		resolved := map[string][]api.Entity{}
		for _, e := range got {
			class := e.Properties[propEntityType].Str
			Expect([]string{"Customer", "Employee"}).To(ContainElement(class), "entity %s has an unknown EntityType", e.Key())
			resolved[class] = append(resolved[class], e)
		}
		By("comparing each class with what was stored")
		Expect(resolved["Customer"]).To(ConsistOfEntities(byClass["Customer"]...))
		Expect(resolved["Employee"]).To(ConsistOfEntities(byClass["Employee"]...))
	})
})
