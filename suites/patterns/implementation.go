package patterns

import (
	"context"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The design guide's implementation considerations: retrieving entities (point queries,
// range queries, segmented results), server-side projection, modifying entities (merge or
// replace, optimistic concurrency, the failing operation of a transaction) and parallel
// queries.

var _ = framework.Describe("Implementation considerations", func(f *framework.F) {
	Context("when retrieving entities", func() {
		f.It("pattern.impl.point-query", "returns the employee a point query names", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.Employees(0))
			got, err := b.GetEntity(ctx, table, "Sales", "000223", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(johnJones().Entity()))
		})

		f.It("pattern.impl.point-query", "fails with 404 for an employee that does not exist", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.Employees(0))
			_, err := b.GetEntity(ctx, table, "Sales", "000212", nil)
			Expect(err).To(HaveFailedAs(spec.MissingEntityAnswers...))
		})

		f.It("pattern.impl.range-query", "returns the Sales employees whose RowKey, their last name, starts with B", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			var all, want []api.Entity
			for _, e := range fixtures.EmployeeRecords(0) {
				byName := api.NewEntity(e.Department, e.LastName+"_"+e.ID, e.Properties())
				all = append(all, byName)
				if e.Department == "Sales" && strings.HasPrefix(e.LastName, "B") {
					want = append(want, byName)
				}
			}
			Expect(len(want)).To(BeNumerically(">=", 2))
			scenario.Load(ctx, b, table, fixtures.Shuffle(all, 19))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "ge", "B"), scenario.Cmp("RowKey", "lt", "C"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(want...))
		})

		f.It("pattern.impl.segments", "returns every employee once across pages of at most 50", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			all := fixtures.Employees(160)
			scenario.Load(ctx, b, table, all)
			// $top making pages is query.top.limit's subject, each entity once across them
			// pagination.exactly-once's; the pattern is reading the query in segments.
			scenario.RequirePaging(ctx, f, b, table, api.Query{Top: api.TopOf(50)}, len(all))
			r, err := QueryAll(ctx, b, table, api.Query{Top: api.TopOf(50)}, scenario.MaxPages)
			Expect(err).To(SucceedOnBackend())
			for _, n := range r.PageSizes() {
				Expect(n).To(BeNumerically("<=", 50))
			}
			Expect(len(r.Pages)).To(BeNumerically(">=", 4), "160 entities need at least four pages of 50")
			scenario.ExpectPagedKeys(f, r, Keys(all), "pages of %v", r.PageSizes())
			Expect(r.Entities()).To(ConsistOfEntities(all...))
		})

		f.It("pattern.impl.saved-continuation", "resumes a query from a continuation saved as JSON by an earlier client", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			all := fixtures.Employees(120)
			scenario.Load(ctx, b, table, all)
			q := api.Query{Filter: fixtures.PropAge + " ge 18", Top: api.TopOf(50)}
			// The subject is resuming from a saved continuation: paging at all is a precondition.
			scenario.RequirePaging(ctx, f, b, table, api.Query{Top: q.Top}, len(all))
			f.Requires("query.compare.int32", "the filter "+q.Filter+" selects every employee", func() {
				Expect(scenario.MustQueryAll(ctx, b, table, api.Query{Filter: q.Filter}, len(all), "filter %q", q.Filter).Entities()).To(ConsistOfKeys(Keys(all)...))
			})
			first, err := b.QueryEntities(ctx, table, q)
			Expect(err).To(SucceedOnBackend())
			Expect(first.Continuation.IsZero()).To(BeFalse(), "120 entities do not fit a page of 50")
			saved, err := json.Marshal(first.Continuation)
			Expect(err).NotTo(HaveOccurred())

			By("a new client loading the saved continuation")
			var resumed api.Query
			resumed.Filter, resumed.Top = q.Filter, q.Top
			Expect(json.Unmarshal(saved, &resumed.Continuation)).To(Succeed())
			rest, err := QueryAll(ctx, b, table, resumed, scenario.MaxPages)
			Expect(err).To(SucceedOnBackend())
			// Each entity once across the continued pages is pagination.exactly-once's subject
			// (checked on the query run by one client); this rule's is the saved continuation.
			whole, err := QueryAll(ctx, b, table, q, scenario.MaxPages)
			Expect(err).To(SucceedOnBackend())
			scenario.ExpectPagedKeys(f, whole, Keys(all), "the query run to its end by one client; pages of %v", whole.PageSizes())
			Expect(append(first.Entities, rest.Entities()...)).To(ConsistOfEntities(all...))
		})
	})

	Context("with server-side projection", func() {
		f.It("pattern.impl.projection", "returns only the Email property of the selected employees", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.Employees(0))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "Sales"), Select: []string{fixtures.PropEmail}})
			Expect(err).To(SucceedOnBackend())
			var want, emails []string
			for _, e := range department("Sales") {
				want = append(want, e.Email)
			}
			for _, e := range got {
				Expect(e).To(HavePropertyNames(fixtures.PropEmail))
				emails = append(emails, e.Properties[fixtures.PropEmail].Str)
			}
			Expect(emails).To(ConsistOf(want))
		})
	})

	Context("when modifying entities", func() {
		f.DescribeTable("pattern.impl.merge-or-replace", "sends only some properties",
			func(ctx context.Context, mode api.UpdateMode, want api.Entity) {
				b, table := f.Backend(), f.NewTable(ctx)
				_, err := b.InsertEntity(ctx, table, johnJones().Entity())
				Expect(err).To(SucceedOnBackend())
				_, err = scenario.UpdateAny(ctx, b, table, scenario.Entity("Sales", "000223", fixtures.PropAge, api.Int32(40)), mode)
				Expect(err).To(SucceedOnBackend())
				Expect(table).To(HoldExactly(ctx, b, want))
			},
			Entry("with Replace, which removes the properties not sent", api.Replace, scenario.Entity("Sales", "000223", fixtures.PropAge, api.Int32(40))),
			Entry("with Merge, which keeps them", api.Merge, johnJones().Entity().With(fixtures.PropAge, api.Int32(40))),
		)

		f.DescribeTable("pattern.impl.update-needs-entity", "writes an employee that does not exist",
			func(ctx context.Context, mode api.UpdateMode, ifMatch string, creates bool) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := johnJones().Entity()
				_, err := b.UpdateEntity(ctx, table, e, mode, ifMatch)
				if creates {
					Expect(err).To(SucceedOnBackend())
					Expect(table).To(HoldExactly(ctx, b, e))
				} else {
					Expect(err).To(HaveFailedWith(404))
					Expect(table).To(HoldExactly(ctx, b))
				}
			},
			Entry("with Replace, which fails with 404", api.Replace, api.IfMatchAny, false),
			Entry("with Merge, which fails with 404", api.Merge, api.IfMatchAny, false),
			Entry("with Insert Or Replace, which creates it", api.Replace, "", true),
			Entry("with Insert Or Merge, which creates it", api.Merge, "", true),
		)

		f.It("pattern.impl.optimistic-concurrency", "refuses a stale ETag with 412 and lets If-Match * through", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			stored, err := b.InsertEntity(ctx, table, johnJones().Entity())
			Expect(err).To(SucceedOnBackend())
			older := johnJones().Entity().With(fixtures.PropAge, api.Int32(40))
			mustUpdate(ctx, b, table, older, api.Replace, stored.ETag) // another client
			_, err = b.UpdateEntity(ctx, table, johnJones().Entity().With(fixtures.PropAge, api.Int32(41)), api.Replace, stored.ETag)
			Expect(err).To(HaveFailedWith(412))
			f.Requires("concurrency.stale-etag.replace", "the refused replace reports UpdateConditionNotSatisfied", func() {
				Expect(err).To(HaveFailedWith(412, "UpdateConditionNotSatisfied"))
			})
			Expect(table).To(HoldExactly(ctx, b, older))
			forced := johnJones().Entity().With(fixtures.PropAge, api.Int32(42))
			_, err = scenario.UpdateAny(ctx, b, table, forced, api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, forced))
		})

		f.It("pattern.impl.failed-operation-index", "names the operation that failed, or none, and applies nothing", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			sales := department("Sales")
			_, err := b.InsertEntity(ctx, table, sales[2].Entity())
			Expect(err).To(SucceedOnBackend())
			_, err = b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: sales[0].Entity()},
				{Kind: api.BatchInsert, Entity: sales[1].Entity()},
				{Kind: api.BatchInsert, Entity: sales[2].Entity()},
			})
			scenario.ExpectTransactionFailure(f, err, []int{400, 409}, "EntityAlreadyExists")
			Expect(err).To(NameFailedOperation(2))
			if e, ok := driver.AsError(err); ok && e.Indexed {
				f.Choice("index of the failed operation", "names operation 2")
			} else {
				f.Choice("index of the failed operation", "names none")
			}
			f.Requires("batch.atomic", "the failed transaction applied none of its inserts", func() {
				Expect(table).To(HoldExactly(ctx, b, sales[2].Entity()))
			})
		})
	})

	Context("with parallel queries", func() {
		f.It("pattern.impl.parallel-partitions", "returns the same employees from one query per department as from one scan", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			all := fixtures.Employees(0)
			scenario.Load(ctx, b, table, all)
			depts := fixtures.DepartmentNames()
			parts := make([][]api.Entity, len(depts))
			errs := runConcurrently(len(depts), func(i int) error {
				var err error
				parts[i], err = scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", depts[i])})
				return err
			})
			Expect(describeErrors(errs)).To(BeEmpty())
			var union []api.Entity
			for _, p := range parts {
				union = append(union, p...)
			}
			scan, err := scenario.AllEntities(ctx, b, table, api.Query{})
			Expect(err).To(SucceedOnBackend())
			f.Requires("query.table-scan", "the scan returns every department's employees", func() {
				Expect(scan).To(HaveLen(len(all)), "the scan of the employees")
			})
			Expect(union).To(ConsistOfEntities(scan...))
			Expect(scan).To(ConsistOfEntities(all...))
		})
	})
})
