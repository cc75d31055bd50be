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

// Join in the client: the departments change rarely and are few, so the client reads them
// once, caches them, and joins them with the employees its queries return.

var _ = framework.Describe("Join in the client", func(f *framework.F) {
	f.It("rel.join-in-client", "reads the department table whole in one page and joins it with a query's employees", func(ctx context.Context) {
		b, employees, departments := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
		emps := fixtures.EmployeeRecords(0)
		var depts []api.Entity
		for _, d := range fixtures.DepartmentRecords(emps) {
			depts = append(depts, apartDepartment(d))
		}
		scenario.Load(ctx, b, employees, fixtures.Employees(0))
		scenario.Load(ctx, b, departments, depts)

		page, err := b.QueryEntities(ctx, departments, api.Query{})
		Expect(err).To(SucceedOnBackend())
		// No continuation after the last matches of a page with room to spare is
		// pagination.no-extra-page's subject; the table coming back whole is this rule's.
		f.Requires("pagination.no-extra-page", "the six departments in one page without a continuation", func() {
			Expect(page.Continuation.IsZero()).To(BeTrue(), "six departments fit one page")
		})
		Expect(page.Entities).To(ConsistOfEntities(depts...))
		cache := map[string]api.Entity{}
		for _, d := range page.Entities {
			cache[d.RowKey] = d
		}

		var senior []api.Entity
		for _, e := range emps {
			if e.Age >= 40 {
				senior = append(senior, e.Entity())
			}
		}
		staff, err := scenario.AllEntities(ctx, b, employees, api.Query{Filter: fixtures.PropAge + " ge 40"})
		f.Requires("query.table-scan", "the table scan "+fixtures.PropAge+" ge 40 returns the senior employees of every department", func() {
			Expect(err).To(SucceedOnBackend())
			Expect(staff).To(ConsistOfEntities(senior...))
		})
		for _, e := range staff {
			d, ok := cache[e.PartitionKey]
			Expect(ok).To(BeTrue(), "employee %s belongs to a cached department", e.Key())
			manager, _ := fixtures.FindEmployee(emps, d.Properties[fixtures.PropManager].Str)
			Expect(manager.Department).To(Equal(e.PartitionKey), "the join gives employee %s its own department's manager", e.RowKey)
		}
	})
})
