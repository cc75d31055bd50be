package wire

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func everyType() map[string]api.Value {
	return map[string]api.Value{
		"Str":       api.String("héllo \"quoted\" \n\t\x01 \u2028"),
		"Empty":     api.String(""),
		"Bin":       api.Binary([]byte{0, 1, 2, 0xff}),
		"BinEmpty":  api.Binary([]byte{}),
		"BoolT":     api.Bool(true),
		"BoolF":     api.Bool(false),
		"DTMin":     api.DateTime(spec.MinDateTime),
		"DTMax":     api.DateTime(spec.MaxDateTime),
		"DTFrac":    api.DateTime(time.Date(2021, 9, 21, 1, 4, 48, 453251000, time.UTC)),
		"DblWhole":  api.Double(5),
		"DblFrac":   api.Double(3.25),
		"DblNeg0":   api.Double(math.Copysign(0, -1)),
		"DblHuge":   api.Double(1e300),
		"DblTiny":   api.Double(5e-324),
		"DblMax":    api.Double(math.MaxFloat64),
		"DblNaN":    api.Double(math.NaN()),
		"DblInf":    api.Double(math.Inf(1)),
		"DblNegInf": api.Double(math.Inf(-1)),
		"Guid":      api.Guid("a455c695-df98-5678-aaaa-81d3367e5a34"),
		"I32Min":    api.Int32(math.MinInt32),
		"I32Max":    api.Int32(math.MaxInt32),
		"I64Min":    api.Int64(math.MinInt64),
		"I64Max":    api.Int64(math.MaxInt64),
		"I64Small":  api.Int64(5),
		"I64Exact":  api.Int64(9007199254740993),
	}
}

func sameEntity(t *testing.T, got, want api.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		t.Errorf("keys = (%q,%q), want (%q,%q)", got.PartitionKey, got.RowKey, want.PartitionKey, want.RowKey)
	}
	if len(got.Properties) != len(want.Properties) {
		t.Errorf("got %d properties, want %d: %v", len(got.Properties), len(want.Properties), got)
	}
	for n, w := range want.Properties {
		g, ok := got.Properties[n]
		if !ok || !g.Equal(w) {
			t.Errorf("property %s = %v, want %v", n, g, w)
		}
	}
}

func TestRequestEntityRoundTripsEveryType(t *testing.T) {
	e := api.NewEntity("p'k", "r/k", everyType())
	body, err := EncodeRequestEntity(e)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	got, err := DecodeRequestEntity(body)
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	sameEntity(t, got, e)
	if !strings.Contains(string(body), `"DblWhole@odata.type":"Edm.Double","DblWhole":5.0`) {
		t.Errorf("a whole double must be annotated and carry a decimal point: %s", body)
	}
	if !strings.Contains(string(body), `"I64Exact":"9007199254740993"`) {
		t.Errorf("Int64 must be a string: %s", body)
	}
}

func TestAnswerRoundTripsAtMinimalAndFullMetadata(t *testing.T) {
	ts := time.Date(2021, 9, 20, 21, 55, 33, 100517700, time.UTC)
	e := api.NewEntity("pk", "rk", everyType())
	e.Timestamp, e.ETag = ts, ETagForTimestamp(ts)
	for _, level := range []Metadata{MinimalMetadata, FullMetadata} {
		d := Document{Level: level, ServiceURL: "https://acct.table.core.windows.net", Account: "acct", Table: "tbl"}
		body, err := EncodeEntity(e, d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEntity(body)
		if err != nil {
			t.Fatalf("%v: decode %s: %v", level, body, err)
		}
		sameEntity(t, got, e)
		if !got.Timestamp.Equal(ts) || got.ETag != e.ETag || got.Absent != 0 {
			t.Errorf("%v: system properties = %v %q %v", level, got.Timestamp, got.ETag, got.Absent)
		}
		s := string(body)
		if !strings.HasPrefix(s, `{"odata.metadata":"https://acct.table.core.windows.net/$metadata#tbl/@Element"`) {
			t.Errorf("%v: odata.metadata: %s", level, s)
		}
		if strings.Contains(s, `"DblWhole@odata.type"`) || !strings.Contains(s, `"DblWhole":5.0`) {
			t.Errorf("%v: a whole double is answered as 5.0 without annotation (EVIDENCE.md 1.5): %s", level, s)
		}
		for _, want := range []string{`"DblNaN@odata.type":"Edm.Double","DblNaN":"NaN"`, `"DblNegInf":"-Infinity"`,
			`"DTMin@odata.type":"Edm.DateTime","DTMin":"1601-01-01T00:00:00Z"`, `"DTMax":"9999-12-31T23:59:59.9999999Z"`,
			`"DTFrac":"2021-09-21T01:04:48.453251Z"`, `"odata.etag":"W/\"datetime'2021-09-20T21%3A55%3A33.1005177Z'\""`} {
			if !strings.Contains(s, want) {
				t.Errorf("%v: want %s in %s", level, want, s)
			}
		}
		hasTSAnnotation := strings.Contains(s, `"Timestamp@odata.type":"Edm.DateTime"`)
		if hasTSAnnotation != (level == FullMetadata) {
			t.Errorf("%v: Timestamp annotation present = %v", level, hasTSAnnotation)
		}
		if level == FullMetadata {
			for _, want := range []string{`"odata.type":"acct.tbl"`, `"odata.id":"https://acct.table.core.windows.net/tbl(PartitionKey='pk',RowKey='rk')"`, `"odata.editLink":"tbl(PartitionKey='pk',RowKey='rk')"`} {
				if !strings.Contains(s, want) {
					t.Errorf("full: want %s in %s", want, s)
				}
			}
		}
	}
}

func TestNoMetadataLeavesOnlyValues(t *testing.T) {
	e := api.NewEntity("pk", "rk", map[string]api.Value{"n": api.Int64(255), "d": api.Double(2)})
	e.ETag = "W/\"x\""
	body, err := EncodeEntitySet([]api.Entity{e}, Document{Level: NoMetadata, Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"value":[{"PartitionKey":"pk","RowKey":"rk","d":2.0,"n":"255"}]}`; string(body) != want {
		t.Errorf("got %s, want %s", body, want)
	}
	got, err := DecodeEntitySet(body)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	// Without annotations an Int64 reads back as the string it is (EVIDENCE.md 3.6).
	if v := got[0].Properties["n"]; !v.Equal(api.String("255")) {
		t.Errorf("n = %v", v)
	}
	if v := got[0].Properties["d"]; !v.Equal(api.Double(2)) {
		t.Errorf("d = %v", v)
	}
}

func TestSelectShowsInMetadataAndAbsentSystemProperties(t *testing.T) {
	e := api.Entity{Properties: map[string]api.Value{"age": api.Int32(3)}, Absent: api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp, ETag: "W/\"1\""}
	body, err := EncodeEntitySet([]api.Entity{e}, Document{ServiceURL: "https://a.table.core.windows.net/", Table: "tbl", Select: []string{"age", "sex"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"odata.metadata":"https://a.table.core.windows.net/$metadata#tbl&$select=age,sex","value":[{"odata.etag":"W/\"1\"","age":3}]}`
	if string(body) != want {
		t.Errorf("got  %s\nwant %s", body, want)
	}
	got, _ := DecodeEntitySet(body)
	if got[0].Absent != api.AbsentPartitionKey|api.AbsentRowKey|api.AbsentTimestamp {
		t.Errorf("absent = %v", got[0].Absent)
	}
}

func TestInferenceOfUnannotatedValues(t *testing.T) {
	cases := map[string]api.Value{
		`5`:           api.Int32(5),
		`-2147483648`: api.Int32(math.MinInt32),
		`2147483648`:  api.Double(2147483648),
		`933311100`:   api.Int32(933311100),
		`5.0`:         api.Double(5),
		`1e3`:         api.Double(1000),
		`"5"`:         api.String("5"),
		`true`:        api.Bool(true),
		`null`:        api.Null(0),
	}
	for raw, want := range cases {
		got, err := DecodeValue(json.RawMessage(raw))
		if err != nil || !got.Equal(want) {
			t.Errorf("DecodeValue(%s) = %v, %v; want %v", raw, got, err, want)
		}
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) || se.Code != code {
		t.Errorf("err = %v, want code %s", err, code)
	}
}

func TestDecodeRejectsBadInput(t *testing.T) {
	cases := []struct{ body, code string }{
		{``, "InvalidInput"},
		{`{`, "InvalidInput"},
		{`[]`, "InvalidInput"},
		{`{"a":1} {}`, "InvalidInput"},
		{`{"a":1,"a":2}`, "DuplicatePropertiesSpecified"},
		{`{"a@odata.type":"Edm.Int64","a@odata.type":"Edm.Int64","a":"1"}`, "DuplicatePropertiesSpecified"},
		{`{"a":{"b":1}}`, "InvalidInput"},
		{`{"a":[1]}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Foo","a":"1"}`, "InvalidInput"},
		{`{"a@odata.type":5,"a":"1"}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Int64"}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Int64","a":"12x"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Int64","a":"9223372036854775808"}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Int64","a":"+1"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Int32","a":"1.5"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Int32","a":" 1"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Double","a":"0x1p3"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Double","a":"inf"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Boolean","a":"yes"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Guid","a":5}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.DateTime","a":"2020-01-01T00:00:00.Z"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.DateTime","a":"2020-01-01T00"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Int32","a":2147483648}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Double","a":"nan"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Double","a":1e400}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Double","a":"13e7705"}`, "InvalidInput"},
		{`{"a":-1e400}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.DateTime","a":""}`, "InvalidInput"},
		{`{"a@odata.type":"Edm.Boolean","a":1}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Guid","a":"not-a-guid"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.Binary","a":"***"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.DateTime","a":"2020-13-01T00:00:00Z"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.DateTime","a":"2020-02-30"}`, "InvalidValueType"},
		{`{"a@odata.type":"Edm.DateTime","a":"1600-12-31T23:59:59Z"}`, "OutOfRangeInput"},
		{`{"a@odata.type":"Edm.String","a":5}`, "InvalidValueType"},
		{`{"PartitionKey":5}`, "InvalidInput"},
		{`{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"x"}`, "InvalidInput"},
	}
	for _, c := range cases {
		_, err := DecodeRequestEntity([]byte(c.body))
		if err == nil {
			t.Errorf("%s: accepted", c.body)
			continue
		}
		wantCode(t, err, c.code)
	}
}

func TestParseDateTimeForms(t *testing.T) {
	cases := map[string]time.Time{
		"2008-07-10":                        time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC),
		"2008-07-10T10:20Z":                 time.Date(2008, 7, 10, 10, 20, 0, 0, time.UTC),
		"2008-07-10T10:20:30.1Z":            time.Date(2008, 7, 10, 10, 20, 30, 1e8, time.UTC),
		"2008-07-10T10:20:30.1234567Z":      time.Date(2008, 7, 10, 10, 20, 30, 123456700, time.UTC),
		"2008-07-10T10:20:30+02:00":         time.Date(2008, 7, 10, 8, 20, 30, 0, time.UTC),
		"2008-07-10T23:20:30-23:59":         time.Date(2008, 7, 11, 23, 19, 30, 0, time.UTC),
		"1601-01-01T00:00:00Z":              spec.MinDateTime,
		"9999-12-31T23:59:59.9999999Z":      spec.MaxDateTime,
		"1601-01-01T01:00:00+01:00":         spec.MinDateTime,
		"2000-02-29T00:00:00.0000000Z":      time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		"2021-09-21T01:04:48.453251Z":       time.Date(2021, 9, 21, 1, 4, 48, 453251000, time.UTC),
		"1973-10-04T00:00:00.000000Z":       time.Date(1973, 10, 4, 0, 0, 0, 0, time.UTC),
		"2024-01-01T00:00:00.0000001+00:00": time.Date(2024, 1, 1, 0, 0, 0, 100, time.UTC),
	}
	for in, want := range cases {
		got, err := ParseDateTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseDateTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"2008-07-10T10:20:30+24:00", "2008-07-10T10:20:30.Z", "2008-7-10", "2008-07-10T25:00Z", "10000-01-01", "9999-12-31T23:59:59-01:00"} {
		if _, err := ParseDateTime(in); err == nil {
			t.Errorf("ParseDateTime(%q) accepted", in)
		}
	}
}

func TestTablesEncodeAndDecode(t *testing.T) {
	d := Document{Level: FullMetadata, ServiceURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1"}
	body := EncodeTable("mytable", d)
	want := `{"odata.metadata":"http://127.0.0.1:10002/devstoreaccount1/$metadata#Tables/@Element","odata.type":"devstoreaccount1.Tables","odata.id":"http://127.0.0.1:10002/devstoreaccount1/Tables('mytable')","odata.editLink":"Tables('mytable')","TableName":"mytable"}`
	if string(body) != want {
		t.Errorf("got  %s\nwant %s", body, want)
	}
	set := EncodeTableSet([]string{"a1b", "c2d"}, Document{ServiceURL: "https://x.table.core.windows.net/"})
	names, err := DecodeTableSet(set)
	if err != nil || strings.Join(names, ",") != "a1b,c2d" {
		t.Errorf("DecodeTableSet(%s) = %v, %v", set, names, err)
	}
	if n, err := DecodeTableName(EncodeTableRequest("abc")); n != "abc" || err != nil {
		t.Errorf("DecodeTableName = %q, %v", n, err)
	}
	if _, err := DecodeTableName([]byte(`{}`)); err == nil {
		t.Error("a body without TableName was accepted")
	}
}

func TestNegotiateMetadata(t *testing.T) {
	cases := []struct {
		accept, format string
		want           Metadata
		code           string
	}{
		{"application/json;odata=nometadata", "", NoMetadata, ""},
		{"application/json; odata=fullmetadata", "", FullMetadata, ""},
		{"application/json", "", MinimalMetadata, ""},
		{"", "", MinimalMetadata, ""},
		{"*/*", "", MinimalMetadata, ""},
		{"application/atom+xml", "", MinimalMetadata, "AtomFormatNotSupported"},
		{"application/json;odata=nometadata", "application/json;odata=fullmetadata", FullMetadata, ""},
		{"", "json", MinimalMetadata, ""},
		{"", "atom", MinimalMetadata, "AtomFormatNotSupported"},
	}
	for _, c := range cases {
		got, err := NegotiateMetadata(c.accept, c.format)
		if c.code != "" {
			wantCode(t, err, c.code)
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NegotiateMetadata(%q,%q) = %v, %v; want %v", c.accept, c.format, got, err, c.want)
		}
	}
}

func TestETagTimestamp(t *testing.T) {
	ts := time.Date(2021, 9, 20, 21, 55, 33, 100517700, time.UTC)
	etag := ETagForTimestamp(ts)
	if etag != `W/"datetime'2021-09-20T21%3A55%3A33.1005177Z'"` {
		t.Errorf("etag = %s", etag)
	}
	if got, ok := TimestampFromETag(etag); !ok || !got.Equal(ts) {
		t.Errorf("TimestampFromETag = %v, %v", got, ok)
	}
	if _, ok := TimestampFromETag(`W/"0x5B168C7B6E589D2"`); ok {
		t.Error("an opaque ETag was read as a time")
	}
}

// TestEntityValuesTakeWhatStorageAccepts checks the leniencies of EVIDENCE.md 13: a
// DateTime without a zone is UTC, digits beyond 100 ns are cut, numbers and Booleans may
// come as JSON strings, and an annotation of an annotation is ignored; header and ACL
// times (ParseDateTime) stay strict.
func TestEntityValuesTakeWhatStorageAccepts(t *testing.T) {
	cases := []struct {
		body string
		want api.Value
	}{
		{`{"a@odata.type":"Edm.DateTime","a":"2012-01-02T23:00:00"}`, api.DateTime(time.Date(2012, 1, 2, 23, 0, 0, 0, time.UTC))},
		{`{"a@odata.type":"Edm.DateTime","a":"2012-01-02T23:00"}`, api.DateTime(time.Date(2012, 1, 2, 23, 0, 0, 0, time.UTC))},
		{`{"a@odata.type":"Edm.DateTime","a":"2012-01-02T23:00:00.123"}`, api.DateTime(time.Date(2012, 1, 2, 23, 0, 0, 123e6, time.UTC))},
		{`{"a@odata.type":"Edm.DateTime","a":"2021-04-01T01:01:01.000000001Z"}`, api.DateTime(time.Date(2021, 4, 1, 1, 1, 1, 0, time.UTC))},
		{`{"a@odata.type":"Edm.DateTime","a":"2021-04-01T01:01:01.12345678999+01:00"}`, api.DateTime(time.Date(2021, 4, 1, 0, 1, 1, 123456700, time.UTC))},
		{`{"a@odata.type":"Edm.Int32","a":"12345"}`, api.Int32(12345)},
		{`{"a@odata.type":"Edm.Int32","a":"-32"}`, api.Int32(-32)},
		{`{"a@odata.type":"Edm.Int64","a":1152921504606846976}`, api.Int64(1152921504606846976)},
		{`{"a@odata.type":"Edm.Double","a":"3.14"}`, api.Double(3.14)},
		{`{"a@odata.type":"Edm.Double","a":"1.23456789012346e+24"}`, api.Double(1.23456789012346e+24)},
		{`{"a@odata.type":"Edm.Boolean","a":"False"}`, api.Bool(false)},
		{`{"a@odata.type":"Edm.Boolean","a":"true"}`, api.Bool(true)},
		{`{"a@odata.type":"Edm.String","a@odata.type@odata.type":"Edm.String","a":"x"}`, api.String("x")},
	}
	for _, c := range cases {
		e, err := DecodeRequestEntity([]byte(c.body))
		if err != nil {
			t.Errorf("%s: %v", c.body, err)
			continue
		}
		if got := e.Properties["a"]; !got.Equal(c.want) {
			t.Errorf("%s: read %v, want %v", c.body, got, c.want)
		}
		if len(e.Properties) != 1 {
			t.Errorf("%s: properties %v, want only a", c.body, e.Properties)
		}
	}
	e, err := DecodeRequestEntity([]byte(`{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","PartitionKey@odata.type@odata.type":"Edm.String","RowKey":"r"}`))
	if err != nil || e.PartitionKey != "p" || len(e.Properties) != 0 {
		t.Errorf("nested annotation of a key: %+v, %v", e, err)
	}
	for _, in := range []string{"2012-01-02T23:00:00", "2021-04-01T01:01:01.000000001Z"} {
		if _, err := ParseDateTime(in); err == nil {
			t.Errorf("ParseDateTime(%q) accepted; header and ACL times stay strict", in)
		}
	}
}

// TestExponentDoublesAreNotAnnotated: a Double written in exponent form reads as a Double
// without an annotation, so Storage sends none (E-double-exponent); whole numbers written
// without a fraction still need one.
func TestExponentDoublesAreNotAnnotated(t *testing.T) {
	for _, c := range []struct {
		v         float64
		annotated bool
	}{{math.SmallestNonzeroFloat64, false}, {1e-7, false}, {1e21, false}, {-1.5e300, false}, {2.5e-7, false}, {5, false}, {math.Inf(1), true}, {math.NaN(), true}} {
		body, err := EncodeEntity(api.NewEntity("p", "r", map[string]api.Value{"D": api.Double(c.v)}), Document{Level: MinimalMetadata, ServiceURL: "http://h/acct", Table: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(body), `"D@odata.type"`); got != c.annotated {
			t.Errorf("%v: annotated = %v, want %v: %s", c.v, got, c.annotated, body)
		}
		back, err := DecodeEntity(body)
		if err != nil {
			t.Fatalf("%v: %v", c.v, err)
		}
		if v := back.Properties["D"]; v.Type != api.EdmDouble {
			t.Errorf("%v: read back as %v", c.v, v.Type)
		}
	}
}
