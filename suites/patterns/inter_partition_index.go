package patterns

import (
	"context"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The inter-partition secondary index pattern stores each employee twice, in partitions
// "empid_<department>" (RowKey the id) and "email_<department>" (RowKey the address), in
// one table or in two.

func byIDPartition(e fixtures.Employee) api.Entity {
	return api.NewEntity("empid_"+e.Department, e.ID, e.Properties())
}

func byEmailPartition(e fixtures.Employee) api.Entity {
	return api.NewEntity("email_"+e.Department, e.Email, e.Properties())
}

// loadInterIndex stores the id copies of the default employees in primary and the email
// copies in index (which may be the same table).
func loadInterIndex(ctx context.Context, b api.Backend, primary, index string) []fixtures.Employee {
	GinkgoHelper()
	emps := fixtures.EmployeeRecords(0)
	var ids, emails []api.Entity
	for _, e := range fixtures.Shuffle(emps, 12) {
		ids = append(ids, byIDPartition(e))
		emails = append(emails, byEmailPartition(e))
	}
	scenario.Load(ctx, b, primary, ids)
	scenario.Load(ctx, b, index, emails)
	return emps
}

var _ = framework.Describe("Inter-partition secondary index pattern", func(f *framework.F) {
	f.DescribeTable("pattern.inter-index.point-query", "returns each copy to a point query on its own keys",
		func(ctx context.Context, separateTable bool) {
			b, primary := f.Backend(), f.NewTable(ctx)
			index := primary
			if separateTable {
				index = f.NewTable(ctx)
			}
			emps := loadInterIndex(ctx, b, primary, index)
			jones, _ := fixtures.FindEmployee(emps, "000223")
			got, err := b.GetEntity(ctx, primary, "empid_Sales", "000223", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(byIDPartition(jones)))
			got, err = b.GetEntity(ctx, index, "email_Sales", "jonesj@contoso.com", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(byEmailPartition(jones)))
		},
		Entry("with the index copies in another partition of the same table", false),
		Entry("with the index copies in another table", true),
	)

	Context("with the copies of every department in one table", func() {
		f.It("pattern.inter-index.range", "returns the ids from 000100 to 000199 of the empid_Sales partition only", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f) // the rule is the pattern's range, not key order itself
			b, table := f.Backend(), f.NewTable(ctx)
			emps := loadInterIndex(ctx, b, table, table)
			var want []api.Entity
			for _, e := range emps {
				if e.Department == "Sales" && e.ID >= "000100" && e.ID <= "000199" {
					want = append(want, byIDPartition(e))
				}
			}
			want = scenario.SortByKey(want)
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "empid_Sales"),
				scenario.Cmp("RowKey", "ge", "000100"), scenario.Cmp("RowKey", "le", "000199"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(want...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(MatchEntities(want...)) })
		})

		f.It("pattern.inter-index.range", "returns the addresses starting with a of the email_Sales partition only", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f) // the rule is the pattern's range, not key order itself
			b, table := f.Backend(), f.NewTable(ctx)
			emps := loadInterIndex(ctx, b, table, table)
			var want []api.Entity
			for _, e := range emps {
				if e.Department == "Sales" && strings.HasPrefix(e.Email, "a") {
					want = append(want, byEmailPartition(e))
				}
			}
			sort.Slice(want, func(i, j int) bool { return want[i].RowKey < want[j].RowKey })
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "email_Sales"),
				scenario.Cmp("RowKey", "ge", "a"), scenario.Cmp("RowKey", "lt", "b"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(want...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(MatchEntities(want...)) })
		})
	})

	Context("when an employee's address changes one request at a time", func() {
		f.It("pattern.inter-index.stepwise-update", "shows the copies disagreeing between the steps and agreeing after the last", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := loadInterIndex(ctx, b, table, table)
			jones, _ := fixtures.FindEmployee(emps, "000223")
			moved := jones
			moved.Email = "john.jones@contoso.com"
			primary := scenario.MustGet(ctx, b, table, "empid_Sales", "000223")

			By("step 1: the primary copy gets the new address")
			_, err := b.UpdateEntity(ctx, table, byIDPartition(moved), api.Replace, primary.ETag)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, byIDPartition(moved)))
			Expect(table).To(HoldEntity(ctx, b, byEmailPartition(jones)), "the index still lists the old address")
			Expect(table).To(LackEntity(ctx, b, "email_Sales", moved.Email))

			By("step 2: the index copy under the new address is added")
			_, err = b.InsertEntity(ctx, table, byEmailPartition(moved))
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, byEmailPartition(moved)))

			By("step 3: the index copy under the old address is removed")
			Expect(scenario.DeleteAny(ctx, b, table, "email_Sales", jones.Email)).To(SucceedOnBackend())
			Expect(table).To(LackEntity(ctx, b, "email_Sales", jones.Email))
			scenario.RequireDeleted(ctx, f, b, table, scenario.Key("email_Sales", jones.Email))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "email_Sales"), scenario.Cmp("EmployeeId", "eq", "000223"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntities(byEmailPartition(moved)), "after the last step the index and the data agree")
		})
	})
})
