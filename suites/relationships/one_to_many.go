package relationships

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The guide's three layouts of the one-to-many relationship between a department and its
// employees: separate entity types in one partition, separate entity types in different
// partitions or tables, and employees carrying a denormalized copy of their department.

const (
	// departmentsPartition holds department entities kept apart from their employees.
	departmentsPartition = "Departments"
	propManagerName      = "ManagerName"
)

// newSalesHire is an employee of Sales who is not in the data set yet (the guide's 000152).
func newSalesHire() fixtures.Employee {
	return fixtures.Employee{Department: "Sales", ID: "000152", FirstName: "Nina", LastName: "Jones", Age: 30, Email: "jonesn@contoso.com"}
}

// apartDepartment is a department entity in departmentsPartition, RowKey its name.
func apartDepartment(d fixtures.Department) api.Entity {
	return api.NewEntity(departmentsPartition, d.Name, d.Properties())
}

// withDepartment is an employee carrying its department's details.
func withDepartment(e fixtures.Employee, d fixtures.Department, manager fixtures.Employee) api.Entity {
	x := e.Entity()
	x.Properties[fixtures.PropDepartmentName] = api.String(d.Name)
	x.Properties[fixtures.PropManager] = api.String(manager.ID)
	x.Properties[propManagerName] = api.String(manager.FirstName + " " + manager.LastName)
	return x
}

var _ = framework.Describe("One-to-many relationships", func(f *framework.F) {
	Context("with the department and its employees in one partition", func() {
		f.It("rel.one-to-many.same-partition", "returns the department and all its employees to one partition query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := fixtures.EmployeeRecords(0)
			scenario.Load(ctx, b, table, append(fixtures.Employees(0), fixtures.Departments(0)...))
			sales := departmentOf(emps, "Sales")
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales")})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(append(entitiesOf(employeesOf(emps, "Sales")), sales.Entity())...))
			Expect(int(sales.EmployeeCount)).To(Equal(len(got)-1), "the department's count matches the employees returned")
		})

		f.It("rel.one-to-many.count-in-batch", "keeps EmployeeCount equal to the employees when a transaction adds one", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table) // a Department entity in each partition
			emps := fixtures.EmployeeRecords(0)
			scenario.Load(ctx, b, table, append(fixtures.Employees(0), fixtures.Departments(0)...))
			dept := scenario.MustGet(ctx, b, table, "Sales", fixtures.DepartmentRowKey)
			count := int32(dept.Properties[fixtures.PropEmployeeCount].Int())
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: newSalesHire().Entity()},
				{Kind: api.BatchMerge, Entity: scenario.Entity("Sales", fixtures.DepartmentRowKey, fixtures.PropEmployeeCount, api.Int32(count+1)), IfMatch: dept.ETag},
			})
			Expect(err).To(SucceedOnBackend())
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "ne", fixtures.DepartmentRowKey))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(HaveLen(len(employeesOf(emps, "Sales")) + 1))
			// The transaction merges the count alone: what else the department keeps is the
			// subject of batch.merge-replace.
			scenario.ExpectMerged(ctx, f, b, table, scenario.RuleTransactionMerge,
				departmentOf(emps, "Sales").Entity().With(fixtures.PropEmployeeCount, api.Int32(int32(len(got)))), fixtures.PropEmployeeCount)
		})

		f.It("rel.one-to-many.count-in-batch", "leaves EmployeeCount unchanged when the employee already exists", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireKeyIdentity(ctx, f, b, table)
			emps := fixtures.EmployeeRecords(0)
			scenario.Load(ctx, b, table, append(fixtures.Employees(0), fixtures.Departments(0)...))
			dept := scenario.MustGet(ctx, b, table, "Sales", fixtures.DepartmentRowKey)
			existing, _ := fixtures.FindEmployee(emps, "000223")
			scenario.RequireTransactions(ctx, f, b, table)
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchMerge, Entity: scenario.Entity("Sales", fixtures.DepartmentRowKey, fixtures.PropEmployeeCount, api.Int32(int32(dept.Properties[fixtures.PropEmployeeCount].Int())+1)), IfMatch: dept.ETag},
				{Kind: api.BatchInsert, Entity: existing.Entity()},
			})
			scenario.ExpectTransactionFailure(f, err, []int{400, 409}, "EntityAlreadyExists")
			Expect(table).To(HoldEntity(ctx, b, departmentOf(emps, "Sales").Entity()), "the merge before the failed insert must be rolled back")
		})
	})

	Context("with the departments apart from their employees", func() {
		f.DescribeTable("rel.one-to-many.separate-partitions", "returns a department and its employees to two queries",
			func(ctx context.Context, otherTable bool) {
				b, table := f.Backend(), f.NewTable(ctx)
				deptTable := table
				if otherTable {
					deptTable = f.NewTable(ctx)
				}
				emps := fixtures.EmployeeRecords(0)
				var depts []api.Entity
				for _, d := range fixtures.DepartmentRecords(emps) {
					depts = append(depts, apartDepartment(d))
				}
				scenario.Load(ctx, b, table, fixtures.Employees(0))
				scenario.Load(ctx, b, deptTable, depts)

				dept, err := b.GetEntity(ctx, deptTable, departmentsPartition, "Marketing", nil)
				Expect(err).To(SucceedOnBackend())
				Expect(dept).To(MatchEntity(apartDepartment(departmentOf(emps, "Marketing"))))
				staff, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", dept.Properties[fixtures.PropDepartmentName].Str)})
				Expect(err).To(SucceedOnBackend())
				Expect(staff).To(ConsistOfEntities(entitiesOf(employeesOf(emps, "Marketing"))...))
				Expect(staff).To(HaveLen(int(dept.Properties[fixtures.PropEmployeeCount].Int())))
				Expect(Keys(staff)).To(ContainElement(api.Key{PartitionKey: "Marketing", RowKey: dept.Properties[fixtures.PropManager].Str}), "the manager is one of the employees")
			},
			Entry("in another partition of the same table", false),
			Entry("in another table", true),
		)

		f.It("rel.one-to-many.cross-partition-batch", "refuses a transaction that adds an employee and counts it in the department's partition", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := fixtures.EmployeeRecords(0)
			sales := apartDepartment(departmentOf(emps, "Sales"))
			scenario.Load(ctx, b, table, append(fixtures.Employees(0), sales))
			scenario.RequireTransactions(ctx, f, b, table)
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: newSalesHire().Entity()},
				{Kind: api.BatchMerge, Entity: scenario.Entity(departmentsPartition, "Sales", fixtures.PropEmployeeCount, api.Int32(int32(sales.Properties[fixtures.PropEmployeeCount].Int())+1)), IfMatch: api.IfMatchAny},
			})
			Expect(err).To(HaveFailedWith(400))
			f.Choice("code of a transaction over two partitions", codeOf(err))
			Expect(table).To(HoldExactly(ctx, b, append(fixtures.Employees(0), sales)...))
		})
	})

	Context("with the department's details denormalized into every employee", func() {
		f.It("rel.one-to-many.denormalized", "returns an employee with its department's details to one query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := fixtures.EmployeeRecords(0)
			var es []api.Entity
			for _, d := range fixtures.DepartmentRecords(emps) {
				m, _ := fixtures.FindEmployee(emps, d.Manager)
				for _, e := range employeesOf(emps, d.Name) {
					es = append(es, withDepartment(e, d, m))
				}
			}
			scenario.Load(ctx, b, table, es)
			kwok, _ := fixtures.FindEmployee(emps, "000010")
			jones, _ := fixtures.FindEmployee(emps, "000223")
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "eq", "000010"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntities(withDepartment(kwok, departmentOf(emps, "Sales"), jones)))
		})

		f.It("rel.one-to-many.denormalized-update", "updates every employee of the department in transactions of at most 100", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			staff := employeesOf(fixtures.EmployeeRecords(800), "Sales")
			Expect(len(staff)).To(BeNumerically(">", spec.MaxBatchOperations), "the department must need more than one transaction")
			d := departmentOf(staff, "Sales")
			oldManager, _ := fixtures.FindEmployee(staff, d.Manager)
			newManager, _ := fixtures.FindEmployee(staff, "000100")
			var es []api.Entity
			for _, e := range staff {
				es = append(es, withDepartment(e, d, oldManager))
			}
			scenario.Load(ctx, b, table, es)

			current, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales")})
			Expect(err).To(SucceedOnBackend())
			transactions := 0
			for start := 0; start < len(current); start += spec.MaxBatchOperations {
				var ops []api.BatchOp
				for _, e := range current[start:min(start+spec.MaxBatchOperations, len(current))] {
					ops = append(ops, api.BatchOp{Kind: api.BatchMerge, IfMatch: e.ETag, Entity: scenario.Entity("Sales", e.RowKey,
						fixtures.PropManager, api.String(newManager.ID),
						propManagerName, api.String(newManager.FirstName+" "+newManager.LastName))})
				}
				_, err := b.SubmitBatch(ctx, table, ops)
				scenario.RequireCurrentETagMatched(f, err, fmt.Sprintf("transaction %d of %d merges", transactions+1, len(ops)))
				Expect(err).To(SucceedOnBackend(), "transaction %d of %d merges", transactions+1, len(ops))
				transactions++
			}
			Expect(transactions).To(BeNumerically(">=", 2))
			var want []api.Entity
			for _, e := range staff {
				want = append(want, withDepartment(e, d, newManager))
			}
			// The transactions merge the manager alone: what else each employee keeps is the
			// subject of batch.merge-replace.
			scenario.ExpectMergedTable(ctx, f, b, table, scenario.RuleTransactionMerge, want, fixtures.PropManager, propManagerName)
		})
	})
})
