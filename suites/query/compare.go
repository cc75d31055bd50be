package query

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// typedCase is one EDM type's comparison table: stored values in ascending order, a literal
// and the index of the stored value equal to it.
type typedCase struct {
	rule    string
	name    string
	literal string
	values  []api.Value
	equalAt int
}

// selects reports whether op selects a stored value whose position relative to the literal
// is rel (-1 below, 0 equal, 1 above).
func selects(op string, rel int) bool {
	switch op {
	case "eq":
		return rel == 0
	case "ne":
		return rel != 0
	case "gt":
		return rel > 0
	case "ge":
		return rel >= 0
	case "lt":
		return rel < 0
	case "le":
		return rel <= 0
	}
	return false
}

func cmpIndex(i, j int) int {
	switch {
	case i < j:
		return -1
	case i > j:
		return 1
	}
	return 0
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(fmt.Sprintf("bad time in a spec table: %v", err))
	}
	return t
}

// typedCases lists, for each EDM type, values around the literal that a backend comparing
// the wrong way (as text, truncated to 32 bits, case-insensitively, by seconds instead of
// ticks, longest-first for bytes) would misplace.
func typedCases() []typedCase {
	return []typedCase{
		{rule: "query.compare.int32", name: "an Int32 literal", literal: "3", equalAt: 2,
			values: []api.Value{api.Int32(math.MinInt32), api.Int32(-7), api.Int32(3), api.Int32(4), api.Int32(30), api.Int32(math.MaxInt32)}},
		{rule: "query.compare.int64", name: "an Int64 literal", literal: "1099511627776L", equalAt: 3,
			values: []api.Value{api.Int64(math.MinInt64), api.Int64(3), api.Int64(1<<32 + 3), api.Int64(1 << 40), api.Int64(1<<40 + 1), api.Int64(math.MaxInt64)}},
		{rule: "query.compare.double", name: "a Double literal", literal: "3.5", equalAt: 2,
			values: []api.Value{api.Double(-1e300), api.Double(3.25), api.Double(3.5), api.Double(3.75), api.Double(25), api.Double(1e300)}},
		{rule: "query.compare.boolean", name: "a Boolean literal", literal: "false", equalAt: 0,
			values: []api.Value{api.Bool(false), api.Bool(true)}},
		{rule: "query.compare.datetime", name: "a DateTime literal", literal: "datetime'2020-01-22T00:00:00Z'", equalAt: 2,
			values: []api.Value{
				api.DateTime(mustTime("2019-01-22T00:00:00Z")),
				api.DateTime(mustTime("2020-01-21T23:59:59.9999999Z")),
				api.DateTime(mustTime("2020-01-22T00:00:00Z")),
				api.DateTime(mustTime("2020-01-22T00:00:00.0000001Z")),
				api.DateTime(mustTime("2021-01-22T00:00:00Z")),
			}},
		{rule: "query.compare.guid", name: "a Guid literal", literal: "guid'68260b3f-beab-45e2-b900-33e2b442e724'", equalAt: 2,
			values: []api.Value{
				api.Guid("18260b3f-beab-45e2-b900-33e2b442e724"),
				api.Guid("58260b3f-beab-45e2-b900-33e2b442e724"),
				api.Guid("68260b3f-beab-45e2-b900-33e2b442e724"),
				api.Guid("78260b3f-beab-45e2-b900-33e2b442e724"),
			}},
		{rule: "query.compare.binary", name: "a Binary literal", literal: "X'03'", equalAt: 2,
			values: []api.Value{api.Binary([]byte{0x02}), api.Binary([]byte{0x02, 0xff}), api.Binary([]byte{0x03}),
				api.Binary([]byte{0x03, 0x00}), api.Binary([]byte{0x03, 0x01}), api.Binary([]byte{0xff})}},
		{rule: "query.compare.string", name: "a String literal", literal: "'b'", equalAt: 3,
			values: []api.Value{api.String(""), api.String("B"), api.String("a"), api.String("b"), api.String("b "),
				api.String("bB"), api.String("c")}},
	}
}

// requireStored is the precondition of a comparison over the values V of es: each entity
// reads back with the V it was stored with (the round-trip rule of V's type), so that a
// value the backend did not keep blocks the comparison instead of failing it.
func requireStored(ctx context.Context, f *framework.F, table string, es []api.Entity) {
	GinkgoHelper()
	for _, e := range es {
		v := e.Properties["V"]
		rule := "types." + strings.ToLower(strings.TrimPrefix(v.Type.String(), "Edm.")) + ".round-trip"
		f.Requires(rule, fmt.Sprintf("read back the stored %s value %s", v.Type, v), func() {
			Expect(scenario.MustGet(ctx, f.Backend(), table, e.PartitionKey, e.RowKey)).To(HaveProperty("V", v))
		})
	}
}

var operators = []string{"eq", "ne", "gt", "ge", "lt", "le"}

var _ = framework.Describe("Query Entities $filter comparison operators", func(f *framework.F) {
	for _, tc := range typedCases() {
		entries := make([]any, 0, len(operators))
		for _, op := range operators {
			entries = append(entries, Entry(op, op))
		}
		f.DescribeTable(tc.rule, "with "+tc.name+" selects the values the operator orders",
			func(ctx context.Context, op string) {
				es := make([]api.Entity, len(tc.values))
				for i, v := range tc.values {
					es[i] = api.NewEntity("p", fmt.Sprintf("v%d", i), map[string]api.Value{"V": v})
				}
				table := tableWith(ctx, f, es...)
				requireStored(ctx, f, table, es)
				var want []api.Key
				for i := range tc.values {
					if selects(op, cmpIndex(i, tc.equalAt)) {
						want = append(want, es[i].Key())
					}
				}
				filter := "V " + op + " " + tc.literal
				Expect(filterAll(ctx, f, table, filter, len(es))).To(ConsistOfKeys(want...),
					"filter %q over the stored values %v (v%d equals the literal)", filter, tc.values, tc.equalAt)
			},
			entries...)
	}

	f.DescribeTable("query.literal.quote", "with a doubled single quote in a String literal matches the stored quote",
		func(ctx context.Context, filter string, want []api.Key) {
			table := tableWith(ctx, f,
				api.NewEntity("p", "1", map[string]api.Value{"Name": api.String("O'Brien")}),
				api.NewEntity("p", "2", map[string]api.Value{"Name": api.String("OBrien")}),
				api.NewEntity("p", "3", map[string]api.Value{"Name": api.String("O''Brien")}),
				api.NewEntity("p", "4", map[string]api.Value{"Name": api.String("'")}),
				api.NewEntity("it's", "5", map[string]api.Value{"Name": api.String("it")}),
			)
			Expect(filterAll(ctx, f, table, filter, 5)).To(ConsistOfKeys(want...), "filter %q", filter)
		},
		Entry("inside a word", "Name eq 'O''Brien'", []api.Key{scenario.Key("p", "1")}),
		Entry("as two quotes in a row", "Name eq 'O''''Brien'", []api.Key{scenario.Key("p", "3")}),
		Entry("as the whole value", "Name eq ''''", []api.Key{scenario.Key("p", "4")}),
		Entry("in a PartitionKey", "PartitionKey eq 'it''s'", []api.Key{scenario.Key("it's", "5")}),
		Entry("in range bounds", "PartitionKey eq 'p' and Name gt 'O''' and Name lt 'O''C'", []api.Key{scenario.Key("p", "1"), scenario.Key("p", "3")}),
	)

	// literalForms: each entry stores values and a filter that must select the first one.
	f.DescribeTable("query.literal.forms", "with other literal spellings selects the values they denote",
		func(ctx context.Context, filter string, values ...api.Value) {
			es := make([]api.Entity, len(values))
			for i, v := range values {
				es[i] = api.NewEntity("p", fmt.Sprintf("v%d", i), map[string]api.Value{"V": v})
			}
			table := tableWith(ctx, f, es...)
			// The filter is judged over the values as sent: they must be stored as such.
			scenario.RequireRoundTrip(ctx, f, f.Backend(), table, values...)
			requireInt64Literals(ctx, f, table, filter)
			Expect(filterAll(ctx, f, table, filter, len(es))).To(ConsistOfKeys(es[0].Key()), "filter %q over %v", filter, values)
		},
		Entry("a negative Int32", "V lt -1", api.Int32(-5), api.Int32(0), api.Int32(5)),
		Entry("a negative Int64", "V eq -5000000000L", api.Int64(-5000000000), api.Int64(5000000000)),
		Entry("a negative Double", "V lt -1.0", api.Double(-2.5), api.Double(2.5)),
		Entry("a datetime with seven fractional digits", "V eq datetime'2020-01-22T00:00:00.0000001Z'",
			api.DateTime(mustTime("2020-01-22T00:00:00.0000001Z")), api.DateTime(mustTime("2020-01-22T00:00:00Z"))),
		Entry("a datetime with three fractional digits", "V eq datetime'2020-01-22T00:00:00.123Z'",
			api.DateTime(mustTime("2020-01-22T00:00:00.123Z")), api.DateTime(mustTime("2020-01-22T00:00:00.1234Z"))),
		Entry("a lower-case x binary prefix", "V eq x'0AFF'", api.Binary([]byte{0x0a, 0xff}), api.Binary([]byte{0x0a})),
		Entry("lower-case hexadecimal digits", "V eq X'0aff'", api.Binary([]byte{0x0a, 0xff}), api.Binary([]byte{0x0b})),
		Entry("a non-ASCII String", "V eq 'Zürich 東京 😀'", api.String("Zürich 東京 😀"), api.String("Zurich 東京 😀"), api.String("Zürich")),
		Entry("a String of URL-reserved characters", "V eq 'a&b=c+d?e#f%g/h:i@j,k$l;m'",
			api.String("a&b=c+d?e#f%g/h:i@j,k$l;m"), api.String("a&b=c d?e#f%g/h:i@j,k$l;m"), api.String("a")),
	)

	f.It("query.literal.binary-keyword", "with binary'..' either refuses it or means X'..'", func(ctx context.Context) {
		table := tableWith(ctx, f,
			api.NewEntity("p", "1", map[string]api.Value{"V": api.Binary([]byte{0x0a, 0xff})}),
			api.NewEntity("p", "2", map[string]api.Value{"V": api.Binary([]byte{0x0b})}),
		)
		r, err := QueryAll(ctx, f.Backend(), table, api.Query{Filter: "V eq binary'0AFF'"}, scenario.MaxPagesFor(2))
		if err != nil {
			Expect(err).To(BeRefused())
			f.Choice("binary'..' literal", "refused")
			return
		}
		Expect(r.Entities()).To(ConsistOfKeys(scenario.Key("p", "1")), "binary'0AFF' was accepted, so it must select what X'0AFF' selects")
		f.Choice("binary'..' literal", "accepted as X'..'")
	})
})
