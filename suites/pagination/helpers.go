package pagination

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// partition returns n entities of partition pk with RowKeys r00000.. in key order, each
// with N (its index) and Mod (N mod 3).
func partition(pk string, n int) []api.Entity {
	es := make([]api.Entity, n)
	for i := range es {
		es[i] = api.NewEntity(pk, fmt.Sprintf("r%05d", i), map[string]api.Value{
			"N": api.Int32(int32(i)), "Mod": api.Int32(int32(i % 3)), "Name": api.String(fmt.Sprintf("name %d", i)),
		})
	}
	return es
}

// partitions returns the entities of several partitions, sizes[i] entities in partition
// names[i], in key order when names are.
func partitions(names []string, sizes []int) []api.Entity {
	var out []api.Entity
	for i, pk := range names {
		out = append(out, partition(pk, sizes[i])...)
	}
	return out
}

// load creates a table and loads es (scenario.Load: single inserts, or transactions
// retried as single inserts when refused; a refused insert blocks the spec).
func load(ctx context.Context, f *framework.F, es []api.Entity) string {
	GinkgoHelper()
	table := f.NewTable(ctx)
	scenario.Load(ctx, f.Backend(), table, es)
	return table
}

// position is a query stopped part-way: what it returned so far and the continuation to
// resume it with.
type position struct {
	seen  []api.Entity
	token api.Continuation
	pages int
}

// advance runs q page by page until at least atLeast entities came back, and returns the
// position there. The query must not end before.
func advance(ctx context.Context, f *framework.F, table string, q api.Query, atLeast, n int) position {
	GinkgoHelper()
	var p position
	for len(p.seen) < atLeast {
		Expect(p.pages).To(BeNumerically("<", scenario.MaxPagesFor(n)), "the query returned %d entities in %d pages", len(p.seen), p.pages)
		page, err := f.Backend().QueryEntities(ctx, table, q)
		Expect(err).To(matchers.SucceedOnBackend(), "page %d", p.pages+1)
		p.pages++
		p.seen = append(p.seen, page.Entities...)
		// Paging at all is query.top.limit's subject: a backend that ignores $top (or ends
		// the query early) blocks the spec instead of failing the rule about resuming.
		f.Requires("query.top.limit", fmt.Sprintf("page through the query with $top=%v", q.Top), func() {
			if top, ok := q.Top.Value(); ok {
				Expect(len(page.Entities)).To(BeNumerically("<=", top), "page %d of a query with $top=%d", p.pages, top)
			}
			if len(p.seen) < n {
				Expect(page.Continuation.IsZero()).To(BeFalse(),
					"the query ended after %d of %d entities (pages of $top=%v); it must carry a continuation while entities remain", len(p.seen), n, q.Top)
			}
		})
		Expect(page.Continuation.IsZero()).To(BeFalse(),
			"the query ended with all %d entities after %d pages, before the spec's stop", n, p.pages)
		q.Continuation = page.Continuation
	}
	p.token = q.Continuation
	return p
}

// without returns the keys of es minus those in drop.
func without(es []api.Entity, drop []api.Entity) []api.Key {
	gone := map[api.Key]bool{}
	for _, e := range drop {
		gone[e.Key()] = true
	}
	var out []api.Key
	for _, e := range es {
		if !gone[e.Key()] {
			out = append(out, e.Key())
		}
	}
	return out
}

// filterRule is the rule that covers a pagination spec's filter on its own: a partition
// scan, or the comparison of Int32 properties.
func filterRule(filter string) string {
	if strings.HasPrefix(filter, "PartitionKey eq ") && !strings.Contains(filter, " and ") {
		return "query.partition-scan"
	}
	return "query.compare.int32"
}

// requireFilter is the precondition of a pagination spec whose query filters (on at most
// one page of data): the filter alone, without $top or $select, returns exactly what it
// matches. A backend whose filter is wrong blocks the spec by the filter's rule instead of
// failing the pagination rule.
func requireFilter(ctx context.Context, f *framework.F, table, filter string, es []api.Entity, match func(api.Entity) bool) {
	GinkgoHelper()
	if filter == "" || len(es) > spec.MaxPageSize {
		return
	}
	var want []api.Key
	for _, e := range es {
		if match == nil || match(e) {
			want = append(want, e.Key())
		}
	}
	f.Requires(filterRule(filter), fmt.Sprintf("query with the filter %q alone", filter), func() {
		page, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: filter})
		Expect(err).To(matchers.SucceedOnBackend(), "the filter %q alone", filter)
		if page.Continuation.IsZero() {
			Expect(page.Entities).To(matchers.ConsistOfKeys(want...), "the filter %q alone", filter)
		}
	})
}

// requireFilterOnEveryPage is the precondition of a spec that follows the continuations of
// a filtered query: every page after the first holds only matches of s's filter, the filter
// being re-sent with each continuation (pagination.options-resent's subject).
func requireFilterOnEveryPage(f *framework.F, r matchers.Result, s shape) {
	GinkgoHelper()
	if s.filter == "" || s.match == nil {
		return
	}
	f.Requires("pagination.options-resent", fmt.Sprintf("every continued page holds only matches of the filter %q", s.filter), func() {
		for i, p := range r.Pages[1:] {
			for _, e := range p.Entities {
				Expect(s.match(e)).To(BeTrue(), "page %d of %v holds (%q, %q), which the filter %q does not match", i+2, r.PageSizes(), e.PartitionKey, e.RowKey, s.filter)
			}
		}
	})
}
