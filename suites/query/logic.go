package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// logicEntities is a set where each entity has a different subset of the properties the
// filters name, so that every way of mis-grouping a boolean expression selects a different
// set. Flag also appears as a String and an Int32, which a bare-property condition must not
// take for true.
func logicEntities() []api.Entity {
	e := func(rk string, props map[string]api.Value) api.Entity { return api.NewEntity("p", rk, props) }
	return []api.Entity{
		e("a", map[string]api.Value{"Name": api.String("test")}),
		e("b", map[string]api.Value{"Rank": api.Int32(3)}),
		e("c", map[string]api.Value{"Big": api.Int64(3), "Tier": api.String("t")}),
		e("d", map[string]api.Value{"Rank": api.Int32(3), "Big": api.Int64(3), "Tier": api.String("t")}),
		e("e", map[string]api.Value{"Name": api.String("test"), "Rank": api.Int32(3)}),
		e("f", map[string]api.Value{"Other": api.String("x")}),
		e("g", map[string]api.Value{"Flag": api.Bool(true)}),
		e("h", map[string]api.Value{"Flag": api.Bool(false)}),
		e("i", map[string]api.Value{"Flag": api.String("true")}),
		e("j", map[string]api.Value{"Flag": api.Int32(1)}),
		e("k", map[string]api.Value{"Flag": api.Bool(true), "Rank": api.Int32(3)}),
		e("l", map[string]api.Value{"Rank": api.Int32(5), "Name": api.String("other")}),
	}
}

// Predicates over logicEntities: a comparison on a property the entity lacks is false, as
// reported live answers show for eq and ne (E-filter-missing-property). Under not that is
// open, so query.logic.not judges only entities that hold the compared properties
// (checkHolding).
var (
	nameTest = func(e api.Entity) bool { return has(e, "Name", api.String("test")) }
	rank3    = func(e api.Entity) bool { return has(e, "Rank", api.Int32(3)) }
	big3     = func(e api.Entity) bool { return has(e, "Big", api.Int64(3)) }
	tierT    = func(e api.Entity) bool { return has(e, "Tier", api.String("t")) }
	flagTrue = func(e api.Entity) bool { return has(e, "Flag", api.Bool(true)) }
)

// comparison is one comparison the boolean operators' filters are built of, with the rule
// that covers it alone.
type comparison struct {
	filter string
	pred   func(api.Entity) bool
	rule   string
}

var logicComparisons = []comparison{
	{"Name eq 'test'", nameTest, "query.compare.string"},
	{"Rank eq 3", rank3, "query.compare.int32"},
	{"Big eq 3L", big3, "query.compare.int64"},
	{"Tier eq 't'", tierT, "query.compare.string"},
	{"Flag eq true", flagTrue, "query.compare.boolean"},
}

// requireComparisons is the precondition of a spec about boolean operators: each
// comparison its filter is built of selects, alone, what it should. A backend that cannot
// compare an Int64 literal blocks the spec by query.compare.int64 instead of failing the
// rule about parentheses.
func requireComparisons(ctx context.Context, f *framework.F, table, filter string, es []api.Entity) {
	GinkgoHelper()
	for _, c := range logicComparisons {
		if !strings.Contains(filter, c.filter) {
			continue
		}
		f.Requires(c.rule, fmt.Sprintf("the comparison %q alone", c.filter), func() {
			Expect(filterAll(ctx, f, table, c.filter, len(es))).To(ConsistOfKeys(keysWhere(es, c.pred)...), "filter %q alone", c.filter)
		})
	}
}

var _ = framework.Describe("Query Entities $filter boolean operators", func(f *framework.F) {
	people := logicEntities()
	check := func(ctx context.Context, filter string, pred func(api.Entity) bool) {
		table := tableWith(ctx, f, people...)
		requireComparisons(ctx, f, table, filter, people)
		Expect(filterAll(ctx, f, table, filter, len(people))).To(ConsistOfKeys(keysWhere(people, pred)...), "filter %q", filter)
	}

	// The precedence filters compare only strings and Int32s: a backend that cannot compare
	// an Int64 must not hide how it groups and and or behind a block by query.compare.int64.
	f.DescribeTable("query.logic.precedence", "without parentheses binds and before or",
		check,
		Entry("when or comes first", "Name eq 'test' or Rank eq 3 and Tier eq 't'",
			func(e api.Entity) bool { return nameTest(e) || (rank3(e) && tierT(e)) }),
		Entry("when and comes first", "Name eq 'test' and Rank eq 3 or Tier eq 't'",
			func(e api.Entity) bool { return (nameTest(e) && rank3(e)) || tierT(e) }),
		Entry("when or sits between two ands", "Name eq 'test' and Rank eq 3 or Rank eq 3 and Tier eq 't'",
			func(e api.Entity) bool { return (nameTest(e) && rank3(e)) || (rank3(e) && tierT(e)) }),
	)

	f.DescribeTable("query.logic.parentheses", "with parentheses groups as written",
		check,
		Entry("around an or on the right", "Name eq 'test' and (Rank eq 3 or Big eq 3L)",
			func(e api.Entity) bool { return nameTest(e) && (rank3(e) || big3(e)) }),
		Entry("around an or on the left", "(Name eq 'test' or Rank eq 3) and Big eq 3L",
			func(e api.Entity) bool { return (nameTest(e) || rank3(e)) && big3(e) }),
		Entry("doubled around one comparison", "((Rank eq 3))", rank3),
		Entry("around every comparison", "(Name eq 'test') or (Big eq 3L)",
			func(e api.Entity) bool { return nameTest(e) || big3(e) }),
	)

	// checkHolding asserts filter's selection among the entities that hold every property
	// named in typed, each with its EDM type, and records which of the others came back: what
	// a comparison on a missing property, or on one of another type, gives under not is open
	// (E-filter-missing-property).
	checkHolding := func(ctx context.Context, filter string, typed map[string]api.EdmType, pred func(api.Entity) bool) {
		table := tableWith(ctx, f, people...)
		requireComparisons(ctx, f, table, filter, people)
		got := filterAll(ctx, f, table, filter, len(people))
		var holding, others []api.Entity
		for _, e := range people {
			if holdsTyped(e, typed) {
				holding = append(holding, e)
			} else {
				others = append(others, e)
			}
		}
		Expect(among(got, holding)).To(ConsistOfKeys(keysWhere(holding, pred)...),
			"filter %q over the entities that hold %v", filter, typed)
		var rks []string
		for _, e := range among(got, others) {
			rks = append(rks, e.RowKey)
		}
		sort.Strings(rks)
		came := "none"
		if len(rks) > 0 {
			came = strings.Join(rks, ", ")
		}
		f.Choice(fmt.Sprintf("filter %s over the %d entities that lack a compared property or hold another type", filter, len(others)), "selected: "+came)
	}
	rankInt := map[string]api.EdmType{"Rank": api.EdmInt32}
	f.DescribeTable("query.logic.not", "with not negates its operand",
		checkHolding,
		Entry("over a comparison", "not (Rank eq 3)", rankInt, func(e api.Entity) bool { return !rank3(e) }),
		Entry("over ne comparisons joined by and", "not (Name ne 'test' and Rank ne 3)",
			map[string]api.EdmType{"Name": api.EdmString, "Rank": api.EdmInt32},
			func(e api.Entity) bool { return !(str(e, "Name") != "test" && e.Properties["Rank"].Int() != 3) }),
		Entry("twice", "not (not (Rank eq 3))", rankInt, rank3),
		Entry("over a bare Boolean property", "not Flag", map[string]api.EdmType{"Flag": api.EdmBoolean},
			func(e api.Entity) bool { return !flagTrue(e) }),
		Entry("inside an and", "Rank eq 3 and not (Big eq 3L)", map[string]api.EdmType{"Rank": api.EdmInt32, "Big": api.EdmInt64},
			func(e api.Entity) bool { return rank3(e) && !big3(e) }),
	)

	f.DescribeTable("query.logic.bare-boolean", "with a bare property name selects only the Boolean true values",
		check,
		Entry("alone", "Flag", flagTrue),
		Entry("joined by and", "Flag and Rank eq 3", func(e api.Entity) bool { return flagTrue(e) && rank3(e) }),
		Entry("joined by or", "Flag or Name eq 'test'", func(e api.Entity) bool { return flagTrue(e) || nameTest(e) }),
		Entry("like an explicit eq true", "Flag eq true", flagTrue),
	)

	f.DescribeTable("query.logic.constant-left", "with the constant first either refuses or mirrors the comparison",
		func(ctx context.Context, filter, mirrored, compareRule string, pred func(api.Entity) bool) {
			table := tableWith(ctx, f, people...)
			r, err := QueryAll(ctx, f.Backend(), table, api.Query{Filter: filter}, scenario.MaxPagesFor(len(people)))
			if err != nil {
				Expect(err).To(BeRefused(), "filter %q", filter)
				f.Choice("constant on the left of a comparison", "refused")
				return
			}
			// What the mirrored comparison selects is compareRule's subject; that the
			// constant-left one selects the same is this rule's.
			f.Requires(compareRule, fmt.Sprintf("answer the mirrored filter %q", mirrored), func() {
				Expect(filterAll(ctx, f, table, mirrored, len(people))).To(ConsistOfKeys(keysWhere(people, pred)...), "filter %q", mirrored)
			})
			Expect(r.Entities()).To(ConsistOfKeys(keysWhere(people, pred)...), "filter %q was accepted, so it must mean the mirrored comparison", filter)
			f.Choice("constant on the left of a comparison", "accepted and mirrored")
		},
		Entry("for lt", "3 lt Rank", "Rank gt 3", "query.compare.int32", func(e api.Entity) bool {
			v, ok := e.Properties["Rank"]
			return ok && v.Type == api.EdmInt32 && v.Int() > 3
		}),
		Entry("for eq", "'test' eq Name", "Name eq 'test'", "query.compare.string", nameTest),
	)

	f.It("query.filter.property-vs-property", "with two properties compared is refused", func(ctx context.Context) {
		table := tableWith(ctx, f, people...)
		_, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: "Rank eq Big"})
		Expect(err).To(BeRefused(), "filter \"Rank eq Big\"")
		if e, ok := driver.AsError(err); ok {
			f.Choice("comparison of two properties", fmt.Sprintf("%d %s", e.Status, e.Code))
		}
	})

	everyone := func(api.Entity) bool { return true }
	nobody := func(api.Entity) bool { return false }
	f.DescribeTable("query.filter.bare-constant", "with a Boolean constant as the whole filter or one of its conditions is run or refused",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) {
			table := tableWith(ctx, f, people...)
			requireComparisons(ctx, f, table, filter, people)
			r, err := QueryAll(ctx, f.Backend(), table, api.Query{Filter: filter}, scenario.MaxPagesFor(len(people)))
			if err != nil {
				Expect(err).To(BeRefused(), "filter %q", filter)
				e, _ := driver.AsError(err)
				f.Choice("$filter="+filter, fmt.Sprintf("refused with %d %s", e.Status, e.Code))
				return
			}
			Expect(r.Entities()).To(ConsistOfKeys(keysWhere(people, pred)...), "filter %q was run, so each constant must stand for its truth value", filter)
			f.Choice("$filter="+filter, "run")
		},
		Entry("false", "false", nobody),
		Entry("true", "true", everyone),
		Entry("true inside an and", "Name eq 'test' and true", nameTest),
		Entry("false inside an and", "Name eq 'test' and false", nobody),
		Entry("true inside an or", "Name eq 'test' or true", everyone),
		Entry("false inside an or", "false or Name eq 'test'", nameTest),
	)

	f.DescribeTable("query.filter.null", "with a null literal is refused",
		func(ctx context.Context, filter string) {
			table := tableWith(ctx, f, people...)
			_, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: filter})
			Expect(err).To(BeRefused(), "filter %q", filter)
		},
		Entry("in eq", "Rank eq null"),
		Entry("in ne", "Name ne null"),
	)

	// orOfRowKeys returns n RowKey equalities joined by or: n discrete comparisons.
	orOfRowKeys := func(n int) (string, []api.Key) {
		parts := make([]string, n)
		keys := make([]api.Key, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("RowKey eq 'r%02d'", i)
			keys[i] = scenario.Key("p", fmt.Sprintf("r%02d", i))
		}
		return strings.Join(parts, " or "), keys
	}
	rows := func(n int) []api.Entity {
		es := make([]api.Entity, n)
		for i := range es {
			es[i] = api.NewEntity("p", fmt.Sprintf("r%02d", i), nil)
		}
		return es
	}

	f.It("query.filter.comparison-limit", fmt.Sprintf("with %d comparisons is accepted", spec.MaxFilterComparisons), func(ctx context.Context) {
		es := rows(spec.MaxFilterComparisons + 5)
		table := tableWith(ctx, f, es...)
		filter, want := orOfRowKeys(spec.MaxFilterComparisons)
		Expect(filterAll(ctx, f, table, filter, len(es))).To(ConsistOfKeys(want...), "filter %q", filter)
	})

	f.It("query.filter.comparison-limit.over", fmt.Sprintf("with %d comparisons is refused or answered right", spec.MaxFilterComparisons+1), func(ctx context.Context) {
		es := rows(spec.MaxFilterComparisons + 5)
		table := tableWith(ctx, f, es...)
		filter, want := orOfRowKeys(spec.MaxFilterComparisons + 1)
		r, err := QueryAll(ctx, f.Backend(), table, api.Query{Filter: filter}, scenario.MaxPagesFor(len(es)))
		if err != nil {
			Expect(err).To(HaveFailedWith(400), "filter %q", filter)
			Expect(err).To(BeDocumentedRefusal(), "filter %q", filter)
			e, _ := driver.AsError(err)
			f.Choice("more than 15 comparisons", "refused with 400 "+e.Code)
			return
		}
		Expect(r.Entities()).To(ConsistOfKeys(want...), "filter %q was accepted, so its results must be right", filter)
		f.Choice("more than 15 comparisons", "accepted")
	})
})
