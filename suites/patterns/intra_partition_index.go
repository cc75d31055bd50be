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

// The intra-partition secondary index pattern stores each employee twice in its
// department's partition: under "empid_<id>" and under "email_<address>".

func empIDCopy(e fixtures.Employee) api.Entity {
	return api.NewEntity(e.Department, "empid_"+e.ID, e.Properties())
}

func emailCopy(e fixtures.Employee) api.Entity {
	return api.NewEntity(e.Department, "email_"+e.Email, e.Properties())
}

// loadIntraIndex stores both copies of every employee of the default data set.
func loadIntraIndex(ctx context.Context, b api.Backend, table string) []fixtures.Employee {
	GinkgoHelper()
	emps := fixtures.EmployeeRecords(0)
	var es []api.Entity
	for _, e := range fixtures.Shuffle(emps, 11) {
		es = append(es, empIDCopy(e), emailCopy(e))
	}
	scenario.Load(ctx, b, table, es)
	return emps
}

var _ = framework.Describe("Intra-partition secondary index pattern", func(f *framework.F) {
	Context("with every employee stored under an empid_ and an email_ RowKey in its department's partition", func() {
		f.DescribeTable("pattern.intra-index.point-query", "returns exactly the copy a point query names",
			func(ctx context.Context, rowKey string) {
				b, table := f.Backend(), f.NewTable(ctx)
				emps := loadIntraIndex(ctx, b, table)
				jones, _ := fixtures.FindEmployee(emps, "000223")
				got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "eq", rowKey))})
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(MatchEntities(api.NewEntity("Sales", rowKey, jones.Properties())))
			},
			Entry("by employee id", "empid_000223"),
			Entry("by email address", "email_jonesj@contoso.com"),
		)

		f.It("pattern.intra-index.range", "returns the Sales employees with ids from 000100 to 000199 in id order, both bounds included", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := loadIntraIndex(ctx, b, table)
			var want []api.Entity
			for _, e := range emps {
				if e.Department == "Sales" && e.ID >= "000100" && e.ID <= "000199" {
					want = append(want, empIDCopy(e))
				}
			}
			want = scenario.SortByKey(want)
			Expect(Keys(want)).To(ContainElements(api.Key{PartitionKey: "Sales", RowKey: "empid_000100"}, api.Key{PartitionKey: "Sales", RowKey: "empid_000199"}),
				"the fixture must put employees on both bounds")
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"),
				scenario.Cmp("RowKey", "ge", "empid_000100"), scenario.Cmp("RowKey", "le", "empid_000199"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(want...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(MatchEntities(want...)) })
		})

		f.It("pattern.intra-index.range", "returns the Sales employees whose address starts with a, in address order", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			emps := loadIntraIndex(ctx, b, table)
			var want []api.Entity
			for _, e := range emps {
				if e.Department == "Sales" && strings.HasPrefix(e.Email, "a") {
					want = append(want, emailCopy(e))
				}
			}
			sort.Slice(want, func(i, j int) bool { return want[i].RowKey < want[j].RowKey })
			Expect(len(want)).To(BeNumerically(">=", 3), "the fixture must hold several addresses starting with a")
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"),
				scenario.Cmp("RowKey", "ge", "email_a"), scenario.Cmp("RowKey", "lt", "email_b"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(want...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(MatchEntities(want...)) })
		})
	})

	Context("when both copies of an employee change in one entity group transaction", func() {
		f.It("pattern.intra-index.batch-update", "changes both copies", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			emps := loadIntraIndex(ctx, b, table)
			jones, _ := fixtures.FindEmployee(emps, "000223")
			byID, byEmail := scenario.MustGet(ctx, b, table, "Sales", "empid_000223"), scenario.MustGet(ctx, b, table, "Sales", "email_jonesj@contoso.com")
			renamed := jones
			renamed.LastName, renamed.Age = "Jones-Okafor", 40
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchReplace, Entity: empIDCopy(renamed), IfMatch: byID.ETag},
				{Kind: api.BatchReplace, Entity: emailCopy(renamed), IfMatch: byEmail.ETag},
			})
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, empIDCopy(renamed)))
			Expect(table).To(HoldEntity(ctx, b, emailCopy(renamed)))
		})

		f.It("pattern.intra-index.batch-update", "changes neither copy when the ETag of one is stale", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			emps := loadIntraIndex(ctx, b, table)
			jones, _ := fixtures.FindEmployee(emps, "000223")
			byID, byEmail := scenario.MustGet(ctx, b, table, "Sales", "empid_000223"), scenario.MustGet(ctx, b, table, "Sales", "email_jonesj@contoso.com")
			// Another client changes the email copy after this one read it.
			other := emailCopy(jones).With(fixtures.PropAge, api.Int32(41))
			mustUpdate(ctx, b, table, other, api.Replace, byEmail.ETag)

			renamed := jones
			renamed.LastName = "Jones-Okafor"
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchReplace, Entity: empIDCopy(renamed), IfMatch: byID.ETag},
				{Kind: api.BatchReplace, Entity: emailCopy(renamed), IfMatch: byEmail.ETag},
			})
			scenario.ExpectTransactionFailure(f, err, []int{400, 412}, "UpdateConditionNotSatisfied")
			Expect(table).To(HoldEntity(ctx, b, empIDCopy(jones)), "the first operation must be rolled back")
			Expect(table).To(HoldEntity(ctx, b, other))
		})
	})

	Context("with index copies that hold only the properties their queries need", func() {
		f.It("pattern.intra-index.partial-copy", "returns each copy with its own properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			jones, _ := fixtures.FindEmployee(fixtures.EmployeeRecords(0), "000223")
			full := empIDCopy(jones)
			slim := api.NewEntity("Sales", "email_"+jones.Email, scenario.Props(
				fixtures.PropEmployeeID, api.String(jones.ID),
				fixtures.PropFirstName, api.String(jones.FirstName),
				fixtures.PropLastName, api.String(jones.LastName)))
			scenario.Load(ctx, b, table, []api.Entity{full, slim})
			Expect(table).To(HoldEntity(ctx, b, slim))
			Expect(table).To(HoldEntity(ctx, b, full))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales")})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(full, slim))
		})
	})
})
