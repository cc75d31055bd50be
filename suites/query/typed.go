package query

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The expected answers below are those of a live Storage account as a third party's tests
// report them (CloudStub): for a literal of another type and for a missing property that is
// open evidence (EVIDENCE.md 3.2, 11.8), so those two rules record the answer instead of
// asserting it.

var _ = framework.Describe("Query Entities $filter typed semantics", func(f *framework.F) {
	// matchOne stores one entity whose property V is v and checks whether filter selects it.
	matchOne := func(ctx context.Context, v api.Value, filter string, selected bool) {
		e := api.NewEntity("p", "r", map[string]api.Value{"V": v})
		table := tableWith(ctx, f, e)
		requireInt64Literals(ctx, f, table, filter)
		var want []api.Key
		if selected {
			want = append(want, e.Key())
		}
		Expect(filterAll(ctx, f, table, filter, 1)).To(ConsistOfKeys(want...),
			"filter %q over V = %s (selected: %v)", filter, v, selected)
	}

	f.DescribeTable("query.compare.widening", "with a narrower numeric literal compares numerically",
		matchOne,
		Entry("Int64 property eq Int32 literal", api.Int64(3), "V eq 3", true),
		Entry("Int64 property gt Int32 literal", api.Int64(3), "V gt 2", true),
		Entry("Int64 property lt an equal Int32 literal", api.Int64(3), "V lt 3", false),
		Entry("large Int64 property gt Int32 literal", api.Int64(1<<40), "V gt 3", true),
		Entry("Double property eq Int32 literal", api.Double(3), "V eq 3", true),
		Entry("Double property eq Int64 literal", api.Double(3), "V eq 3L", true),
		Entry("Double property gt Int32 literal", api.Double(3.5), "V gt 3", true),
		Entry("Double property lt Int64 literal", api.Double(3.5), "V lt 4L", true),
		Entry("Double property ge a larger Int32 literal", api.Double(3.5), "V ge 4", false),
	)

	when := api.DateTime(time.Date(2020, 1, 22, 0, 0, 0, 0, time.UTC))
	id := api.Guid("68260b3f-beab-45e2-b900-33e2b442e724")
	// recordOne stores one entity whose property V is v and records whether filter selects
	// it, or how the query was refused: any selection and a 400 are allowed (MAY), and the
	// answer is compared with the reference's, which answers as if V sorted below the literal.
	recordOne := func(ctx context.Context, v api.Value, filter string, selected bool) {
		e := api.NewEntity("p", "r", map[string]api.Value{"V": v})
		table := tableWith(ctx, f, e)
		f.Choice("filter "+filter+" over V = "+v.String(), selection(ctx, f, table, filter, selected, 1, e.Key()))
	}
	f.DescribeTable("query.compare.mismatch", "with a literal of another type selects the entity or not, or refuses the query with 400, and records which",
		recordOne,
		Entry("Int32 property eq Int64 literal", api.Int32(3), "V eq 3L", false),
		Entry("Int32 property ne Int64 literal", api.Int32(3), "V ne 3L", true),
		Entry("Int32 property lt Int64 literal", api.Int32(3), "V lt 3L", true),
		Entry("Int32 property le Int64 literal", api.Int32(3), "V le 3L", true),
		Entry("Int32 property gt Int64 literal", api.Int32(3), "V gt 3L", false),
		Entry("Int32 property ge Int64 literal", api.Int32(3), "V ge 3L", false),
		Entry("String property eq Int32 literal", api.String("3"), "V eq 3", false),
		Entry("String property ne Int32 literal", api.String("3"), "V ne 3", true),
		Entry("String property lt Int32 literal", api.String("3"), "V lt 3", true),
		Entry("String property le Int32 literal", api.String("3"), "V le 3", true),
		Entry("String property gt Int32 literal", api.String("3"), "V gt 3", false),
		Entry("String property ge Int32 literal", api.String("3"), "V ge 3", false),
		Entry("Int32 property eq Double literal", api.Int32(3), "V eq 3.0", false),
		Entry("Int32 property ge Double literal", api.Int32(3), "V ge 3.0", false),
		Entry("Int64 property eq Double literal", api.Int64(3), "V eq 3.0", false),
		Entry("Int64 property le Double literal", api.Int64(3), "V le 3.0", true),
		Entry("Boolean property eq Int32 literal", api.Bool(true), "V eq 1", false),
		Entry("Boolean property ne Int32 literal", api.Bool(true), "V ne 1", true),
		Entry("String property eq Boolean literal", api.String("true"), "V eq true", false),
		Entry("DateTime property eq String literal", when, "V eq '2020-01-22T00:00:00Z'", false),
		Entry("DateTime property lt String literal", when, "V lt '2020-01-22T00:00:00Z'", true),
		Entry("Guid property eq String literal", id, "V eq '68260b3f-beab-45e2-b900-33e2b442e724'", false),
		Entry("Guid property ne String literal", id, "V ne '68260b3f-beab-45e2-b900-33e2b442e724'", true),
		Entry("String property eq Guid literal", api.String("68260b3f-beab-45e2-b900-33e2b442e724"), "V eq guid'68260b3f-beab-45e2-b900-33e2b442e724'", false),
		Entry("Binary property lt Int32 literal", api.Binary([]byte{3}), "V lt 3", true),
		Entry("Binary property gt Int32 literal", api.Binary([]byte{3}), "V gt 3", false),
		Entry("Double property ge Boolean literal", api.Double(3), "V ge true", false),
		Entry("Double property le Boolean literal", api.Double(3), "V le true", true),
	)

	// Two entities: one has every property, with values the filters select; the other has
	// none of them. Only the first may come back.
	withAll := api.NewEntity("p", "with", map[string]api.Value{
		"Rank": api.Int32(3), "Name": api.String("n"), "Big": api.Int64(3), "Ratio": api.Double(3),
		"Flag": api.Bool(true), "When": when, "Id": id, "Blob": api.Binary([]byte{3}),
	})
	without := api.NewEntity("p", "without", map[string]api.Value{"Other": api.String("x")})
	f.DescribeTable("query.compare.missing", "on a property the entity lacks leaves it out for eq and for ne with a String literal, and records the other answers",
		func(ctx context.Context, filter string, leftOut bool) {
			table := tableWith(ctx, f, withAll, without)
			// The entity with the property is judged by the other rules; this one judges what
			// becomes of the entity without it (the reference leaves it out).
			got := selection(ctx, f, table, filter, false, 2, without.Key())
			f.Choice("filter "+filter+" over an entity without the property", got)
			if leftOut {
				// Reported live answers (E-filter-missing-property).
				Expect(got).To(HavePrefix("left out"), "filter %q over an entity without the property", filter)
			}
		},
		Entry("for eq", "Rank eq 3", true),
		Entry("for ne", "Rank ne 4", false),
		Entry("for gt", "Rank gt 2", false),
		Entry("for ge", "Rank ge 3", false),
		Entry("for lt", "Rank lt 4", false),
		Entry("for le", "Rank le 3", false),
		Entry("for ne with a String literal", "Name ne 'zzz'", true),
		Entry("for ne with an Int64 literal", "Big ne 4L", false),
		Entry("for ne with a Double literal", "Ratio ne 4.5", false),
		Entry("for ne with a Boolean literal", "Flag ne false", false),
		Entry("for ne with a DateTime literal", "When ne datetime'2021-01-01T00:00:00Z'", false),
		Entry("for ne with a Guid literal", "Id ne guid'78260b3f-beab-45e2-b900-33e2b442e724'", false),
		Entry("for ne with a Binary literal", "Blob ne X'04'", false),
		Entry("for lt with a String literal", "Name lt 'zzz'", false),
		Entry("for a property that no entity has", "Nothing ne 1", false),
	)
})

// selection runs filter to its end and says what became of the entity with key k: "left
// out" or "selected" (with "as the reference answers" when that is what the reference
// does, referenceSelects), or the status and code of a refusal. An answer other than a
// success or a 400 fails the spec.
func selection(ctx context.Context, f *framework.F, table, filter string, referenceSelects bool, n int, k api.Key) string {
	GinkgoHelper()
	r, err := QueryAll(ctx, f.Backend(), table, api.Query{Filter: filter}, scenario.MaxPagesFor(n))
	if err != nil {
		Expect(err).To(HaveFailedWithStatus(400), "filter %q", filter)
		return "refused with " + OutcomeOf(err)
	}
	selected := false
	for _, e := range r.Entities() {
		selected = selected || e.Key() == k
	}
	what := "left out"
	if selected {
		what = "selected"
	}
	if selected == referenceSelects {
		what += ", as the reference answers"
	}
	return what
}
