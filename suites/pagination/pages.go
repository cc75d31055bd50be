package pagination

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// shape is a data set for the paging specs: partitions and their sizes, a filter and $top.
type shape struct {
	names  []string
	sizes  []int
	filter string
	top    int
	// match selects the entities the filter matches (nil: all).
	match func(api.Entity) bool
}

func (s shape) entities() []api.Entity { return partitions(s.names, s.sizes) }

func (s shape) want(es []api.Entity) []api.Key {
	var out []api.Key
	for _, e := range es {
		if s.match == nil || s.match(e) {
			out = append(out, e.Key())
		}
	}
	return out
}

func (s shape) String() string {
	return fmt.Sprintf("partitions %v of sizes %v, filter %q, $top %d", s.names, s.sizes, s.filter, s.top)
}

var (
	oneBigPartition = shape{names: []string{"p"}, sizes: []int{spec.MaxPageSize + 5}}
	justOverOnePage = shape{names: []string{"p"}, sizes: []int{spec.MaxPageSize + 1}}
	threeBig        = shape{names: []string{"a", "b", "c"}, sizes: []int{400, 400, 400}}
	modZero         = func(e api.Entity) bool { return e.Properties["Mod"].Int() == 0 }
)

var _ = framework.Describe("Retrieve large numbers of entities from a query", func(f *framework.F) {
	f.DescribeTable("pagination.page-cap", "holds at most 1000 entities a page",
		func(ctx context.Context, s shape) {
			es := s.entities()
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, s.filter, es, s.match)
			if s.top == spec.MaxTop {
				// $top=1000 accepted at all is query.top.max's subject.
				f.Requires("query.top.max", "a page of $top=1000", func() {
					_, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: s.filter, Top: api.TopOf(s.top)})
					Expect(err).To(SucceedOnBackend(), "$top=%d", s.top)
				})
			}
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: s.filter, Top: api.OptionalTop(s.top)}, len(es))
			for i, n := range r.PageSizes() {
				Expect(n).To(BeNumerically("<=", spec.MaxPageSize), "page %d of %v (%s)", i+1, r.PageSizes(), s)
			}
			scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
		},
		Entry("for 1005 entities of one partition", oneBigPartition),
		Entry("for 1200 entities of three partitions", threeBig),
		Entry("with $top=1000 over 1005 entities", shape{names: []string{"p"}, sizes: []int{spec.MaxPageSize + 5}, top: spec.MaxTop}),
	)

	f.It("pagination.page-full", "returns 1000 entities in the first page of a large single-partition query", func(ctx context.Context) {
		es := oneBigPartition.entities()
		table := load(ctx, f, es)
		page, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p'"})
		Expect(err).To(SucceedOnBackend())
		// A page over the cap is pagination.page-cap's subject, a missing continuation
		// pagination.continuation's; a full page is this rule's.
		f.Requires("pagination.page-cap", "a first page of at most 1000 entities", func() {
			Expect(len(page.Entities)).To(BeNumerically("<=", spec.MaxPageSize), "first page of %d matching entities", len(es))
		})
		Expect(page.Entities).To(HaveLen(spec.MaxPageSize), "first page of %d matching entities", len(es))
		f.Requires("pagination.continuation", "a continuation after the first page", func() {
			Expect(page.Continuation.IsZero()).To(BeFalse(), "first page of %d matching entities", len(es))
		})
	})

	f.DescribeTable("pagination.continuation", "carries a continuation while matches remain",
		func(ctx context.Context, s shape) {
			es := s.entities()
			want := s.want(es)
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, s.filter, es, s.match)
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: s.filter, Top: api.OptionalTop(s.top)}, len(es))
			scenario.ExpectPagedKeys(f, r, want,
				"the last page (page %d of %v) carried no continuation after %d of the %d matching entities (%s)",
				len(r.Pages), r.PageSizes(), len(r.Entities()), len(want), s)
		},
		Entry("for 1005 entities without $top", oneBigPartition),
		Entry("for 1001 entities without $top", justOverOnePage),
		Entry("for 25 entities with $top=10", shape{names: []string{"p"}, sizes: []int{25}, top: 10}),
		Entry("for 3 entities with $top=1", shape{names: []string{"p"}, sizes: []int{3}, top: 1}),
		Entry("for a filter over three partitions with $top=2", shape{names: []string{"a", "b", "c"}, sizes: []int{4, 4, 4}, top: 2, filter: "Mod eq 0", match: modZero}),
	)

	f.DescribeTable("pagination.exactly-once", "returns every match exactly once across pages",
		func(ctx context.Context, s shape) {
			es := s.entities()
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, s.filter, es, s.match)
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: s.filter, Top: api.OptionalTop(s.top)}, len(es))
			requireFilterOnEveryPage(f, r, s)
			Expect(r.Entities()).To(ConsistOfKeys(s.want(es)...), "%s; pages of %v", s, r.PageSizes())
		},
		Entry("with one entity a page", shape{names: []string{"p"}, sizes: []int{12}, top: 1}),
		Entry("with pages that cross partition boundaries", shape{names: []string{"a", "b", "c"}, sizes: []int{10, 10, 10}, top: 7}),
		Entry("with pages that end on partition boundaries", shape{names: []string{"a", "b", "c"}, sizes: []int{5, 10, 5}, top: 5}),
		Entry("with single-entity partitions", shape{names: []string{"a", "b", "c", "d", "e"}, sizes: []int{1, 1, 1, 1, 1}, top: 2}),
		Entry("with a filter over four partitions", shape{names: []string{"a", "b", "c", "d"}, sizes: []int{7, 8, 9, 10}, top: 3, filter: "Mod eq 0", match: modZero}),
		Entry("with the 1001st entity on the second page", justOverOnePage),
		Entry("with a partition scan among neighbouring partitions", shape{names: []string{"o", "p", "q"}, sizes: []int{6, 13, 6}, top: 4, filter: "PartitionKey eq 'p'",
			match: func(e api.Entity) bool { return e.PartitionKey == "p" }}),
	)

	f.It("pagination.short-pages", "may return pages shorter than $top, or empty, with a continuation", func(ctx context.Context) {
		s := shape{names: []string{"a", "b", "c"}, sizes: []int{10, 10, 10}, top: 7}
		es := s.entities()
		table := load(ctx, f, es)
		// A choice is recorded only from pages that came: $top must make them.
		scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(s.top)}, len(es))
		r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: api.OptionalTop(s.top)}, len(es))
		scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
		short, empty := 0, 0
		for _, p := range r.Pages[:len(r.Pages)-1] {
			switch {
			case len(p.Entities) == 0:
				empty++
			case len(p.Entities) < s.top:
				short++
			}
		}
		f.Choice("pages before the last", fmt.Sprintf("%d short, %d empty (pages of %v)", short, empty, r.PageSizes()))
	})

	f.It("pagination.partition-boundary", "may end a page at a partition boundary before $top", func(ctx context.Context) {
		s := shape{names: []string{"a", "b", "c"}, sizes: []int{5, 5, 5}, top: 7}
		es := s.entities()
		table := load(ctx, f, es)
		// A choice is recorded only from pages that came: $top must make them.
		scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(s.top)}, len(es))
		r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: api.OptionalTop(s.top)}, len(es))
		scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
		atBoundary := 0
		for i, p := range r.Pages[:len(r.Pages)-1] {
			next := r.Pages[i+1].Entities
			if n := len(p.Entities); n > 0 && n < s.top && len(next) > 0 && p.Entities[n-1].PartitionKey != next[0].PartitionKey {
				atBoundary++
			}
		}
		if atBoundary > 0 {
			f.Choice("page ends at a partition boundary", fmt.Sprintf("yes, %d times (pages of %v)", atBoundary, r.PageSizes()))
		} else {
			f.Choice("page ends at a partition boundary", fmt.Sprintf("no (pages of %v)", r.PageSizes()))
		}
	})

	f.It("pagination.last-page", "returns one empty page without a continuation for an empty table", func(ctx context.Context) {
		table := f.NewTable(ctx)
		page, err := f.Backend().QueryEntities(ctx, table, api.Query{})
		Expect(err).To(SucceedOnBackend())
		Expect(page.Entities).To(BeEmpty())
		Expect(page.Continuation.IsZero()).To(BeTrue(), "an empty table returned the continuation %+v", page.Continuation)
	})

	f.DescribeTable("pagination.last-page", "ends the query with a page without a continuation",
		func(ctx context.Context, s shape) {
			es := s.entities()
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, s.filter, es, s.match)
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: s.filter, Top: api.OptionalTop(s.top)}, len(es))
			last := r.Pages[len(r.Pages)-1].Continuation
			Expect(last.IsZero()).To(BeTrue(), "the last of %d pages carries no continuation (it carries %+v)", len(r.Pages), last)
			scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
		},
		Entry("for pages of three", shape{names: []string{"p"}, sizes: []int{10}, top: 3}),
		Entry("for a filter that matches nothing", shape{names: []string{"a", "b"}, sizes: []int{10, 10}, filter: "N gt 100",
			match: func(api.Entity) bool { return false }}),
	)

	f.DescribeTable("pagination.no-extra-page", "sends no continuation with the last matches of a partition",
		func(ctx context.Context, s shape, pages int) {
			es := s.entities()
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, s.filter, es, s.match)
			if s.top > 0 && s.top < len(es) {
				scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(s.top)}, len(es))
			}
			r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: s.filter, Top: api.OptionalTop(s.top)}, len(es))
			scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
			Expect(r.Pages).To(HaveLen(pages), "pages of %v (%s)", r.PageSizes(), s)
		},
		Entry("when the last page is partly filled", shape{names: []string{"p"}, sizes: []int{10}, top: 4}, 3),
		Entry("when everything fits one page without $top", shape{names: []string{"p"}, sizes: []int{5}}, 1),
		Entry("when $top exceeds the matches", shape{names: []string{"p"}, sizes: []int{10}, top: 20}, 1),
		Entry("when a partition scan matches a few entities", shape{names: []string{"p"}, sizes: []int{10}, filter: "PartitionKey eq 'p' and Mod eq 0", match: modZero}, 1),
	)

	f.It("pagination.top-boundary", "may need an empty last page when the matches end on a $top boundary", func(ctx context.Context) {
		s := shape{names: []string{"p"}, sizes: []int{10}, top: 5}
		es := s.entities()
		table := load(ctx, f, es)
		// A choice is recorded only from pages that came: $top must make them.
		scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(s.top)}, len(es))
		r := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: api.OptionalTop(s.top)}, len(es))
		scenario.ExpectPagedKeys(f, r, s.want(es), "%s; pages of %v", s, r.PageSizes())
		last := r.Pages[len(r.Pages)-1]
		if len(last.Entities) == 0 && len(r.Pages) > 1 {
			f.Choice("matches ending on a $top boundary", fmt.Sprintf("continuation, then an empty page (pages of %v)", r.PageSizes()))
		} else {
			f.Choice("matches ending on a $top boundary", fmt.Sprintf("no continuation (pages of %v)", r.PageSizes()))
		}
	})
})
