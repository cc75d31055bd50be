package patterns

import (
	"context"

	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The log data anti-pattern: log entries partitioned by date and hour make a hot partition,
// partitioned by source they need a scan of every partition to read a time range. Both
// return the right messages, which is what these specs check; the costs are measured by
// the benchmarks (the guide's advice is blob storage).

// windowErrors returns the messages logged in [LogWindowStart, LogWindowEnd) in the given
// layout, and the Error and Critical ones among them.
func windowErrors(layout func(fixtures.LogEntry) api.Entity) (all, window, want []api.Entity) {
	for _, l := range fixtures.LogRecords(0) {
		all = append(all, layout(l))
		if !l.LoggedAt.Before(fixtures.LogWindowStart) && l.LoggedAt.Before(fixtures.LogWindowEnd) {
			window = append(window, layout(l))
			if l.Level == fixtures.LevelError || l.Level == fixtures.LevelCritical {
				want = append(want, layout(l))
			}
		}
	}
	return all, window, want
}

// requireLevelFilter checks the step of a log data spec that narrows its range query with
// the parenthesized levelFilter: its subject is the range, whose own results (got without
// the level filter) the spec has checked already; the parentheses are
// query.logic.parentheses'.
func requireLevelFilter(f *framework.F, got []api.Entity, want []api.Entity) {
	f.Requires("query.logic.parentheses", "narrow the range to Error and Critical messages with a parenthesized or", func() {
		Expect(got).To(ConsistOfEntities(want...))
	})
}

// levelFilter selects Error and Critical messages.
var levelFilter = scenario.Cmp(fixtures.PropLevel, "eq", fixtures.LevelError) + " or " + scenario.Cmp(fixtures.PropLevel, "eq", fixtures.LevelCritical)

var _ = framework.Describe("Log data anti-pattern", func(f *framework.F) {
	f.It("pattern.log-data.hour-partition", "finds the errors of 15:04 to 15:06 with a range query in the hour's partition", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		all, window, want := windowErrors(fixtures.LogEntry.HourEntity)
		Expect(len(want)).To(BeNumerically(">=", 3))
		scenario.Load(ctx, b, table, fixtures.Shuffle(all, 17))
		inHour := []string{
			scenario.Cmp("PartitionKey", "eq", fixtures.LogWindowStart.Format("2006010215")),
			scenario.Cmp("RowKey", "ge", fixtures.SortableTime(fixtures.LogWindowStart)),
			scenario.Cmp("RowKey", "lt", fixtures.SortableTime(fixtures.LogWindowEnd)),
		}
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(inHour...)})
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(ConsistOfEntities(window...), "the range query without the level filter")
		got, err = scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(append(inHour, levelFilter)...)})
		Expect(err).To(SucceedOnBackend())
		requireLevelFilter(f, got, want)
	})

	f.It("pattern.log-data.scan", "finds the same errors by scanning every source partition across continuations", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		all, _, want := windowErrors(fixtures.LogEntry.SourceEntity)
		scenario.Load(ctx, b, table, fixtures.Shuffle(all, 18))
		inWindow := []string{
			scenario.Cmp("RowKey", "ge", fixtures.SortableTime(fixtures.LogWindowStart)),
			scenario.Cmp("RowKey", "lt", fixtures.SortableTime(fixtures.LogWindowEnd)),
		}
		// The level filter's parentheses are query.logic.parentheses' subject: judged first
		// on one unpaged scan.
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(append(inWindow, levelFilter)...)})
		Expect(err).To(SucceedOnBackend())
		requireLevelFilter(f, got, want)
		r, err := QueryAll(ctx, b, table, api.Query{Top: api.TopOf(2), Filter: scenario.And(append(inWindow, levelFilter)...)}, scenario.MaxPages)
		Expect(err).To(SucceedOnBackend())
		// The filter on every page is pagination.options-resent's subject, each match once
		// across the pages pagination.exactly-once's; the pattern is the scan finding them.
		matches := map[api.Key]bool{}
		for _, e := range want {
			matches[e.Key()] = true
		}
		f.Requires("pagination.options-resent", "every continued page of the scan holds only matches of its filter", func() {
			for i, p := range r.Pages[1:] {
				for _, e := range p.Entities {
					Expect(matches).To(HaveKey(e.Key()), "page %d of %v holds an entity the filter does not match", i+2, r.PageSizes())
				}
			}
		})
		scenario.ExpectPagedKeys(f, r, Keys(want), "the scan's pages of %v", r.PageSizes())
		Expect(r.Entities()).To(ConsistOfEntities(want...))
	})
})
