package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// sameOutcome fails unless two decodings both failed with the same *spec.Error code and
// status, or both succeeded with deeply equal results.
func sameOutcome(t *testing.T, what string, input []byte, got, want any, gotErr, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s(%q): error %v, oracle %v", what, input, gotErr, wantErr)
	}
	if gotErr != nil {
		var g, w *spec.Error
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) {
			t.Fatalf("%s(%q): errors %v and %v are not both *spec.Error", what, input, gotErr, wantErr)
		}
		if g.Code != w.Code || g.Status != w.Status {
			t.Fatalf("%s(%q): error %s %q, oracle %s %q", what, input, g.Code, g.Message, w.Code, w.Message)
		}
		return
	}
	if !equalDecoded(got, want) {
		t.Fatalf("%s(%q):\n got    %#v\n oracle %#v", what, input, got, want)
	}
}

// equalDecoded compares decoded results, NaN doubles included.
func equalDecoded(a, b any) bool {
	switch x := a.(type) {
	case api.Entity:
		y := b.(api.Entity)
		if x.PartitionKey != y.PartitionKey || x.RowKey != y.RowKey || x.ETag != y.ETag || x.Absent != y.Absent || !x.Timestamp.Equal(y.Timestamp) || len(x.Properties) != len(y.Properties) {
			return false
		}
		for n, v := range x.Properties {
			w, ok := y.Properties[n]
			if !ok || !(v.Equal(w) || (v.Null && w.Null && v.Type == w.Type)) || v.Type != w.Type {
				return false
			}
		}
		return true
	case []api.Entity:
		y := b.([]api.Entity)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalDecoded(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func checkAgainstOracle(t *testing.T, body []byte) {
	e, err := DecodeEntity(body)
	oe, oerr := oracleDecodeEntity(body)
	sameOutcome(t, "DecodeEntity", body, e, oe, err, oerr)
	e, err = DecodeRequestEntity(body)
	oe, oerr = oracleDecodeRequestEntity(body)
	sameOutcome(t, "DecodeRequestEntity", body, e, oe, err, oerr)
	es, err := DecodeEntitySet(body)
	oes, oerr := oracleDecodeEntitySet(body)
	sameOutcome(t, "DecodeEntitySet", body, es, oes, err, oerr)
	n, err := DecodeTableName(body)
	on, oerr := oracleDecodeTableName(body)
	sameOutcome(t, "DecodeTableName", body, n, on, err, oerr)
	ns, err := DecodeTableSet(body)
	ons, oerr := oracleDecodeTableSet(body)
	sameOutcome(t, "DecodeTableSet", body, ns, ons, err, oerr)
	if json.Valid(body) { // DecodeValue's input is one JSON value
		v, err := DecodeValue(body)
		ov, oerr := oracleDecodeValue(body)
		sameOutcome(t, "DecodeValue", body, api.Entity{Properties: map[string]api.Value{"v": v}}, api.Entity{Properties: map[string]api.Value{"v": ov}}, err, oerr)
	}
}

// oracleSeeds are documents that reach every branch of the decoders: annotations of every
// type, inference, escapes, invalid UTF-8, duplicates, syntax errors at every position.
var oracleSeeds = []string{
	`{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Int64","n":"5","d":1.5,"b":true}`,
	`{"a@odata.type":"Edm.DateTime","a":"2020-01-01T00:00:00.1234567+01:00"}`,
	`{"a@odata.type":"Edm.Binary","a":"AAE="}`,
	`{"odata.etag":"W/\"x\"","Timestamp":"2020-01-01T00:00:00Z","PartitionKey":"p\u00e9\ud83d\ude00","RowKey":"\ud800x"}`,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":1,"a":2,`, `{"a":"\xff","b":"\xfe"}`, `{"\xff":1,"\xfe":2}`,
	`{"a":01}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1 "b":2}`, `{} x`, `{}{}`, ` {} `, `[]`, `"x"`, ``, `nul`,
	`{"value":[{"PartitionKey":"a","RowKey":"b","x":1},{"PartitionKey":"c","RowKey":"d","x@odata.type":"Edm.Guid","x":"00000000-0000-0000-0000-000000000000"}]}`,
	`{"value":[{"a":1,"a":2},{"b":{]}`, `{"value":[1,{"a":1}]}`, `{"value":null}`, `{"value":{}}`, `{"value":"x"}`, `{"value":[],"value":[]}`,
	`{"odata.metadata":"x","value":[{"TableName":"t"},{"TableName":null},{"TableName":5}]}`,
	`{"TableName":"t"}`, `{"TableName":null}`, `{"x@odata.type":"Edm.Int32"}`, `{"@odata.type":"Edm.Int32","":5}`,
	`{"x@odata.type":null,"x":1}`, `{"x@odata.type":"Edm.Foo","x":1}`, `{"x@odata.type":5,"x":1}`,
	`{"x":{"a":[1,2,{"b":null}]}}`, `{"x@foo":{"a":1,"a":2}}`, `{"x":1e400}`, `{"x":-0}`, `{"x":2147483648}`, `{"x":-2147483648}`,
	`{"x@odata.type":"Edm.Double","x":"NaN"}`, `{"x@odata.type":"Edm.Double","x":"-Infinity"}`, `{"x@odata.type":"Edm.Int64","x":9223372036854775808}`,
	`{"x@odata.type":"Edm.Int64","x":"+1"}`, `{"x@odata.type":"Edm.Boolean","x":"true"}`, `{"x@odata.type":"Edm.DateTime","x":"1600-01-01T00:00:00Z"}`,
	`{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"p"}`, `{"PartitionKey":5}`, `{"PartitionKey":null,"RowKey":null,"Timestamp":null}`,
	`{"odata.etag":5}`, `{"odata.etag":null}`, `{"a":"\u0000\b\f\n\r\t\/\\\""}`, `{"a":"\ud83d"}`, `{"a":"\ude00\ud83d"}`, `{"a":"\ud83d\u0041"}`,
	`{"a":"x\u00"}`, `{"a":"x\q"}`, "{\"a\":\"x\ny\"}", `{"a":tru}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":"` + "\xed\xa0\x80" + `"}`,
	`"abc`, `"a\"b"`, `"a" x`, `  "ab"  `, `tru`, `12x`,
}

func TestDecodeMatchesOracle(t *testing.T) {
	for _, s := range oracleSeeds {
		checkAgainstOracle(t, []byte(s))
	}
	// Nesting at and past the limit, in an entity and in a set item.
	for _, depth := range []int{maxNesting - 3, maxNesting - 2, maxNesting - 1, maxNesting, maxNesting + 1} {
		deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		checkAgainstOracle(t, []byte(`{"x@a":`+deep+`}`))
		checkAgainstOracle(t, []byte(`{"value":[{"x@a":`+deep+`}]}`))
	}
	// Many members: the duplicate and annotation checks switch to maps.
	var b strings.Builder
	b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; i < 300; i++ {
		n := "p" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		b.WriteString(`,"` + n + `@odata.type":"Edm.Int64","` + n + `":"1"`)
	}
	checkAgainstOracle(t, []byte(b.String()+"}"))
	checkAgainstOracle(t, []byte(b.String()+`,"PartitionKey":"q"}`))
	checkAgainstOracle(t, []byte(b.String()+`,"zz@odata.type":"Edm.Int64"}`))
}

// FuzzDecodeMatchesOracle checks the single-pass decoder against the token-by-token one
// it replaced: the same documents decode to the same results, the others fail with the
// same error codes.
func FuzzDecodeMatchesOracle(f *testing.F) {
	for _, s := range oracleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkAgainstOracle(t, body) })
}

// TestDecodedEntitySharesNothingWithBody checks the contract servers rely on to reuse body
// buffers: overwriting the body leaves the decoded entity unchanged.
func TestDecodedEntitySharesNothingWithBody(t *testing.T) {
	body := []byte(`{"PartitionKey":"pk","RowKey":"rk","s":"plain","u":"\u00e9t\u00e9","b@odata.type":"Edm.Binary","b":"AAE=","g@odata.type":"Edm.Guid","g":"00000000-0000-0000-0000-000000000001"}`)
	e, err := DecodeRequestEntity(body)
	if err != nil {
		t.Fatal(err)
	}
	want := e.Clone()
	for i := range body {
		body[i] = 'x'
	}
	if !equalDecoded(e, want) || e.PartitionKey != "pk" || e.Properties["s"].Str != "plain" {
		t.Fatalf("the entity changed with its body: %v, was %v", e, want)
	}
}
