package tables

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
)

var _ = framework.Describe("Query Tables", func(f *framework.F) {
	Context("with a $filter on TableName", func() {
		// filter builds the filter from the spec's prefix; want picks the expected tables
		// (by suffix) among the created ones.
		f.DescribeTable("tables.query.filter", "returns exactly the matching tables",
			func(ctx context.Context, filter func(prefix string) string, want []string) {
				b := f.Backend()
				prefix, created := newTables(ctx, f, "a", "b", "c")
				q := api.TableQuery{Filter: filter(prefix)}
				listed, _ := walkTables(ctx, b, q)
				names := ownTables(listed, created...)
				expected := make([]string, len(want))
				for i, s := range want {
					expected[i] = prefix + s
				}
				Expect(names).To(ConsistOf(expected), "Query Tables $filter=%s", q.Filter)
			},
			Entry("eq selects one table", func(p string) string { return fmt.Sprintf("TableName eq '%sb'", p) }, []string{"b"}),
			Entry("a ge/lt prefix range selects every table with the prefix", prefixFilter, []string{"a", "b", "c"}),
			Entry("a ge/lt range selects a sub-range", func(p string) string {
				return fmt.Sprintf("TableName ge '%sb' and TableName lt '%s{'", p, p)
			}, []string{"b", "c"}),
			Entry("gt/le selects an open-closed range", func(p string) string {
				return fmt.Sprintf("TableName gt '%sa' and TableName le '%sb'", p, p)
			}, []string{"b"}),
			Entry("ne inside the prefix range excludes one table", func(p string) string {
				return fmt.Sprintf("(%s) and TableName ne '%sb'", prefixFilter(p), p)
			}, []string{"a", "c"}),
			Entry("or selects two tables", func(p string) string {
				return fmt.Sprintf("TableName eq '%sa' or TableName eq '%sc'", p, p)
			}, []string{"a", "c"}),
			Entry("eq of a name that does not exist selects none", func(p string) string { return fmt.Sprintf("TableName eq '%sz'", p) }, []string{}),
		)
	})

	Context("with $top", func() {
		f.DescribeTable("tables.query.paging", "pages through every matching table with NextTableName",
			func(ctx context.Context, top int) {
				b := f.Backend()
				prefix, created := newTables(ctx, f, "a", "b", "c", "d", "e")
				q := api.TableQuery{Filter: prefixFilter(prefix), Top: top}
				listed, pages := walkTables(ctx, b, q)
				Expect(ownTables(listed, created...)).To(ConsistOf(created), "every table of the prefix exactly once over %d pages of $top=%d", len(pages), top)
				seen := 0
				for i, p := range pages {
					seen += len(ownTables(p.Tables, created...))
					if seen < len(created) {
						Expect(p.NextTableName).NotTo(BeEmpty(),
							"page %d of $top=%d ended the query after %d of %d tables", i+1, top, seen, len(created))
					}
				}
				if top < len(created) {
					Expect(len(pages)).To(BeNumerically(">=", (len(created)+top-1)/top),
						"$top=%d over %d tables needs several pages", top, len(created))
				}
			},
			Entry("at $top=1", 1),
			Entry("at $top=2", 2),
			Entry("at $top=4, one under the count", 4),
			Entry("at $top equal to the count", 5),
			Entry("at $top over the count", 6),
		)
	})
})
