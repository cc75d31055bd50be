package pagination

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Retrieve large numbers of entities with query options", func(f *framework.F) {
	data := func() []api.Entity { return partitions([]string{"a", "b", "c"}, []int{20, 20, 20}) }

	f.DescribeTable("pagination.options-resent", "applies the re-sent options to every page",
		func(ctx context.Context, q api.Query, match func(api.Entity) bool, props []string) {
			es := data()
			table := load(ctx, f, es)
			requireFilter(ctx, f, table, q.Filter, es, match)
			scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(3)}, len(es))
			// Each entity once across the pages of the query without its options is
			// pagination.exactly-once's subject; the options on every page are this rule's.
			plain := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Top: q.Top}, len(es))
			scenario.ExpectPagedKeys(f, plain, Keys(es), "$top=%v without $filter and $select; pages of %v", q.Top, plain.PageSizes())
			if props != nil {
				// $select applied at all is query.select.only's subject; applied again on every
				// page, this rule's.
				f.Requires("query.select.only", fmt.Sprintf("one page of $select=%v", q.Select), func() {
					page, err := f.Backend().QueryEntities(ctx, table, api.Query{Select: q.Select})
					Expect(err).To(SucceedOnBackend(), "$select=%v", q.Select)
					Expect(page.Entities).NotTo(BeEmpty(), "$select=%v", q.Select)
					Expect(page.Entities[0]).To(HavePropertyNames(props...), "$select=%v", q.Select)
				})
			}
			if props != nil && q.Filter != "" {
				// A filter on properties the $select leaves out is query.select.filter-independent's
				// subject: one page of both together must select what the filter says.
				f.Requires("query.select.filter-independent", fmt.Sprintf("one page of $filter=%s with $select=%v", q.Filter, q.Select), func() {
					page, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: q.Filter, Select: q.Select})
					Expect(err).To(SucceedOnBackend(), "$filter=%s with $select=%v", q.Filter, q.Select)
					var want []api.Key
					for _, e := range es {
						if match(e) {
							want = append(want, e.Key())
						}
					}
					Expect(page.Entities).To(ConsistOfKeys(want...), "$filter=%s with $select=%v", q.Filter, q.Select)
				})
			}
			r := scenario.MustQueryAll(ctx, f.Backend(), table, q, len(es))
			var want []api.Key
			for _, e := range es {
				if match(e) {
					want = append(want, e.Key())
				}
			}
			Expect(r.Entities()).To(ConsistOfKeys(want...), "pages of %v", r.PageSizes())
			for i, p := range r.Pages {
				if n, ok := q.Top.Value(); ok {
					Expect(len(p.Entities)).To(BeNumerically("<=", n), "page %d of %v exceeds $top=%d", i+1, r.PageSizes(), n)
				}
				for _, e := range p.Entities {
					if props != nil {
						Expect(e).To(HavePropertyNames(props...), "page %d, $select=%v", i+1, q.Select)
					}
				}
			}
		},
		Entry("for $filter", api.Query{Filter: "Mod eq 0", Top: api.TopOf(4)}, func(e api.Entity) bool { return e.Properties["Mod"].Int() == 0 }, nil),
		Entry("for $select", api.Query{Select: []string{"PartitionKey", "RowKey", "N"}, Top: api.TopOf(7)}, func(api.Entity) bool { return true }, []string{"N"}),
		Entry("for $top", api.Query{Top: api.TopOf(3)}, func(api.Entity) bool { return true }, nil),
		Entry("for all three together", api.Query{Filter: "Mod eq 1 and N ge 5", Select: []string{"PartitionKey", "RowKey", "Mod"}, Top: api.TopOf(4)},
			func(e api.Entity) bool { return e.Properties["Mod"].Int() == 1 && e.Properties["N"].Int() >= 5 }, []string{"Mod"}),
	)
})
