package odata

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// The facts below are what a live Azure Storage account answered to single-comparison
// filters in Andrei15193/CloudStub (CloudStub.AzureDataTables.Tests/Data/
// TableQueryComparisonTestData.cs, a suite that runs against a real account): an entity
// holds one property of one type, the filter compares it with one constant, and the entity
// comes back or not. Only the facts are taken; constants are spelled as that suite sends
// them (3D for a Double, x'..' for Binary).

const (
	liveGuid     = "68260b3f-beab-45e2-b900-33e2b442e724"
	liveDateTime = "2020-01-22T00:00:00Z"
)

var liveProperties = map[string]api.Value{
	"Int32":    api.Int32(3),
	"Int64":    api.Int64(3),
	"Double":   api.Double(3),
	"Boolean":  api.Bool(true),
	"DateTime": api.DateTime(time.Date(2020, 1, 22, 0, 0, 0, 0, time.UTC)),
	"Guid":     api.Guid(liveGuid),
	"Binary":   api.Binary([]byte{3}),
	"String":   api.String("3"),
}

// liveConstants are the constants of the mismatch matrix, one per type.
var liveConstants = map[string]string{
	"Int32":    "3",
	"Int64":    "3L",
	"Double":   "3D",
	"Boolean":  "true",
	"DateTime": "datetime'" + liveDateTime + "'",
	"Guid":     "guid'" + liveGuid + "'",
	"Binary":   "x'03'",
	"String":   "'3'",
}

var liveOps = []string{"eq", "ne", "lt", "le", "gt", "ge"}

// liveMismatch lists, for a property type and a constant of another type, which of
// eq ne lt le gt ge returned the entity (T) or not (F). Only Int64 against an Int32
// constant and Double against Int32 or Int64 constants are compared by value.
var liveMismatch = map[[2]string]string{
	{"Int32", "Int64"}:      "FTTTFF",
	{"Int32", "Double"}:     "FTTTFF",
	{"Int32", "Boolean"}:    "FTTTFF",
	{"Int32", "DateTime"}:   "FTTTFF",
	{"Int32", "Guid"}:       "FTTTFF",
	{"Int32", "Binary"}:     "FTTTFF",
	{"Int32", "String"}:     "FTTTFF",
	{"Int64", "Int32"}:      "TFFTFT",
	{"Int64", "Double"}:     "FTTTFF",
	{"Int64", "Boolean"}:    "FTTTFF",
	{"Int64", "DateTime"}:   "FTTTFF",
	{"Int64", "Guid"}:       "FTTTFF",
	{"Int64", "Binary"}:     "FTTTFF",
	{"Int64", "String"}:     "FTTTFF",
	{"Double", "Int32"}:     "TFFTFT",
	{"Double", "Int64"}:     "TFFTFT",
	{"Double", "Boolean"}:   "FTTTFF",
	{"Double", "DateTime"}:  "FTTTFF",
	{"Double", "Guid"}:      "FTTTFF",
	{"Double", "Binary"}:    "FTTTFF",
	{"Double", "String"}:    "FTTTFF",
	{"Boolean", "Int32"}:    "FTTTFF",
	{"Boolean", "Int64"}:    "FTTTFF",
	{"Boolean", "Double"}:   "FTTTFF",
	{"Boolean", "DateTime"}: "FTTTFF",
	{"Boolean", "Guid"}:     "FTTTFF",
	{"Boolean", "Binary"}:   "FTTTFF",
	{"Boolean", "String"}:   "FTTTFF",
	{"DateTime", "Int32"}:   "FTTTFF",
	{"DateTime", "Int64"}:   "FTTTFF",
	{"DateTime", "Double"}:  "FTTTFF",
	{"DateTime", "Boolean"}: "FTTTFF",
	{"DateTime", "Guid"}:    "FTTTFF",
	{"DateTime", "Binary"}:  "FTTTFF",
	{"DateTime", "String"}:  "FTTTFF",
	{"Guid", "Int32"}:       "FTTTFF",
	{"Guid", "Int64"}:       "FTTTFF",
	{"Guid", "Double"}:      "FTTTFF",
	{"Guid", "Boolean"}:     "FTTTFF",
	{"Guid", "DateTime"}:    "FTTTFF",
	{"Guid", "Binary"}:      "FTTTFF",
	{"Guid", "String"}:      "FTTTFF",
	{"Binary", "Int32"}:     "FTTTFF",
	{"Binary", "Int64"}:     "FTTTFF",
	{"Binary", "Double"}:    "FTTTFF",
	{"Binary", "Boolean"}:   "FTTTFF",
	{"Binary", "DateTime"}:  "FTTTFF",
	{"Binary", "Guid"}:      "FTTTFF",
	{"Binary", "String"}:    "FTTTFF",
	{"String", "Int32"}:     "FTTTFF",
	{"String", "Int64"}:     "FTTTFF",
	{"String", "Double"}:    "FTTTFF",
	{"String", "Boolean"}:   "FTTTFF",
	{"String", "DateTime"}:  "FTTTFF",
	{"String", "Guid"}:      "FTTTFF",
	{"String", "Binary"}:    "FTTTFF",
}

func TestLiveMismatchedTypes(t *testing.T) {
	if len(liveMismatch) != 56 {
		t.Fatalf("matrix holds %d pairs, want 56", len(liveMismatch))
	}
	for pair, answers := range liveMismatch {
		for i, op := range liveOps {
			filter := fmt.Sprintf("Prop %s %s", op, liveConstants[pair[1]])
			e := api.NewEntity("partition", "row", map[string]api.Value{"Prop": liveProperties[pair[0]]})
			want := answers[i] == 'T'
			if got := mustParse(t, filter).Match(&e); got != want {
				t.Errorf("%s property %v, filter %q: Match = %v, live answer %v", pair[0], e.Properties["Prop"], filter, got, want)
			}
		}
	}
}

func TestLiveMatchingTypes(t *testing.T) {
	// Each row: property value, constants below / equal to / above it, and per operator the
	// live answers for those three constants.
	ordered := map[string]string{"eq": "FTF", "ne": "TFT", "lt": "FFT", "le": "FTT", "gt": "TFF", "ge": "TTF"}
	rows := []struct {
		prop      api.Value
		constants [3]string
	}{
		{api.Int32(3), [3]string{"2", "3", "4"}},
		{api.Int64(3), [3]string{"2L", "3L", "4L"}},
		{api.Double(3), [3]string{"2D", "3D", "4D"}},
		{liveProperties["DateTime"], [3]string{"datetime'2019-01-22T00:00:00Z'", "datetime'2020-01-22T00:00:00Z'", "datetime'2021-01-22T00:00:00Z'"}},
		{liveProperties["Guid"], [3]string{"guid'58260b3f-beab-45e2-b900-33e2b442e724'", "guid'" + liveGuid + "'", "guid'78260b3f-beab-45e2-b900-33e2b442e724'"}},
		{api.Binary([]byte{3}), [3]string{"x'02'", "x'03'", "x'0301'"}},
		{api.Binary([]byte{3}), [3]string{"x'02'", "x'03'", "x'04'"}},
		{api.String("b"), [3]string{"'B'", "'b'", "'bB'"}},
	}
	for _, row := range rows {
		for _, op := range liveOps {
			for i, c := range row.constants {
				filter := fmt.Sprintf("Prop %s %s", op, c)
				e := api.NewEntity("partition", "row", map[string]api.Value{"Prop": row.prop})
				want := ordered[op][i] == 'T'
				if got := mustParse(t, filter).Match(&e); got != want {
					t.Errorf("property %v, filter %q: Match = %v, live answer %v", row.prop, filter, got, want)
				}
			}
		}
	}
	// Boolean true against true / false.
	boolean := map[string]string{"eq": "TF", "ne": "FT", "lt": "FF", "le": "TF", "gt": "FT", "ge": "TT"}
	for _, op := range liveOps {
		for i, c := range []string{"true", "false"} {
			filter := fmt.Sprintf("Prop %s %s", op, c)
			e := api.NewEntity("partition", "row", map[string]api.Value{"Prop": api.Bool(true)})
			want := boolean[op][i] == 'T'
			if got := mustParse(t, filter).Match(&e); got != want {
				t.Errorf("Boolean true, filter %q: Match = %v, live answer %v", filter, got, want)
			}
		}
	}
}

// TestLiveMissingProperty: a comparison on an absent property returns nothing for every
// operator, ne included, and so does a bare property name (CloudStub
// Query_WhenUsingFilterOnNonExistentProperty_ReturnsNoEntities and
// Query_WhenUsingPropertyNameFilterOnNonExistentProperty_ReturnsNoEntities).
func TestLiveMissingProperty(t *testing.T) {
	e := api.NewEntity("partition", "row", nil)
	nullValued := api.NewEntity("partition", "row", map[string]api.Value{"Prop": api.Null(api.EdmInt32)})
	for _, c := range liveConstants {
		for _, op := range liveOps {
			f := mustParse(t, fmt.Sprintf("Prop %s %s", op, c))
			if f.Match(&e) || f.Match(&nullValued) {
				t.Errorf("%q matched an entity without Prop", f)
			}
		}
	}
	if mustParse(t, "Prop").Match(&e) {
		t.Error("a bare missing property matched")
	}
}

// TestLiveBareProperty: a bare property name matches only a Boolean true (CloudStub
// Query_WhenUsingPropertyNameFilterOnExistentProperty_ReturnsNotEntities sets BoolProp to
// false and every other type; nothing comes back).
func TestLiveBareProperty(t *testing.T) {
	for typ, v := range liveProperties {
		e := api.NewEntity("p", "r", map[string]api.Value{"Prop": v})
		want := typ == "Boolean" // true in liveProperties
		if got := mustParse(t, "Prop").Match(&e); got != want {
			t.Errorf("bare Prop on %v = %v, want %v", v, got, want)
		}
		if got := mustParse(t, "not Prop").Match(&e); got == want {
			t.Errorf("not Prop on %v = %v, want %v", v, got, !want)
		}
	}
	f := api.NewEntity("p", "r", map[string]api.Value{"Prop": api.Bool(false)})
	if mustParse(t, "Prop").Match(&f) {
		t.Error("bare Prop matched false")
	}
}

// liveFixture is CloudStub's _AddTestData: ten entities, each with at most one property.
func liveFixture() []api.Entity {
	all := make([]byte, 255)
	for i := range all {
		all[i] = byte(i)
	}
	at := time.Date(2020, 1, 4, 0, 0, 0, 0, time.UTC)
	props := []map[string]api.Value{
		{"StringProp": api.String("test")},
		{"Int32Prop": api.Int32(3)},
		{"Int64Prop": api.Int64(3)},
		{"DoubleProp": api.Double(3)},
		{"BinaryProp": api.Binary(all)},
		{"DateTimeProp": api.DateTime(at)},
		{"DateTimeOffsetProp": api.DateTime(at)},
		{"GuidProp": api.Guid("f32e99d4-05c7-4ed4-b75a-66d47e9d9e63")},
		{"BoolProp": api.Bool(true)},
		nil,
	}
	out := make([]api.Entity, len(props))
	for i, p := range props {
		out[i] = api.NewEntity(fmt.Sprintf("partition-%d", i+1), fmt.Sprintf("row-%d", i+1), p)
	}
	return out
}

func TestLiveCombinedFilters(t *testing.T) {
	all := make([]byte, 255)
	for i := range all {
		all[i] = byte(i)
	}
	binary, _ := FormatLiteral(api.Binary(all))
	conditions := []string{
		"StringProp eq 'test'", "Int32Prop eq 3", "Int64Prop eq 3L", "DoubleProp eq 3.0",
		"DateTimeProp eq datetime'2020-01-04T00:00:00Z'", "DateTimeOffsetProp eq datetime'2020-01-04T00:00:00Z'",
		"GuidProp eq guid'f32e99d4-05c7-4ed4-b75a-66d47e9d9e63'", "BoolProp", "BinaryProp eq " + binary,
	}
	negated := []string{
		"StringProp ne 'test'", "Int32Prop ne 3", "Int64Prop ne 3L", "DoubleProp ne 3.0",
		"DateTimeProp ne datetime'2020-01-04T00:00:00Z'", "DateTimeOffsetProp ne datetime'2020-01-04T00:00:00Z'",
		"GuidProp ne guid'f32e99d4-05c7-4ed4-b75a-66d47e9d9e63'", "not BoolProp", "BinaryProp ne " + binary,
	}
	tests := []struct {
		name, filter string
		want         []int // partition numbers returned live
	}{
		{"or of every type", strings.Join(conditions, " or "), []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		// The entity with no properties comes back too: not is plain negation.
		{"inverted and", "not (" + strings.Join(negated, " and ") + ")", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"or then and", "StringProp eq 'test' or Int32Prop eq 3 and Int64Prop eq 3L", []int{1}},
		{"and then or", "StringProp eq 'test' and Int32Prop eq 3 or Int64Prop eq 3L", []int{3}},
		{"two partitions", "PartitionKey eq 'partition-1' or PartitionKey eq 'partition-2'", []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, tt.filter)
			var got []int
			for i, e := range liveFixture() {
				if f.Match(&e) {
					got = append(got, i+1)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%q matched partitions %v, live answer %v", tt.filter, got, tt.want)
			}
		})
	}
}

// TestSemantics covers what the live matrix does not: the values themselves.
func TestSemantics(t *testing.T) {
	ts := time.Date(2021, 9, 21, 1, 4, 48, 453251000, time.UTC)
	e := api.NewEntity("pk", "rk", map[string]api.Value{
		"NaN":    api.Double(math.NaN()),
		"Inf":    api.Double(math.Inf(1)),
		"Big":    api.Int64(1 << 40),
		"Neg":    api.Int32(-5),
		"When":   api.DateTime(time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC)),
		"G":      api.Guid("a455c695-df98-5678-aaaa-81d3367e5a34"),
		"Bytes":  api.Binary([]byte{0x00, 0xff}),
		"Empty":  api.Binary(nil),
		"Text":   api.String("héllo"),
		"Astral": api.String("\U0001F600"),
		"Flag":   api.Bool(false),
	})
	e.Timestamp = ts
	tests := []struct {
		filter string
		want   bool
	}{
		{"NaN eq 1.0", false}, {"NaN ne 1.0", true}, {"NaN lt 1.0", false}, {"NaN ge 1.0", false},
		{"NaN gt 1", false}, {"NaN ne 1L", true},
		{"Inf gt 1e308", true}, {"Inf eq 1e308", false},
		{"Big gt 2147483647", true}, {"Big eq 1099511627776L", true}, {"Big lt 1099511627777L", true},
		{"Neg eq -5", true}, {"Neg lt -4", true}, {"-4 gt Neg", true}, {"Neg ge -5", true},
		{"When eq datetime'2008-07-10T02:00:00+02:00'", true},
		{"When eq datetime'2008-07-10'", true},
		{"When lt datetime'2008-07-10T00:00:00.0000001Z'", true},
		{"G eq guid'A455C695-DF98-5678-AAAA-81D3367E5A34'", true},
		{"G gt guid'a455c695-df98-5678-aaaa-81d3367e5a33'", true},
		{"Bytes gt X'00'", true}, {"Bytes lt X'01'", true}, {"Bytes eq X'00FF'", true},
		{"Empty eq X''", true}, {"Empty lt X'00'", true},
		{"Text gt 'hello'", true}, {"Text eq 'héllo'", true},
		{"Astral gt '\uffff'", false}, // UTF-16 order: a surrogate pair sorts below U+FFFF
		{"Flag lt true", true}, {"Flag eq false", true}, {"not Flag", true},
		{"PartitionKey eq 'pk' and RowKey eq 'rk'", true},
		{"PartitionKey gt 'pj'", true}, {"'pl' gt PartitionKey", true},
		{"RowKey ne 'rk'", false},
		{"Timestamp eq datetime'2021-09-21T01:04:48.453251Z'", true},
		{"Timestamp gt datetime'2021-09-21T01:04:48Z'", true},
		{"PartitionKey eq 5", false}, {"PartitionKey lt 5", true}, // a mismatch, as for any property
		{"TableName eq 'pk'", false},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.filter).Match(&e); got != tt.want {
			t.Errorf("%q on %v = %v, want %v", tt.filter, e, got, tt.want)
		}
	}
	if !(*Filter)(nil).Match(&e) || !mustParse(t, "").Match(&e) {
		t.Error("an empty filter must match every entity")
	}
	if mustParse(t, "a eq 1").Match(nil) {
		t.Error("a nil entity matched")
	}
}

func mustParse(t testing.TB, s string) *Filter {
	t.Helper()
	f, err := ParseFilter(s)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", s, err)
	}
	return f
}

// TestBooleanConstantInsideACondition: a bare true or false inside a larger condition is
// evaluated as its truth value, as Azurite does (the reference's choice,
// E-filter-bare-boolean-open), and renders back as written.
func TestBooleanConstantInsideACondition(t *testing.T) {
	p := api.NewEntity("p", "r", map[string]api.Value{"Name": api.String("test")})
	q := api.NewEntity("q", "r", nil)
	cases := []struct {
		filter       string
		wantP, wantQ bool
		rendered     string
	}{
		{"PartitionKey eq 'p' and true", true, false, "PartitionKey eq 'p' and true"},
		{"PartitionKey eq 'p' and false", false, false, "PartitionKey eq 'p' and false"},
		{"PartitionKey eq 'p' or true", true, true, "PartitionKey eq 'p' or true"},
		{"false or PartitionKey eq 'q'", false, true, "false or PartitionKey eq 'q'"},
		{"not false", true, true, "not false"},
		{"not (true)", false, false, "not true"},
		// Azurite's own test (tests/table/unit/query.interpreter.unit.test.ts).
		{"(true and RowKey eq 'r') and (false or PartitionKey eq 'p')", true, false, "true and RowKey eq 'r' and (false or PartitionKey eq 'p')"},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", c.filter, err)
			continue
		}
		if got := f.Match(&p); got != c.wantP {
			t.Errorf("%q on PartitionKey p = %v, want %v", c.filter, got, c.wantP)
		}
		if got := f.Match(&q); got != c.wantQ {
			t.Errorf("%q on PartitionKey q = %v, want %v", c.filter, got, c.wantQ)
		}
		if got := f.String(); got != c.rendered {
			t.Errorf("%q renders as %q, want %q", c.filter, got, c.rendered)
		}
		if !f.KeyRange().Contains("p", "r") && c.wantP {
			t.Errorf("%q: its key range leaves out a match", c.filter)
		}
	}
}
