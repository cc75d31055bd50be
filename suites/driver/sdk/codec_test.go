package sdk

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

func TestEncodeEntityAnnotatesAmbiguousTypes(t *testing.T) {
	plus2 := time.FixedZone("", 2*60*60)
	e := api.NewEntity("O'Brien", "r''k", map[string]api.Value{
		"D":   api.Double(5),
		"N":   api.Double(math.NaN()),
		"Inf": api.Double(math.Inf(-1)),
		"L":   api.Int64(1<<53 + 1),
		"I":   api.Int32(7),
		"T":   api.DateTime(time.Date(2024, 3, 1, 14, 0, 0, 123456789, plus2)),
		"G":   api.Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
		"B":   api.Binary([]byte("hi")),
		"S":   api.String("x"),
		"Z":   api.Null(api.EdmString),
	})
	body, err := encodeEntity(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	want := map[string]any{
		"PartitionKey": "O'Brien", "RowKey": "r''k", // verbatim: never doubled (EVIDENCE.md 12 #6)
		"D@odata.type": "Edm.Double", "D": 5.0,
		"N@odata.type": "Edm.Double", "N": "NaN",
		"Inf@odata.type": "Edm.Double", "Inf": "-Infinity",
		"L@odata.type": "Edm.Int64", "L": "9007199254740993",
		"I": 7.0,
		// UTC, 100 ns ticks (EVIDENCE.md 12 #4)
		"T@odata.type": "Edm.DateTime", "T": "2024-03-01T12:00:00.1234567Z",
		"G@odata.type": "Edm.Guid", "G": "0f8fad5b-d9cb-469f-a165-70867728950e",
		"B@odata.type": "Edm.Binary", "B": "aGk=",
		"S": "x",
		"Z": nil,
	}
	for k, w := range want {
		if g, ok := m[k]; !ok || g != w {
			t.Errorf("%s = %#v (present %v), want %#v", k, g, ok, w)
		}
	}
	if len(m) != len(want) {
		t.Errorf("body has %d members, want %d: %s", len(m), len(want), body)
	}
	if _, ok := m["I@odata.type"]; ok {
		t.Errorf("Int32 annotated: %s", body)
	}
}

func TestDecodeEntityTypes(t *testing.T) {
	// Annotations the SDK's EDMEntity drops (EVIDENCE.md 12 #3), unannotated shapes, system
	// properties and odata members.
	raw := `{"odata.metadata":"x","odata.etag":"W/\"datetime'2024-01-01T00%3A00%3A00Z'\"",
	"PartitionKey":"p","RowKey":"r","Timestamp":"2024-01-01T00:00:00.1234567Z",
	"A@odata.type":"Edm.Double","A":"NaN",
	"B@odata.type":"Edm.Boolean","B":true,
	"C@odata.type":"Edm.Int32","C":12,
	"D@odata.type":"Edm.String","D":"s",
	"E":5.0,"F":5,"G":1e3,"H":"text","I":false,"J":null,
	"K@odata.type":"Edm.Int64","K":"-9223372036854775808",
	"L@odata.type":"Edm.DateTime","L":"2024-03-01T14:00:00+02:00",
	"M@odata.type":"Edm.Binary","M":"AAE=",
	"N@odata.type":"Edm.Guid","N":"0F8FAD5B-D9CB-469F-A165-70867728950E",
	"O@odata.type":"Edm.Double","O":7}`
	e, err := decodeEntity([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if e.PartitionKey != "p" || e.RowKey != "r" || e.Absent != 0 {
		t.Errorf("keys %q %q absent %v", e.PartitionKey, e.RowKey, e.Absent)
	}
	if !e.Timestamp.Equal(time.Date(2024, 1, 1, 0, 0, 0, 123456700, time.UTC)) {
		t.Errorf("Timestamp %v", e.Timestamp)
	}
	if !strings.HasPrefix(e.ETag, `W/"datetime'`) {
		t.Errorf("ETag %q", e.ETag)
	}
	want := map[string]api.Value{
		"A": api.Double(math.NaN()),
		"B": api.Bool(true),
		"C": api.Int32(12),
		"D": api.String("s"),
		"E": api.Double(5),
		"F": api.Int32(5),
		"G": api.Double(1000),
		"H": api.String("text"),
		"I": api.Bool(false),
		"J": api.Null(0),
		"K": api.Int64(math.MinInt64),
		"L": api.DateTime(time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)),
		"M": api.Binary([]byte{0, 1}),
		"N": api.Guid("0F8FAD5B-D9CB-469F-A165-70867728950E"),
		"O": api.Double(7),
	}
	for k, w := range want {
		if g, ok := e.Properties[k]; !ok || !g.Equal(w) {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
	if len(e.Properties) != len(want) {
		t.Errorf("%d properties %v, want %d", len(e.Properties), e.PropertyNames(), len(want))
	}
}

func TestDecodeEntityProjectionFlagsAbsentSystemProperties(t *testing.T) {
	e, err := decodeEntity([]byte(`{"odata.etag":"x","age":3}`))
	if err != nil {
		t.Fatal(err)
	}
	want := api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp
	if e.Absent != want {
		t.Errorf("Absent = %v, want %v", e.Absent, want)
	}
}

func TestDecodeEntityRejectsBadValues(t *testing.T) {
	for _, raw := range []string{
		`{"X@odata.type":"Edm.Int64","X":"12a"}`,
		`{"X@odata.type":"Edm.Int32","X":2147483648}`,
		`{"X@odata.type":"Edm.DateTime","X":"yesterday"}`,
		`{"X@odata.type":"Edm.Binary","X":"***"}`,
		`{"X@odata.type":"Edm.Decimal","X":"1"}`,
		`{"Timestamp":"now"}`,
		`[1,2]`,
	} {
		if _, err := decodeEntity([]byte(raw)); err == nil {
			t.Errorf("decodeEntity(%s): no error", raw)
		}
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	in := api.NewEntity("a", "b", map[string]api.Value{
		"Max":  api.Int64(math.MaxInt64),
		"Pi":   api.Double(math.Pi),
		"Tiny": api.Double(5e-324),
		"Neg":  api.Double(math.Inf(1)),
		"Day":  api.DateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
		"Min":  api.Int32(math.MinInt32),
	})
	body, err := encodeEntity(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeEntity(body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range in.Properties {
		if !out.Properties[k].Equal(v) {
			t.Errorf("%s: %v -> %v", k, v, out.Properties[k])
		}
	}
}

func TestEncodeRejectsInvalidValues(t *testing.T) {
	for _, v := range []api.Value{{Type: api.EdmType(99)}, int32OutOfRange(math.MaxInt32 + 1)} {
		if _, err := encodeEntity(api.NewEntity("p", "r", map[string]api.Value{"X": v})); err == nil {
			t.Errorf("encodeEntity with %v: no error", v)
		}
	}
}

// int32OutOfRange is an Edm.Int32 value holding i, which does not fit 32 bits.
func int32OutOfRange(i int64) api.Value {
	v := api.Int64(i)
	v.Type = api.EdmInt32
	return v
}
