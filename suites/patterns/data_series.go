package patterns

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The data series pattern stores an employee's 24 hourly message counts as 24 properties
// of one entity instead of 24 entities: one point query reads the series, a merge updates
// one hour, and concurrent updaters use ETags.

// The race of pattern.data-series.concurrent: seriesRaceRounds rounds in which
// seriesRacers clients (an even number: half increment hour 9, half hour 10) read the series
// and then all send their increment at once. A backend that checks If-Match apart from the
// write it guards loses an increment in a round only when two clients' writes overlap; with
// this many rounds the spec catches it in at least 99 of 100 runs
// (TestRaceRulesCatchUnlockedReadModifyWrite in suites/all measures it).
const (
	seriesRaceRounds = 40
	seriesRacers     = 4
)

// incrementHour adds one to an hour of a series entity with an ETag-conditional merge,
// retrying on 412. beforeWrite, when set, runs after the first read.
func incrementHour(ctx context.Context, b api.Backend, table, employee string, hour int, beforeWrite func()) error {
	name := fixtures.HourProperty(hour)
	for attempt := range maxAttempts {
		e, err := b.GetEntity(ctx, table, employee, fixtures.StatsDay, nil)
		if err != nil {
			return fmt.Errorf("read the series: %w", err)
		}
		if attempt == 0 && beforeWrite != nil {
			beforeWrite()
		}
		next := scenario.Entity(employee, fixtures.StatsDay, name, api.Int32(int32(e.Properties[name].Int())+1))
		_, err = b.UpdateEntity(ctx, table, next, api.Merge, e.ETag)
		if err == nil || !scenario.IsStatus(err, 412) {
			return err
		}
	}
	return fmt.Errorf("hour %d: still conflicting after %d attempts", hour, maxAttempts)
}

var _ = framework.Describe("Data series pattern", func(f *framework.F) {
	Context("with one entity per employee holding 24 hourly counts", func() {
		f.It("pattern.data-series.one-entity", "returns the whole series to one point query, equal to the 24 per-hour entities", func(ctx context.Context) {
			b, perHour, series := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
			scenario.RequireKeyIdentity(ctx, f, b, series) // one series entity of one day in each employee's partition
			scenario.Load(ctx, b, perHour, fixtures.MessageStatsPerHour(0))
			scenario.Load(ctx, b, series, fixtures.MessageStatsSeries(0))
			for _, id := range fixtures.StatsEmployees(0) {
				got, err := b.GetEntity(ctx, series, id, fixtures.StatsDay, nil)
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(MatchEntity(fixtures.SeriesEntity(id, fixtures.HourlyMessageCounts(id))))
				hours := mustQueryAll(ctx, b, perHour, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", id)})
				Expect(hours).To(HaveLen(fixtures.HoursPerDay))
				for _, e := range hours {
					h := int(e.Properties[fixtures.PropHour].Int())
					Expect(e).To(HaveEntityKey(scenario.Key(id, fixtures.HourRowKey(h))), "hour %d of employee %s", h, id)
					Expect(got).To(HaveProperty(fixtures.HourProperty(h), e.Properties[fixtures.PropMessageCount]), "hour %d of employee %s", h, id)
				}
			}
		})

		f.It("pattern.data-series.merge-hour", "changes one hour with a merge and keeps the other 23", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.MessageStatsSeries(0))
			id := fixtures.StatsEmployees(0)[0]
			_, err := scenario.UpdateAny(ctx, b, table, scenario.Entity(id, fixtures.StatsDay, fixtures.HourProperty(13), api.Int32(999)), api.Merge)
			Expect(err).To(SucceedOnBackend())
			counts := fixtures.HourlyMessageCounts(id)
			counts[13] = 999
			Expect(table).To(HoldEntity(ctx, b, fixtures.SeriesEntity(id, counts)))
		})

		f.It("pattern.data-series.replace-drops", "removes the other 23 hours when the entity is replaced with one", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.MessageStatsSeries(0))
			id := fixtures.StatsEmployees(0)[0]
			only := scenario.Entity(id, fixtures.StatsDay, fixtures.HourProperty(13), api.Int32(999))
			_, err := scenario.UpdateAny(ctx, b, table, only, api.Replace)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, only))
		})

		f.It("pattern.data-series.concurrent", fmt.Sprintf("loses no increment of %d rounds of %d clients merging, conditioned on the ETag, at once", seriesRaceRounds, seriesRacers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			scenario.Load(ctx, b, table, fixtures.MessageStatsSeries(0))
			id := fixtures.StatsEmployees(0)[0]
			var errs []error
			for range seriesRaceRounds {
				// Every client reads the series; once all have read it, all send their
				// increment at once (the first attempt; a 412 is retried as it comes).
				together := newBarrier(seriesRacers)
				errs = runConcurrently(seriesRacers, func(c int) error {
					return incrementHour(ctx, b, table, id, 9+c%2, func() { together.wait(ctx) })
				})
				if describeErrors(errs) != "" {
					break
				}
			}
			f.Choice("race attempts", fmt.Sprintf("%d rounds of %d concurrent clients (%d increments)", seriesRaceRounds, seriesRacers, seriesRaceRounds*seriesRacers))
			Expect(describeErrors(errs)).To(BeEmpty())
			counts := fixtures.HourlyMessageCounts(id)
			counts[9] += seriesRaceRounds * seriesRacers / 2
			counts[10] += seriesRaceRounds * seriesRacers / 2
			Expect(table).To(HoldEntity(ctx, b, fixtures.SeriesEntity(id, counts)))
		})
	})
})
