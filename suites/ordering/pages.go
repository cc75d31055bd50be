package ordering

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// letters returns 26 mixed-case RowKeys in ordinal order: A..M then a..m.
func letters() []string {
	var out []string
	for c := 'A'; c <= 'M'; c++ {
		out = append(out, string(c))
	}
	for c := 'a'; c <= 'm'; c++ {
		out = append(out, string(c))
	}
	return out
}

// invertedTicks is the "sort data" / log-tail RowKey: the .NET ticks of t subtracted from
// the largest Int64 and zero-padded to 19 digits, so later times sort first.
func invertedTicks(t time.Time) string {
	const ticksAtUnixEpoch = 621355968000000000
	ticks := t.UTC().UnixNano()/100 + ticksAtUnixEpoch
	return fmt.Sprintf("%019d", int64(math.MaxInt64)-ticks)
}

// requireOnePageOrder is the precondition of the across-pages specs: the table's mixed-case
// keys, queried without $top, come back in one page in key order, B before a
// (ordering.ascii's subject); this rule is about pages continuing that order.
func requireOnePageOrder(ctx context.Context, f *framework.F, table string, want []api.Key) {
	GinkgoHelper()
	if !f.OrderPromised("ordering.ascii") {
		return
	}
	f.Requires("ordering.ascii", fmt.Sprintf("the %d mixed-case keys in key order in one page", len(want)), func() {
		page, err := f.Backend().QueryEntities(ctx, table, api.Query{})
		Expect(err).To(SucceedOnBackend(), "query the %d keys without $top", len(want))
		if page.Continuation.IsZero() {
			f.Check(spec.CheckOrder, func() { Expect(page.Entities).To(HaveKeys(want...), "the keys queried without $top") })
		}
	})
}

var _ = framework.Describe("Sort data in Table storage across pages", func(f *framework.F) {
	f.DescribeTable("ordering.across-pages", "continues the key order on every page",
		func(ctx context.Context, top int) {
			scenario.RequireKeyOrder(ctx, f)
			want := rowKeys("p", letters()...)
			table := loadKeys(ctx, f, shuffled(want, 41))
			requireOnePageOrder(ctx, f, table, want)
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: api.OptionalTop(top)}, len(want))
			scenario.ExpectPagedKeys(f, r, want, "$top %d; pages of %v", top, r.PageSizes())
			expectKeys(f, r.Entities(), want, "$top %d; pages of %v", top, r.PageSizes())
		},
		Entry("with one entity a page", 1),
		Entry("with four entities a page", 4),
		Entry("with pages ending between upper and lower case", 13),
	)

	f.It("ordering.across-pages", "keeps each page itself in key order", func(ctx context.Context) {
		scenario.RequireKeyOrder(ctx, f)
		want := rowKeys("p", letters()...)
		table := loadKeys(ctx, f, shuffled(want, 43))
		requireOnePageOrder(ctx, f, table, want)
		r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: api.TopOf(5)}, len(want))
		scenario.ExpectPagedKeys(f, r, want, "pages of %v", r.PageSizes())
		f.Check(spec.CheckOrder, func() {
			for i, p := range r.Pages {
				Expect(p.Entities).To(BeInKeyOrder(), "page %d of %v", i+1, r.PageSizes())
			}
		})
	})

	f.DescribeTable("ordering.across-partitions", "groups partitions in key order and restarts the RowKey order in each",
		func(ctx context.Context, top int) {
			var want []api.Key
			for _, pk := range []string{"A", "B", "a"} {
				want = append(want, rowKeys(pk, "0", "M", "a", "z")...)
			}
			expectOrder(ctx, f, api.Query{Top: api.OptionalTop(top)}, want, 47)
		},
		Entry("in one page", 0),
		Entry("with pages of three", 3),
		Entry("with pages of five, crossing partitions inside a page", 5),
	)

	f.It("ordering.inverted-ticks", "returns the newest entity first with inverted-ticks RowKeys", func(ctx context.Context) {
		base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		offsets := []time.Duration{0, time.Second, 100 * time.Nanosecond, time.Hour, 24 * time.Hour, 200 * time.Nanosecond}
		table := f.NewTable(ctx)
		var keys []api.Key
		for _, d := range offsets {
			t := base.Add(d)
			e := api.NewEntity("log", invertedTicks(t), map[string]api.Value{"At": api.DateTime(t)})
			keys = append(keys, e.Key())
			f.Requires("modify.insert.stores", "insert the spec's entities", func() {
				Expect(InsertAll(ctx, f.Backend(), table, e)).To(SucceedOnBackend())
			})
		}
		got := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: "PartitionKey eq 'log'"}, len(offsets)).Entities()
		Expect(got).To(ConsistOfKeys(keys...), "the log partition")
		// Judged by the keys of the times written, not by the At values read back (whose
		// round trip is the types rules' subject).
		newestFirst := slices.Clone(offsets)
		slices.SortFunc(newestFirst, func(a, b time.Duration) int { return cmp.Compare(b, a) })
		var want []api.Key
		for _, d := range newestFirst {
			want = append(want, scenario.Key("log", invertedTicks(base.Add(d))))
		}
		f.Check(spec.CheckOrder, func() {
			Expect(got).To(HaveKeys(want...), "inverted ticks must return the newest first")
		})
	})

	f.It("ordering.inverted-ticks", "returns the n most recent entities as the first n results", func(ctx context.Context) {
		base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		table := f.NewTable(ctx)
		var es []api.Entity
		for i := range 20 {
			t := base.Add(time.Duration(i) * time.Minute)
			es = append(es, api.NewEntity("log", invertedTicks(t), map[string]api.Value{"Minute": api.Int32(int32(i))}))
		}
		scenario.Load(ctx, f.Backend(), table, es)
		r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: "PartitionKey eq 'log'", Top: api.TopOf(3)}, len(es))
		got := r.Entities()
		scenario.ExpectPagedKeys(f, r, Keys(es), "the log partition (pages of %v)", r.PageSizes())
		f.Check(spec.CheckOrder, func() {
			var minutes []int64
			for _, e := range got[:3] {
				minutes = append(minutes, e.Properties["Minute"].Int())
			}
			Expect(minutes).To(Equal([]int64{19, 18, 17}), "the first three results of the log partition (pages of %v)", r.PageSizes())
		})
	})
})
