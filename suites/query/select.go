package query

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Query Entities $select (server-side projection)", func(f *framework.F) {
	full := api.NewEntity("p", "full", map[string]api.Value{
		"A": api.Int32(1), "B": api.String("x"), "C": api.Int64(1 << 40), "D": api.Binary([]byte{1, 2, 0xff}),
		"E": api.DateTime(time.Date(2020, 1, 22, 1, 2, 3, 4500, time.UTC)), "F": api.Guid("68260b3f-beab-45e2-b900-33e2b442e724"),
		"G": api.Double(2.5), "H": api.Bool(true),
	})
	partial := api.NewEntity("p", "partial", map[string]api.Value{"A": api.Int32(2), "B": api.String("y")})

	project := func(ctx context.Context, filter string, sel ...string) []api.Entity {
		GinkgoHelper()
		table := tableWith(ctx, f, full, partial)
		return queryAll(ctx, f, table, api.Query{Filter: filter, Select: sel}, 2)
	}
	find := func(es []api.Entity, rk string) api.Entity {
		GinkgoHelper()
		for _, e := range es {
			if e.RowKey == rk {
				return e
			}
		}
		Fail("the projection has no entity with RowKey " + rk + " (the query selected PartitionKey and RowKey to identify it); got " + KeyList(es))
		return api.Entity{}
	}

	f.DescribeTable("query.select.only", "returns only the selected custom properties",
		func(ctx context.Context, sel []string) {
			es := project(ctx, "", append([]string{"PartitionKey", "RowKey"}, sel...)...)
			Expect(es).To(ConsistOfKeys(full.Key(), partial.Key()))
			Expect(find(es, "full")).To(HavePropertyNames(sel...), "$select=PartitionKey,RowKey,%v", sel)
			allowed := map[string]bool{}
			for _, n := range sel {
				allowed[n] = true
			}
			for n := range WrittenOnly(find(es, "partial")).Properties {
				Expect(allowed).To(HaveKey(n), "property %s came back for entity (p,partial) without being selected", n)
			}
		},
		Entry("for one property", []string{"B"}),
		Entry("for two properties", []string{"A", "C"}),
		Entry("for every property but one", []string{"A", "B", "C", "D", "E", "F", "G"}),
	)

	f.It("query.select.system", "does not add PartitionKey, RowKey or Timestamp that were not selected", func(ctx context.Context) {
		es := project(ctx, "RowKey eq 'full'", "A")
		Expect(es).To(HaveLen(1))
		e := es[0]
		Expect(e.Absent&api.AbsentPartitionKey).NotTo(BeZero(), "PartitionKey came back (%q) although $select=A", e.PartitionKey)
		Expect(e.Absent&api.AbsentRowKey).NotTo(BeZero(), "RowKey came back (%q) although $select=A", e.RowKey)
		Expect(e.Absent&api.AbsentTimestamp).NotTo(BeZero(), "Timestamp came back (%s) although $select=A", e.Timestamp)
		Expect(e).To(HavePropertyNames("A"))
	})

	f.DescribeTable("query.select.system-selected", "returns the selected system properties",
		func(ctx context.Context, sel []string, custom []string) {
			es := project(ctx, "RowKey eq 'full'", sel...)
			Expect(es).To(HaveLen(1))
			e := es[0]
			for _, n := range sel {
				switch n {
				case "PartitionKey":
					Expect(e.Absent&api.AbsentPartitionKey).To(BeZero(), "PartitionKey was selected")
					Expect(e.PartitionKey).To(Equal("p"))
				case "RowKey":
					Expect(e.Absent&api.AbsentRowKey).To(BeZero(), "RowKey was selected")
					Expect(e.RowKey).To(Equal("full"))
				case "Timestamp":
					Expect(e.Absent&api.AbsentTimestamp).To(BeZero(), "Timestamp was selected")
					Expect(e.Timestamp.IsZero()).To(BeFalse(), "Timestamp was selected but came back empty")
				}
			}
			f.Requires("query.select.only", "return only the selected custom properties", func() {
				Expect(e).To(HavePropertyNames(custom...))
			})
		},
		Entry("for both keys and a property", []string{"PartitionKey", "RowKey", "A"}, []string{"A"}),
		Entry("for Timestamp alone", []string{"Timestamp"}, []string{}),
		Entry("for RowKey alone", []string{"RowKey"}, []string{}),
	)

	f.It("query.select.missing", "returns a selected property the entity lacks as null or leaves it out", func(ctx context.Context) {
		es := project(ctx, "", "PartitionKey", "RowKey", "A", "C")
		e := find(es, "partial")
		Expect(e.Properties).To(HaveKey("A"))
		v, present := e.Properties["C"]
		switch {
		case !present:
			f.Choice("selected property the entity lacks", "left out")
		case v.Null:
			f.Choice("selected property the entity lacks", "null")
		default:
			Fail("entity (p,partial) has no property C, but $select=C returned " + v.String())
		}
		Expect(len(WrittenOnly(e).Properties)).To(BeNumerically("<=", 2), "only A and C were selected, got %s", e)
	})

	// Without a $filter: the entity is found by its selected keys, so that only $select is
	// judged; which properties come back at all is query.select.only's subject.
	f.It("query.select.types", "keeps every selected property's type and value", func(ctx context.Context) {
		sel := []string{"C", "D", "E", "F", "G", "H"}
		// Each value, read back without $select, comes back as itself: what then differs is
		// $select's.
		var values []api.Value
		for _, n := range sel {
			values = append(values, full.Properties[n])
		}
		scenario.RequireRoundTrip(ctx, f, f.Backend(), f.NewTable(ctx), values...)
		got := find(project(ctx, "", append([]string{"PartitionKey", "RowKey"}, sel...)...), "full")
		f.Requires("query.select.only", "$select returns the selected properties only", func() {
			Expect(got).To(HavePropertyNames(sel...), "$select=PartitionKey,RowKey,%v", sel)
		})
		for _, n := range sel {
			Expect(got).To(HaveProperty(n, full.Properties[n]), "$select=PartitionKey,RowKey,%v", sel)
		}
	})

	// The filter alone must select what it should (its comparison's rule) and $select must
	// leave out what it should (query.select.only); that the filter still sees the
	// properties $select leaves out is this rule's subject.
	f.DescribeTable("query.select.filter-independent", "evaluates $filter on properties $select leaves out",
		func(ctx context.Context, filter, filterRule string, want api.Key) {
			table := tableWith(ctx, f, full, partial)
			f.Requires(filterRule, fmt.Sprintf("the filter %q alone", filter), func() {
				Expect(filterAll(ctx, f, table, filter, 2)).To(ConsistOfKeys(want), "filter %q alone", filter)
			})
			es := queryAll(ctx, f, table, api.Query{Filter: filter, Select: []string{"PartitionKey", "RowKey", "A"}}, 2)
			Expect(es).To(ConsistOfKeys(want), "filter %q with $select=PartitionKey,RowKey,A", filter)
			f.Requires("query.select.only", "$select returns the selected properties only", func() {
				Expect(es[0]).To(HavePropertyNames("A"), "filter %q with $select=PartitionKey,RowKey,A", filter)
			})
		},
		Entry("for a String property", "B eq 'y'", "query.compare.string", scenario.Key("p", "partial")),
		Entry("for a property only one entity has", "H", "query.logic.bare-boolean", scenario.Key("p", "full")),
	)
})
