package pagination

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The resume specs page through partition p (r00000..r00019) with $top=5, stop after at
// least five entities, write, and then resume with the saved continuation. Writes "before"
// the position use keys below the last entity returned; writes "ahead" use keys at or after
// r00010, which the stop (at most r00009 with pages of five) has not reached.
const (
	resumeRows = 20
	resumeTop  = 5
	// partitionOfP is the filter of the resume specs' partition scans.
	partitionOfP = "PartitionKey eq 'p'"
)

// write is a change made while a query is stopped; it returns the keys the resumed query
// must add to, and drop from, the entities not yet returned.
type write func(ctx context.Context, f *framework.F, table string) (add, drop []api.Key)

func insertRow(pk, rk string) write {
	return func(ctx context.Context, f *framework.F, table string) ([]api.Key, []api.Key) {
		f.Requires("modify.insert.stores", "insert an entity between pages", func() {
			Expect(InsertAll(ctx, f.Backend(), table, api.NewEntity(pk, rk, map[string]api.Value{"N": api.Int32(-1)}))).To(SucceedOnBackend())
		})
		return []api.Key{scenario.Key(pk, rk)}, nil
	}
}

// insertOutside inserts an entity that the query's filter does not select.
func insertOutside(pk, rk string) write {
	return func(ctx context.Context, f *framework.F, table string) ([]api.Key, []api.Key) {
		insertRow(pk, rk)(ctx, f, table)
		return nil, nil
	}
}

func deleteRow(rk string) write {
	return func(ctx context.Context, f *framework.F, table string) ([]api.Key, []api.Key) {
		Expect(scenario.DeleteAny(ctx, f.Backend(), table, "p", rk)).To(SucceedOnBackend())
		return nil, []api.Key{scenario.Key("p", rk)}
	}
}

var _ = framework.Describe("Retrieve large numbers of entities with saved continuations", func(f *framework.F) {
	var es []api.Entity
	BeforeEach(func() { es = partition("p", resumeRows) })

	// stopped loads the rows, queries them with q until at least resumeTop came back and
	// returns the table and the position.
	stopped := func(ctx context.Context, q api.Query) (string, position) {
		GinkgoHelper()
		// The position is the last key returned: key order is ordering.key-order's subject.
		scenario.RequireKeyOrder(ctx, f)
		table := load(ctx, f, es)
		// Continuations followed at once, each match once, are pagination.exactly-once's
		// subject; the resume rules are about one saved and used later.
		whole := scenario.MustQueryAll(ctx, f.Backend(), table, q, len(es))
		scenario.ExpectPagedKeys(f, whole, Keys(es), "the query (filter %q, $top %v) run to its end before stopping it; pages of %v", q.Filter, q.Top, whole.PageSizes())
		return table, advance(ctx, f, table, q, resumeTop, len(es))
	}
	resumeFrom := func(ctx context.Context, table string, q api.Query, p position) Result {
		GinkgoHelper()
		q.Continuation = p.token
		r, err := QueryAll(ctx, f.Backend(), table, q, scenario.MaxPagesFor(len(es)+10))
		Expect(err).To(SucceedOnBackend(), "resuming from %+v", p.token)
		if q.Filter == partitionOfP {
			f.Requires("pagination.options-resent", "every resumed page holds only entities of partition p", func() {
				for _, e := range r.Entities() {
					Expect(e.PartitionKey).To(Equal("p"), "resumed %q from %+v; pages of %v", q.Filter, p.token, r.PageSizes())
				}
			})
		}
		return r
	}
	// expectResumed runs w at the stop and checks that resuming returns the remaining rows,
	// plus and minus what w says, each once; entities inserted before the position must not
	// be among them.
	expectResumed := func(ctx context.Context, q api.Query, w write) {
		table, p := stopped(ctx, q)
		add, drop := w(ctx, f, table)
		gone := map[api.Key]bool{}
		for _, k := range drop {
			gone[k] = true
		}
		var want []api.Key
		for _, k := range without(es, p.seen) {
			if !gone[k] {
				want = append(want, k)
			}
		}
		last := p.seen[len(p.seen)-1].Key()
		for _, k := range add {
			if last.Less(k) && !gone[k] {
				want = append(want, k)
			}
		}
		// The query run afresh after the write, each current match once, is
		// pagination.exactly-once's subject; this rule's is the saved continuation.
		current := append(without(es, nil), add...)
		current = slices.DeleteFunc(current, func(k api.Key) bool { return gone[k] })
		fresh := scenario.MustQueryAll(ctx, f.Backend(), table, q, len(current))
		scenario.ExpectPagedKeys(f, fresh, current, "the query run afresh after the write; pages of %v", fresh.PageSizes())
		r := resumeFrom(ctx, table, q, p)
		Expect(r.Entities()).To(ConsistOfKeys(want...),
			"stopped after %s, wrote, then resumed; the resumed pages were %v", KeyList(p.seen), r.PageSizes())
	}

	f.It("pagination.resume", "resumes at the same position each time a saved continuation is used", func(ctx context.Context) {
		q := api.Query{Filter: partitionOfP, Top: api.OptionalTop(resumeTop)}
		table, p := stopped(ctx, q)
		want := without(es, p.seen)
		first := resumeFrom(ctx, table, q, p)
		Expect(first.Entities()).To(ConsistOfKeys(want...), "first use of the continuation after %s", KeyList(p.seen))
		second := resumeFrom(ctx, table, q, p)
		Expect(second.Entities()).To(ConsistOfKeys(want...), "second use of the same continuation")
		Expect(Keys(second.Pages[0].Entities)).To(Equal(Keys(first.Pages[0].Entities)), "the first page after the continuation differed between two uses")
	})

	f.It("pagination.resume", "resumes a saved continuation after other queries ran", func(ctx context.Context) {
		q := api.Query{Top: api.OptionalTop(resumeTop)}
		table, p := stopped(ctx, q)
		other := f.NewTable(ctx)
		f.Requires("modify.insert.stores", "fill another table", func() {
			Expect(InsertAll(ctx, f.Backend(), other, partition("x", 3)...)).To(SucceedOnBackend())
		})
		for _, oq := range []api.Query{{Top: api.TopOf(2)}, {Filter: "N ge 15"}, {Top: api.TopOf(1), Filter: "PartitionKey eq 'p'"}} {
			_, err := QueryAll(ctx, f.Backend(), table, oq, scenario.MaxPagesFor(len(es)))
			Expect(err).To(SucceedOnBackend())
			_, err = QueryAll(ctx, f.Backend(), other, oq, scenario.MaxPagesFor(3))
			Expect(err).To(SucceedOnBackend())
		}
		Expect(resumeFrom(ctx, table, q, p).Entities()).To(ConsistOfKeys(without(es, p.seen)...))
	})

	partitionScan := api.Query{Filter: partitionOfP, Top: api.OptionalTop(resumeTop)}
	tableScan := api.Query{Top: api.OptionalTop(resumeTop)}

	f.DescribeTable("pagination.resume-after-insert", "neither repeats nor skips entities after inserts",
		expectResumed,
		Entry("before the position", partitionScan, insertRow("p", "r00000a")),
		Entry("before the first entity", partitionScan, insertRow("p", "a")),
		Entry("in an earlier partition during a table scan", tableScan, insertRow("a", "x")),
		Entry("in another partition during a partition scan", partitionScan, insertOutside("q", "r00000")),
		Entry("several before the position", partitionScan, func(ctx context.Context, f *framework.F, table string) ([]api.Key, []api.Key) {
			var add []api.Key
			for _, rk := range []string{"r00000a", "r00001a", "r00002a", "r00003a"} {
				inserted, _ := insertRow("p", rk)(ctx, f, table)
				add = append(add, inserted...)
			}
			return add, nil
		}),
	)

	f.DescribeTable("pagination.resume-after-delete", "returns the remaining entities once after deletes",
		expectResumed,
		Entry("of an entity before the position", partitionScan, deleteRow("r00001")),
		Entry("of an entity ahead", partitionScan, deleteRow("r00012")),
		Entry("of the last entity", partitionScan, deleteRow("r00019")),
		Entry("of many entities ahead", partitionScan, func(ctx context.Context, f *framework.F, table string) ([]api.Key, []api.Key) {
			var drop []api.Key
			for _, e := range partition("p", resumeRows)[resumeTop*2:] {
				deleteRow(e.RowKey)(ctx, f, table)
				drop = append(drop, e.Key())
			}
			return nil, drop
		}),
	)

	f.It("pagination.resume-after-delete", "resumes when the entity at the position was deleted", func(ctx context.Context) {
		q := partitionScan
		table, p := stopped(ctx, q)
		rest := without(es, p.seen)
		Expect(rest).NotTo(BeEmpty())
		next := rest[0]
		Expect(scenario.DeleteAny(ctx, f.Backend(), table, next.PartitionKey, next.RowKey)).To(SucceedOnBackend())
		Expect(resumeFrom(ctx, table, q, p).Entities()).To(ConsistOfKeys(rest[1:]...),
			"stopped after %s, deleted the next entity (%q,%q), resumed", KeyList(p.seen), next.PartitionKey, next.RowKey)
	})

	f.DescribeTable("pagination.resume-reads-current", "returns entities written ahead of the position as they are now",
		expectResumed,
		Entry("for an insert ahead in the partition", partitionScan, insertRow("p", "r00010a")),
		Entry("for an insert after the last entity", partitionScan, insertRow("p", "r99999")),
		Entry("for an insert in a later partition during a table scan", tableScan, insertRow("q", "a")),
	)

	f.It("pagination.resume-reads-current", "returns an entity updated ahead of the position with its new value", func(ctx context.Context) {
		q := partitionScan
		table, p := stopped(ctx, q)
		changed := api.NewEntity("p", "r00012", map[string]api.Value{"N": api.Int32(1200), "New": api.String("yes")})
		f.Requires("concurrency.if-match-any", "replace r00012 with If-Match *", func() {
			_, err := scenario.UpdateAny(ctx, f.Backend(), table, changed, api.Replace)
			Expect(err).To(SucceedOnBackend())
		})
		f.Requires("modify.replace.removes-omitted", "a point read shows r00012 as replaced", func() {
			got, err := f.Backend().GetEntity(ctx, table, changed.PartitionKey, changed.RowKey, nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(changed), "r00012 read after its replace")
		})
		r := resumeFrom(ctx, table, q, p)
		Expect(r.Entities()).To(ConsistOfKeys(without(es, p.seen)...))
		for _, e := range r.Entities() {
			if e.Key() == changed.Key() {
				Expect(e).To(MatchEntity(changed), "r00012 was replaced before resuming")
			}
		}
	})
})
