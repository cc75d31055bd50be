package matchers

import (
	"math"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

func TestValueRoundTripRuleNamesOnlyAValueComeBackInAnotherForm(t *testing.T) {
	at := time.Date(2020, 1, 22, 0, 0, 0, 1234567, time.UTC)
	cases := []struct {
		name      string
		want, got api.Value
		rule      string
	}{
		{"an Int32 as an Int64 of the same number", api.Int32(5), api.Int64(5), "types.int32.round-trip"},
		{"an Int32 as an Int64 of another number", api.Int32(5), api.Int64(6), ""},
		{"an Int64 as an Int32 of the same number", api.Int64(7), api.Int32(7), "types.int64.round-trip"},
		{"an Int64 as the String of its digits", api.Int64(7), api.String("7"), "types.int64.round-trip"},
		{"an Int64 as another String", api.Int64(7), api.String("seven"), ""},
		{"a Boolean as the Int32 1", api.Bool(true), api.Int32(1), "types.boolean.round-trip"},
		{"true as the Int32 0", api.Bool(true), api.Int32(0), ""},
		{"a whole Double as an Int32", api.Double(5), api.Int32(5), "types.double.round-trip"},
		{"a -0 Double as the Int32 0", api.Double(math.Copysign(0, -1)), api.Int32(0), ""},
		{"a DateTime cut to milliseconds", api.DateTime(at), api.DateTime(at.Truncate(time.Millisecond)), "types.datetime.round-trip"},
		{"a DateTime moved by an hour", api.DateTime(at), api.DateTime(at.Add(time.Hour)), ""},
		{"a DateTime as its text", api.DateTime(at), api.String(api.FormatDateTime(at)), "types.datetime.round-trip"},
		{"a Binary as its base64 text", api.Binary([]byte{1, 2}), api.String("AQI="), "types.binary.round-trip"},
		{"a String as an Int32", api.String("5"), api.Int32(5), ""},
		{"a value as itself", api.Int32(5), api.Int32(5), ""},
		{"a null", api.Null(api.EdmInt32), api.Int64(0), ""},
	}
	for _, c := range cases {
		rule, ok := valueRoundTripRule(c.want, c.got)
		if rule != c.rule || ok != (c.rule != "") {
			t.Errorf("%s: got %q, %v; want %q", c.name, rule, ok, c.rule)
		}
	}
}
