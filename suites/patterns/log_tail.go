package patterns

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The log tail pattern keys an employee's expense claims by the inverted ticks of their
// submission time, so that the first entities of the partition are the newest and $top=10
// on the first page gives the ten most recent. The api Backend returns one page per call;
// an SDK pager would keep fetching past $top (EVIDENCE.md 12 #13).

// loadExpenses stores the default claims in shuffled order and returns them newest first.
func loadExpenses(ctx context.Context, b api.Backend, table string) []api.Entity {
	GinkgoHelper()
	claims := fixtures.Expenses(0)
	scenario.Load(ctx, b, table, fixtures.Shuffle(claims, 14))
	newest := slices.Clone(claims)
	slices.Reverse(newest)
	return newest
}

var _ = framework.Describe("Log tail pattern", func(f *framework.F) {
	Context("with expense claims keyed by inverted ticks", func() {
		f.It("pattern.log-tail.newest-first", "returns the ten newest claims, newest first, on the first page of $top=10", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f) // the subject is the keys' order, not key order itself
			b, table := f.Backend(), f.NewTable(ctx)
			newest := loadExpenses(ctx, b, table)
			q := api.Query{Filter: scenario.Cmp("PartitionKey", "eq", fixtures.DefaultExpenseEmployee), Top: api.TopOf(10)}
			scenario.RequirePaging(ctx, f, b, table, q, len(newest)) // the subject is the order, not $top
			page, err := b.QueryEntities(ctx, table, q)
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(HaveLen(10), "the first page of $top=10")
			byKey := map[api.Key]api.Entity{}
			for _, e := range newest {
				byKey[e.Key()] = e
			}
			for _, e := range page.Entities {
				Expect(byKey).To(HaveKey(e.Key()), "an entity of the first page that was never stored")
				Expect(e).To(MatchEntity(byKey[e.Key()]))
			}
			f.Check(spec.CheckOrder, func() {
				Expect(page.Entities).To(MatchEntities(newest[:10]...))
				at, err := fixtures.TimeOfInvertedTicks(page.Entities[0].RowKey)
				Expect(err).NotTo(HaveOccurred())
				Expect(page.Entities[0]).To(HaveProperty(fixtures.PropSubmitted, api.DateTime(at)), "the first RowKey decodes to the newest submission time")
			})
		})

		f.It("pattern.log-tail.next-page", "continues with the next newest claims after the first page", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f)
			b, table := f.Backend(), f.NewTable(ctx)
			newest := loadExpenses(ctx, b, table)
			q := api.Query{Filter: scenario.Cmp("PartitionKey", "eq", fixtures.DefaultExpenseEmployee), Top: api.TopOf(10)}
			scenario.RequirePaging(ctx, f, b, table, q, len(newest))
			first, err := b.QueryEntities(ctx, table, q)
			Expect(err).To(SucceedOnBackend())
			Expect(first.Entities).To(HaveLen(10))
			Expect(first.Continuation.IsZero()).To(BeFalse(), "%d more claims remain, so the page must carry a continuation", len(newest)-10)
			q.Continuation = first.Continuation
			rest, err := QueryAll(ctx, b, table, q, scenario.MaxPages)
			Expect(err).To(SucceedOnBackend())
			for _, n := range rest.PageSizes() {
				Expect(n).To(BeNumerically("<=", 10), "$top bounds every page")
			}
			scenario.ExpectPagedKeys(f, Result{Pages: append([]api.Page{first}, rest.Pages...)}, Keys(newest), "the first page and the rest (pages of %v)", rest.PageSizes())
			Expect(append(slices.Clone(first.Entities), rest.Entities()...)).To(ConsistOfEntities(newest...), "the first page and the rest")
			f.Check(spec.CheckOrder, func() { Expect(rest.Entities()).To(MatchEntities(newest[10:]...)) })
		})

		f.It("pattern.log-tail.since", "returns exactly the claims newer than a given claim's time", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			newest := loadExpenses(ctx, b, table)
			pivot := newest[10] // the eleventh newest: excluded, the ten above it returned
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", fixtures.DefaultExpenseEmployee), scenario.Cmp("RowKey", "lt", pivot.RowKey))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(newest[:10]...))
		})
	})

	Context("with tick counts that are not zero-padded", func() {
		f.It("pattern.log-tail.string-order", "sorts the RowKeys as strings, not as numbers", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f)
			b, table := f.Backend(), f.NewTable(ctx)
			var es []api.Entity
			for _, rk := range []string{"99", "1000", "250", "0099", "9"} {
				es = append(es, scenario.Entity("ticks", rk, "Value", api.String(rk)))
			}
			scenario.Load(ctx, b, table, es)
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", "ticks")})
			Expect(err).To(SucceedOnBackend())
			want := []api.Key{{PartitionKey: "ticks", RowKey: "0099"}, {PartitionKey: "ticks", RowKey: "1000"},
				{PartitionKey: "ticks", RowKey: "250"}, {PartitionKey: "ticks", RowKey: "9"}, {PartitionKey: "ticks", RowKey: "99"}}
			Expect(got).To(ConsistOfKeys(want...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(HaveKeys(want...)) })
		})
	})
})
