package patterns

import (
	"context"
	"sort"

	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The prepend/append anti-pattern keys network access events by the current hour, so that
// every write of an hour appends to one partition; the guide's alternative spreads the
// writes over department-and-employee partitions. Both give correct results, which is what
// these specs check; the hot partition's cost is measured by the benchmarks.

// hourOfAccess is the hour the specs read: the second hour of the generated events.
const hourOfAccess = "2014073118"

var _ = framework.Describe("Prepend/append anti-pattern", func(f *framework.F) {
	events := fixtures.AccessEventRecords(0)

	f.It("pattern.prepend-append.hot-partition", "returns exactly an hour's events from the hour's partition", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		var all, want []api.Entity
		for _, ev := range events {
			all = append(all, ev.HotEntity())
			if ev.Hour() == hourOfAccess {
				want = append(want, ev.HotEntity())
			}
		}
		Expect(len(want)).To(BeNumerically(">=", 10), "the fixture must fill the hour")
		scenario.Load(ctx, b, table, fixtures.Shuffle(all, 15))
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.Cmp("PartitionKey", "eq", hourOfAccess)})
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(ConsistOfEntities(want...))
	})

	f.It("pattern.prepend-append.spread", "returns one employee's events of an hour, and the same hour's events as the hot layout to a scan", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		var all []api.Entity
		var hourIDs []string
		byEmployee := map[string][]api.Entity{}
		for _, ev := range events {
			e := ev.SpreadEntity()
			all = append(all, e)
			if ev.Hour() == hourOfAccess {
				hourIDs = append(hourIDs, ev.EventID)
				byEmployee[e.PartitionKey] = append(byEmployee[e.PartitionKey], e)
			}
		}
		scenario.Load(ctx, b, table, fixtures.Shuffle(all, 16))

		var busiest string
		for pk, es := range byEmployee {
			if len(es) > len(byEmployee[busiest]) || (len(es) == len(byEmployee[busiest]) && pk < busiest) {
				busiest = pk
			}
		}
		got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", busiest),
			scenario.Cmp("RowKey", "ge", hourOfAccess+"_"), scenario.Cmp("RowKey", "lt", hourOfAccess+"`"))})
		Expect(err).To(SucceedOnBackend())
		Expect(got).To(ConsistOfEntities(byEmployee[busiest]...))

		scanned, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("RowKey", "ge", hourOfAccess+"_"), scenario.Cmp("RowKey", "lt", hourOfAccess+"`"))})
		Expect(err).To(SucceedOnBackend())
		var ids []string
		for _, e := range scanned {
			ids = append(ids, e.RowKey[len(hourOfAccess)+1:])
		}
		sort.Strings(ids)
		Expect(ids).To(Equal(hourIDs), "the scan finds the same events as the hot layout's partition")
	})
})
