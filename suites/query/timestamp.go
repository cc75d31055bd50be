package query

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

var _ = framework.Describe("Query Entities $filter on Timestamp", func(f *framework.F) {
	// bound picks a Timestamp among those a query returned, and the entities that the
	// comparison with it must select.
	type bound struct {
		op   string
		pick func(ts []time.Time) time.Time
		keep func(t, b time.Time) bool
	}
	earliest := func(ts []time.Time) time.Time {
		m := ts[0]
		for _, t := range ts {
			if t.Before(m) {
				m = t
			}
		}
		return m
	}
	latest := func(ts []time.Time) time.Time {
		m := ts[0]
		for _, t := range ts {
			if t.After(m) {
				m = t
			}
		}
		return m
	}
	second := func(ts []time.Time) time.Time { return ts[1] }

	f.DescribeTable("query.filter.timestamp", "compares Timestamp with the values queries return",
		func(ctx context.Context, b bound) {
			table := f.NewTable(ctx)
			es := []api.Entity{api.NewEntity("p", "r1", nil), api.NewEntity("p", "r2", nil), api.NewEntity("p", "r3", nil)}
			for _, e := range es {
				f.Requires("modify.insert.stores", "insert the spec's entities", func() {
					Expect(InsertAll(ctx, f.Backend(), table, e)).To(SucceedOnBackend())
				})
				time.Sleep(2 * time.Millisecond) // distinct Timestamps are likelier, not required
			}
			stored := filterAll(ctx, f, table, "", len(es))
			Expect(stored).To(ConsistOfKeys(Keys(es)...))
			ts := make([]time.Time, len(stored))
			for i, e := range stored {
				Expect(e.Timestamp.IsZero()).To(BeFalse(), "entity (%q,%q) came back without a Timestamp", e.PartitionKey, e.RowKey)
				ts[i] = e.Timestamp
			}
			at := b.pick(ts)
			var want []api.Key
			for _, e := range stored {
				if b.keep(e.Timestamp, at) {
					want = append(want, e.Key())
				}
			}
			filter := "PartitionKey eq 'p' and Timestamp " + b.op + " datetime'" + api.FormatDateTime7(at) + "'"
			Expect(filterAll(ctx, f, table, filter, len(es))).To(ConsistOfKeys(want...),
				"filter %q; the query returned the Timestamps %v", filter, ts)
		},
		Entry("for eq one of them", bound{"eq", second, func(t, b time.Time) bool { return t.Equal(b) }}),
		Entry("for ge the earliest", bound{"ge", earliest, func(t, b time.Time) bool { return !t.Before(b) }}),
		Entry("for lt the earliest", bound{"lt", earliest, func(t, b time.Time) bool { return t.Before(b) }}),
		Entry("for gt one of them", bound{"gt", second, func(t, b time.Time) bool { return t.After(b) }}),
		Entry("for le the latest", bound{"le", latest, func(t, b time.Time) bool { return !t.After(b) }}),
		Entry("for ne one of them", bound{"ne", second, func(t, b time.Time) bool { return !t.Equal(b) }}),
	)
})
