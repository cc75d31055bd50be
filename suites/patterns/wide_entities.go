package patterns

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

// The wide entities pattern stores an employee's 365 daily message counts, more than the
// 252 custom properties an entity may hold, as two entities of one partition (RowKeys "01"
// and "02"), written together by one transaction.

const wideEmployee = "000223"

// yearEntity is one entity holding days first..last of an employee's daily counts.
func yearEntity(rowKey string, first, last int) api.Entity {
	counts := fixtures.DailyMessageCounts(wideEmployee)
	p := make(map[string]api.Value, last-first+1)
	for d := first; d <= last; d++ {
		p[fixtures.DayProperty(d)] = api.Int32(counts[d-1])
	}
	return api.NewEntity(wideEmployee, rowKey, p)
}

// yearParts splits the year after day split.
func yearParts(split int) (api.Entity, api.Entity) {
	return yearEntity("01", 1, split), yearEntity("02", split+1, fixtures.DaysPerYear)
}

func insertBoth(ctx context.Context, b api.Backend, table string, a, c api.Entity) error {
	_, err := b.SubmitBatch(ctx, table, []api.BatchOp{{Kind: api.BatchInsert, Entity: a}, {Kind: api.BatchInsert, Entity: c}})
	return err
}

var _ = framework.Describe("Wide entities pattern", func(f *framework.F) {
	Context("with a year of daily counts in one entity", func() {
		f.It("pattern.wide-entities.too-many", "refuses the 365 properties with 400 TooManyProperties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			whole := yearEntity("year", 1, fixtures.DaysPerYear)
			Expect(len(whole.Properties)).To(BeNumerically(">", spec.MaxCustomProperties))
			_, err := b.InsertEntity(ctx, table, whole)
			Expect(err).To(HaveFailedWith(400, "TooManyProperties"))
			Expect(table).To(LackEntity(ctx, b, whole.PartitionKey, whole.RowKey))
		})
	})

	Context("with the year split into two entities written by one transaction", func() {
		f.It("pattern.wide-entities.batch", "stores both parts", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			first, second := yearParts(200)
			Expect(insertBoth(ctx, b, table, first, second)).To(SucceedOnBackend())
			Expect(table).To(HoldExactly(ctx, b, first, second))
		})

		f.It("pattern.wide-entities.batch", "stores neither part when one has more than 252 properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			first, second := yearParts(fixtures.DaysPerYear - spec.MaxCustomProperties - 1)
			Expect(len(second.Properties)).To(Equal(spec.MaxCustomProperties + 1))
			err := insertBoth(ctx, b, table, first, second)
			f.Check(spec.CheckRefusal, func() { Expect(err).To(HaveFailedWith(400, "TooManyProperties")) })
			Expect(table).To(HoldExactly(ctx, b))
		})

		f.It("pattern.wide-entities.batch", "changes neither part when the ETag of one is stale", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			first, second := yearParts(200)
			Expect(insertBoth(ctx, b, table, first, second)).To(SucceedOnBackend())
			got1, got2 := scenario.MustGet(ctx, b, table, wideEmployee, "01"), scenario.MustGet(ctx, b, table, wideEmployee, "02")
			other := scenario.Entity(wideEmployee, "02", fixtures.DayProperty(365), api.Int32(-1))
			mustUpdate(ctx, b, table, other, api.Merge, got2.ETag) // another client corrects day 365
			f.Requires(scenario.RuleMergeKeepsOmitted, "the other client's merge of day 365 keeps the other days", func() {
				Expect(table).To(HoldExactly(ctx, b, first, second.With(fixtures.DayProperty(365), api.Int32(-1))))
			})
			_, err := b.SubmitBatch(ctx, table, []api.BatchOp{
				{Kind: api.BatchMerge, Entity: scenario.Entity(wideEmployee, "01", fixtures.DayProperty(1), api.Int32(1000)), IfMatch: got1.ETag},
				{Kind: api.BatchMerge, Entity: scenario.Entity(wideEmployee, "02", fixtures.DayProperty(365), api.Int32(1000)), IfMatch: got2.ETag},
			})
			requireStaleRefused(f, err)
			Expect(table).To(HoldExactly(ctx, b, first, second.With(fixtures.DayProperty(365), api.Int32(-1))))
		})

	})

	Context("with the year split into two entities", func() {
		f.It("pattern.wide-entities.read", "returns every day's count from the two parts", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			first, second := yearParts(200)
			scenario.Load(ctx, b, table, []api.Entity{first, second}) // reading needs no transaction
			year := map[string]api.Value{}
			for _, rk := range []string{"01", "02"} {
				for n, v := range scenario.MustGet(ctx, b, table, wideEmployee, rk).Properties {
					year[n] = v
				}
			}
			Expect(api.NewEntity(wideEmployee, "year", year)).To(MatchEntity(yearEntity("year", 1, fixtures.DaysPerYear)))
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", wideEmployee)})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(first, second), "one partition query returns both parts")
		})
	})
})
