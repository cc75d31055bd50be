package patterns

import (
	"context"
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The index entities pattern keeps, per last name, the list of the employees who have it.
// Option 1 keeps the lists outside the table (a blob per name), option 2 as index entities
// in the employees' partition (PartitionKey the department, RowKey the last name, the ids
// in EmployeeIDs) updated with the employee in one transaction, option 3 as index entities
// of their own partition (here a table of their own) holding department:id pairs in
// EmployeeDetails, kept eventually consistent.

const (
	propEmployeeIDs     = "EmployeeIDs"
	propEmployeeDetails = "EmployeeDetails"
	// nameIndexPartition is the partition of option 3's index entities.
	nameIndexPartition = "LastName"
)

func joinList(items []string) string { return strings.Join(items, ",") }

func splitList(v api.Value) []string {
	if v.Str == "" {
		return nil
	}
	return strings.Split(v.Str, ",")
}

// nameIndex is option 2's index entity of one last name in one department.
func nameIndex(dept, lastName string, ids ...string) api.Entity {
	return api.NewEntity(dept, lastName, scenario.Props(propEmployeeIDs, api.String(joinList(ids))))
}

// sameDeptIndexes builds option 2's index entities of emps.
func sameDeptIndexes(emps []fixtures.Employee) []api.Entity {
	ids := map[[2]string][]string{}
	var order [][2]string
	for _, e := range emps {
		k := [2]string{e.Department, e.LastName}
		if _, ok := ids[k]; !ok {
			order = append(order, k)
		}
		ids[k] = append(ids[k], e.ID)
	}
	var out []api.Entity
	for _, k := range order {
		out = append(out, nameIndex(k[0], k[1], ids[k]...))
	}
	return out
}

// isConcurrencyConflict reports whether err says that another client got there first: a
// stale ETag (412, UpdateConditionNotSatisfied) or an entity created meanwhile (409,
// EntityAlreadyExists), inside a transaction possibly reported with status 400 and the
// code. The status suffices: the code of each is another rule's subject.
func isConcurrencyConflict(err error) bool {
	e, ok := driver.AsError(err)
	return ok && (e.Status == 412 || e.Status == 409 || e.Code == "UpdateConditionNotSatisfied" || e.Code == "EntityAlreadyExists")
}

// addWithSameDeptIndex adds emp and lists it in its index entity in one transaction,
// retrying from the read on conflicts (the guide's steps 1 to 3). beforeSubmit, when set,
// runs after the first read.
func addWithSameDeptIndex(ctx context.Context, b api.Backend, table string, emp fixtures.Employee, beforeSubmit func()) error {
	for attempt := range maxAttempts {
		idx, err := b.GetEntity(ctx, table, emp.Department, emp.LastName, nil)
		ops := []api.BatchOp{{Kind: api.BatchInsert, Entity: emp.Entity()}}
		switch {
		case scenario.IsStatus(err, 404):
			ops = append(ops, api.BatchOp{Kind: api.BatchInsert, Entity: nameIndex(emp.Department, emp.LastName, emp.ID)})
		case err != nil:
			return fmt.Errorf("read the index entity: %w", err)
		default:
			ids := append(splitList(idx.Properties[propEmployeeIDs]), emp.ID)
			ops = append(ops, api.BatchOp{Kind: api.BatchReplace, Entity: nameIndex(emp.Department, emp.LastName, ids...), IfMatch: idx.ETag})
		}
		if attempt == 0 && beforeSubmit != nil {
			beforeSubmit()
		}
		_, err = b.SubmitBatch(ctx, table, ops)
		if err == nil || !isConcurrencyConflict(err) {
			return err
		}
	}
	return fmt.Errorf("employee %s: still conflicting after %d attempts", emp.ID, maxAttempts)
}

// lookUpByName follows option 2's lookup: read the index entity, then point-query each id.
func lookUpByName(ctx context.Context, b api.Backend, table, dept, lastName string) ([]api.Entity, error) {
	idx, err := b.GetEntity(ctx, table, dept, lastName, nil)
	if err != nil {
		return nil, fmt.Errorf("read the index entity: %w", err)
	}
	var out []api.Entity
	for _, id := range splitList(idx.Properties[propEmployeeIDs]) {
		e, err := b.GetEntity(ctx, table, dept, id, nil)
		if err != nil {
			return out, fmt.Errorf("read employee %s: %w", id, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// newJones is an employee of Sales named Jones who is not in the data set yet.
func newJones(id, first string) fixtures.Employee {
	return fixtures.Employee{Department: "Sales", ID: id, FirstName: first, LastName: "Jones", Age: 30,
		Email: strings.ToLower("jones"+first[:1]+id) + "@contoso.com"}
}

// loadSameDeptIndex stores the default employees and their option 2 index entities.
func loadSameDeptIndex(ctx context.Context, b api.Backend, table string) []fixtures.Employee {
	GinkgoHelper()
	emps := fixtures.EmployeeRecords(0)
	es := fixtures.Employees(0)
	scenario.Load(ctx, b, table, append(es, sameDeptIndexes(emps)...))
	return emps
}

func idsWith(emps []fixtures.Employee, dept, lastName string) []string {
	var ids []string
	for _, e := range emps {
		if e.Department == dept && e.LastName == lastName {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

var _ = framework.Describe("Index entities pattern", func(f *framework.F) {
	Context("with the lists of employee keys kept in blobs (option 1)", func() {
		f.It("pattern.index-entities.external-list", "finds exactly the employees with a last name by point queries on the listed keys", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := fixtures.EmployeeRecords(0)
			scenario.Load(ctx, b, table, fixtures.Employees(0))
			blobs := map[string][]api.Key{} // one blob per last name
			var want []api.Entity
			for _, e := range emps {
				blobs[e.LastName] = append(blobs[e.LastName], e.Entity().Key())
				if e.LastName == "Jones" {
					want = append(want, e.Entity())
				}
			}
			var got []api.Entity
			for _, k := range blobs["Jones"] {
				e, err := b.GetEntity(ctx, table, k.PartitionKey, k.RowKey, nil)
				Expect(err).To(SucceedOnBackend(), "point query for %v", k)
				got = append(got, e)
			}
			Expect(len(want)).To(BeNumerically(">=", 3), "the fixture must hold Joneses in two departments")
			Expect(got).To(ConsistOfEntities(want...))
		})
	})

	Context("with index entities in the employees' partition (option 2)", func() {
		f.It("pattern.index-entities.same-partition-add", "stores the new employee and lists it in the index in one transaction", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table) // a Jones index entity in more than one partition
			emps := loadSameDeptIndex(ctx, b, table)
			added := newJones("000152", "Nina")
			Expect(addWithSameDeptIndex(ctx, b, table, added, nil)).To(SucceedOnBackend())
			wantIDs := append(idsWith(emps, "Sales", "Jones"), added.ID)
			Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Jones", wantIDs...)))
			Expect(table).To(HoldEntity(ctx, b, added.Entity()))
			found, err := lookUpByName(ctx, b, table, "Sales", "Jones")
			Expect(err).To(SucceedOnBackend())
			want := []api.Entity{added.Entity()}
			for _, id := range idsWith(emps, "Sales", "Jones") {
				e, _ := fixtures.FindEmployee(emps, id)
				want = append(want, e.Entity())
			}
			Expect(found).To(ConsistOfEntities(want...))
		})

		f.It("pattern.index-entities.same-partition-stale", "refuses a transaction built on a stale index entity with 412 and stores neither entity", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table) // a Jones index entity in more than one partition
			emps := loadSameDeptIndex(ctx, b, table)
			before := idsWith(emps, "Sales", "Jones")
			stale := scenario.MustGet(ctx, b, table, "Sales", "Jones")

			other := newJones("000153", "Omar")
			Expect(addWithSameDeptIndex(ctx, b, table, other, nil)).To(SucceedOnBackend(), "another client adds an employee first")

			mine := newJones("000152", "Nina")
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: mine.Entity()},
				{Kind: api.BatchReplace, Entity: nameIndex("Sales", "Jones", append(before, mine.ID)...), IfMatch: stale.ETag},
			})
			Expect(err).To(HaveFailedWithStatusIn([]int{400, 412}, "UpdateConditionNotSatisfied"))
			Expect(table).To(LackEntity(ctx, b, "Sales", mine.ID), "the insert of the same transaction must be rolled back")
			Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Jones", append(before, other.ID)...)))

			By("retrying from a fresh read")
			Expect(addWithSameDeptIndex(ctx, b, table, mine, nil)).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Jones", append(before, other.ID, mine.ID)...)))
			Expect(table).To(HoldEntity(ctx, b, mine.Entity()))
		})

		f.It("pattern.index-entities.same-partition-concurrent", "ends with every employee added by concurrent updaters listed exactly once", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			scenario.RequireKeyIdentity(ctx, f, b, table) // a Jones index entity in more than one partition
			emps := loadSameDeptIndex(ctx, b, table)
			const updaters = 6
			var added []fixtures.Employee
			for i := range updaters {
				added = append(added, newJones(fmt.Sprintf("%06d", 160+i), fmt.Sprintf("Kid%d", i)))
			}
			together := newBarrier(updaters)
			errs := runConcurrently(updaters, func(i int) error {
				return addWithSameDeptIndex(ctx, b, table, added[i], func() { together.wait(ctx) })
			})
			Expect(describeErrors(errs)).To(BeEmpty())

			wantIDs := idsWith(emps, "Sales", "Jones")
			for _, e := range added {
				wantIDs = append(wantIDs, e.ID)
				Expect(table).To(HoldEntity(ctx, b, e.Entity()))
			}
			idx := scenario.MustGet(ctx, b, table, "Sales", "Jones")
			Expect(splitList(idx.Properties[propEmployeeIDs])).To(ConsistOf(wantIDs), "the index lists each employee once")
		})

		Context("when an employee's last name changes", func() {
			rename := func(ctx context.Context, b api.Backend, table string, touchNewIndex bool) error {
				emp := scenario.MustGet(ctx, b, table, "Sales", "000150")
				oldIdx, newIdx := scenario.MustGet(ctx, b, table, "Sales", "Jones"), scenario.MustGet(ctx, b, table, "Sales", "Smith")
				if touchNewIndex {
					mustUpdate(ctx, b, table, scenario.Strip(newIdx), api.Replace, newIdx.ETag) // another client rewrites it
				}
				var keep []string
				for _, id := range splitList(oldIdx.Properties[propEmployeeIDs]) {
					if id != "000150" {
						keep = append(keep, id)
					}
				}
				_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
					{Kind: api.BatchReplace, Entity: scenario.Strip(emp).With(fixtures.PropLastName, api.String("Smith")), IfMatch: emp.ETag},
					{Kind: api.BatchReplace, Entity: nameIndex("Sales", "Jones", keep...), IfMatch: oldIdx.ETag},
					{Kind: api.BatchReplace, Entity: nameIndex("Sales", "Smith", append(splitList(newIdx.Properties[propEmployeeIDs]), "000150")...), IfMatch: newIdx.ETag},
				})
				return err
			}

			f.It("pattern.index-entities.same-partition-rename", "moves the id from the old name's list to the new one's with the employee", func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				scenario.RequireTransactions(ctx, f, b, table)
				scenario.RequireKeyIdentity(ctx, f, b, table)
				emps := loadSameDeptIndex(ctx, b, table)
				Expect(rename(ctx, b, table, false)).To(SucceedOnBackend())
				ben, _ := fixtures.FindEmployee(emps, "000150")
				ben.LastName = "Smith"
				Expect(table).To(HoldEntity(ctx, b, ben.Entity()))
				Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Jones", "000223")))
				Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Smith", append(idsWith(emps, "Sales", "Smith"), "000150")...)))
			})

			f.It("pattern.index-entities.same-partition-rename", "changes none of the three entities when one index entity is stale", func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				scenario.RequireTransactions(ctx, f, b, table)
				scenario.RequireKeyIdentity(ctx, f, b, table)
				emps := loadSameDeptIndex(ctx, b, table)
				requireStaleRefused(f, rename(ctx, b, table, true))
				ben, _ := fixtures.FindEmployee(emps, "000150")
				Expect(table).To(HoldEntity(ctx, b, ben.Entity()))
				Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Jones", idsWith(emps, "Sales", "Jones")...)))
				Expect(table).To(HoldEntity(ctx, b, nameIndex("Sales", "Smith", idsWith(emps, "Sales", "Smith")...)))
			})
		})
	})

	Context("with index entities in a partition of their own (option 3)", func() {
		f.It("pattern.index-entities.separate-partition", "ends with a complete index after concurrent updaters create and extend it", func(ctx context.Context) {
			b, employees, index := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
			emps := fixtures.EmployeeRecords(0)
			scenario.Load(ctx, b, employees, fixtures.Employees(0))
			details := map[string][]string{}
			for _, e := range emps {
				details[e.LastName] = append(details[e.LastName], e.Department+":"+e.ID)
			}
			var indexes []api.Entity
			for name, pairs := range details {
				indexes = append(indexes, api.NewEntity(nameIndexPartition, name, scenario.Props(propEmployeeDetails, api.String(joinList(pairs)))))
			}
			scenario.Load(ctx, b, index, indexes)

			depts := fixtures.DepartmentNames()
			var added []fixtures.Employee
			for i := range 8 {
				last := "Jones"
				if i%2 == 1 {
					last = "Nakamura" // no index entity yet: the updaters race to create it
				}
				added = append(added, fixtures.Employee{Department: depts[i%len(depts)], ID: fmt.Sprintf("%06d", 700+i),
					FirstName: fmt.Sprintf("New%d", i), LastName: last, Age: 28, Email: fmt.Sprintf("new%d@contoso.com", i)})
			}
			together := newBarrier(len(added))
			errs := runConcurrently(len(added), func(i int) error {
				e := added[i]
				if _, err := b.InsertEntity(ctx, employees, e.Entity()); err != nil {
					return fmt.Errorf("insert the employee: %w", err)
				}
				pair := e.Department + ":" + e.ID
				for attempt := range maxAttempts {
					idx, err := b.GetEntity(ctx, index, nameIndexPartition, e.LastName, nil)
					if attempt == 0 {
						together.wait(ctx)
					}
					switch {
					case scenario.IsStatus(err, 404):
						_, err = b.InsertEntity(ctx, index, api.NewEntity(nameIndexPartition, e.LastName, scenario.Props(propEmployeeDetails, api.String(pair))))
					case err != nil:
						return fmt.Errorf("read the index entity: %w", err)
					default:
						list := append(splitList(idx.Properties[propEmployeeDetails]), pair)
						_, err = b.UpdateEntity(ctx, index, api.NewEntity(nameIndexPartition, e.LastName, scenario.Props(propEmployeeDetails, api.String(joinList(list)))), api.Replace, idx.ETag)
					}
					if err == nil || !isConcurrencyConflict(err) {
						return err
					}
				}
				return fmt.Errorf("still conflicting after %d attempts", maxAttempts)
			})
			Expect(describeErrors(errs)).To(BeEmpty())

			for _, e := range added {
				details[e.LastName] = append(details[e.LastName], e.Department+":"+e.ID)
			}
			for _, name := range []string{"Jones", "Nakamura"} {
				idx := scenario.MustGet(ctx, b, index, nameIndexPartition, name)
				Expect(splitList(idx.Properties[propEmployeeDetails])).To(ConsistOf(details[name]), "index entity %q lists each employee once", name)
			}

			By("looking up every Jones through the index")
			idx := scenario.MustGet(ctx, b, index, nameIndexPartition, "Jones")
			seenDepts := map[string]bool{}
			for _, pair := range splitList(idx.Properties[propEmployeeDetails]) {
				dept, id, _ := strings.Cut(pair, ":")
				got, err := b.GetEntity(ctx, employees, dept, id, nil)
				Expect(err).To(SucceedOnBackend(), "point query for %s", pair)
				Expect(got).To(HaveProperty(fixtures.PropLastName, api.String("Jones")))
				seenDepts[dept] = true
			}
			found := make([]string, 0, len(seenDepts))
			for d := range seenDepts {
				found = append(found, d)
			}
			sort.Strings(found)
			Expect(len(found)).To(BeNumerically(">=", 3), "the index finds Joneses of several departments: %v", found)
		})
	})
})
