package patterns

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The denormalization pattern keeps a copy of the manager's details in the department
// entity, which shares a partition with the department's employees, so that one point
// query gives everything and one transaction keeps the copies consistent.

const (
	propManagerFirstName = "ManagerFirstName"
	propManagerLastName  = "ManagerLastName"
	propManagerEmail     = "ManagerEmail"
)

// managedDepartment is the department entity with its manager's details copied in.
func managedDepartment(d fixtures.Department, manager fixtures.Employee) api.Entity {
	e := d.Entity()
	e.Properties[propManagerFirstName] = api.String(manager.FirstName)
	e.Properties[propManagerLastName] = api.String(manager.LastName)
	e.Properties[propManagerEmail] = api.String(manager.Email)
	return e
}

// loadDenormalized stores the default employees and their departments with the managers'
// details, and returns the department entities.
func loadDenormalized(ctx context.Context, b api.Backend, table string) (map[string]api.Entity, []fixtures.Employee) {
	GinkgoHelper()
	emps := fixtures.EmployeeRecords(0)
	depts := map[string]api.Entity{}
	es := fixtures.Employees(0)
	for _, d := range fixtures.DepartmentRecords(emps) {
		m, _ := fixtures.FindEmployee(emps, d.Manager)
		depts[d.Name] = managedDepartment(d, m)
		es = append(es, depts[d.Name])
	}
	scenario.Load(ctx, b, table, es)
	return depts, emps
}

var _ = framework.Describe("Denormalization pattern", func(f *framework.F) {
	Context("with each department entity carrying its manager's details", func() {
		f.It("pattern.denormalization.point-query", "returns the department and its manager's details to one point query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireKeyIdentity(ctx, f, b, table)  // a Department entity in each partition
			depts, emps := loadDenormalized(ctx, b, table) // no transaction: the copy is read, not written
			for _, name := range fixtures.DepartmentNames() {
				got, err := b.GetEntity(ctx, table, name, fixtures.DepartmentRowKey, nil)
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(MatchEntity(depts[name]))
				m, _ := fixtures.FindEmployee(emps, got.Properties[fixtures.PropManager].Str)
				Expect(got).To(HaveProperty(propManagerEmail, api.String(m.Email)), "the copy agrees with the manager's employee entity")
			}
		})
	})

	Context("when the manager's address changes", func() {
		changeEmail := func(ctx context.Context, b api.Backend, table string, email string, interfere func(dept api.Entity)) error {
			manager := scenario.MustGet(ctx, b, table, "Sales", "000223")
			dept := scenario.MustGet(ctx, b, table, "Sales", fixtures.DepartmentRowKey)
			if interfere != nil {
				interfere(dept)
			}
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchMerge, Entity: scenario.Entity("Sales", "000223", fixtures.PropEmail, api.String(email)), IfMatch: manager.ETag},
				{Kind: api.BatchMerge, Entity: scenario.Entity("Sales", fixtures.DepartmentRowKey, propManagerEmail, api.String(email)), IfMatch: dept.ETag},
			})
			return err
		}

		f.It("pattern.denormalization.batch-update", "changes the employee and the department's copy in one transaction", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table)
			depts, emps := loadDenormalized(ctx, b, table)
			Expect(changeEmail(ctx, b, table, "john.jones@contoso.com", nil)).To(SucceedOnBackend())
			jones, _ := fixtures.FindEmployee(emps, "000223")
			jones.Email = "john.jones@contoso.com"
			// The transaction merges the address alone: what else each entity keeps is the
			// subject of batch.merge-replace.
			scenario.ExpectMerged(ctx, f, b, table, scenario.RuleTransactionMerge, jones.Entity(), fixtures.PropEmail)
			scenario.ExpectMerged(ctx, f, b, table, scenario.RuleTransactionMerge, depts["Sales"].With(propManagerEmail, api.String(jones.Email)), propManagerEmail)
		})

		f.It("pattern.denormalization.batch-update", "changes neither when the department changed after it was read", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table)
			depts, emps := loadDenormalized(ctx, b, table)
			counted := depts["Sales"].With(fixtures.PropEmployeeCount, api.Int32(int32(depts["Sales"].Properties[fixtures.PropEmployeeCount].Int())+1))
			err := changeEmail(ctx, b, table, "john.jones@contoso.com", func(dept api.Entity) {
				mustUpdate(ctx, b, table, counted, api.Merge, dept.ETag) // another client counts a new hire
			})
			requireStaleRefused(f, err)
			jones, _ := fixtures.FindEmployee(emps, "000223")
			Expect(table).To(HoldEntity(ctx, b, jones.Entity()), "the employee's merge must be rolled back")
			Expect(table).To(HoldEntity(ctx, b, counted))
		})
	})
})
