package wire

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// The flat reader (readFlatEntity) must decode every body it takes as the general reader
// does, and DecodeRequestEntityListed must give the general reader's entity or error for
// every body. These tests hold both to that on hand-picked edge cases, on every truncation
// of a sample, on bodies made at random from a fixed seed, and under fuzzing.

// benchmarkBody is the body of the SDK ceiling's insert and merge-upsert.
var benchmarkBody = `{"Data":"` + benchmarkData + `","PartitionKey":"w","RowKey":"i00-1-0000000000","Seq":"0","Seq@odata.type":"Edm.Int64"}`

var benchmarkData = strings.Repeat("0123456789abcdefghijk", 10) + "0123456789"

// flatBodies are bodies in the flat form: the flat reader must take each.
var flatBodies = []string{
	benchmarkBody,
	`{}`,
	" \t\r\n{ \t\r\n} \t\r\n",
	`{"PartitionKey":"p","RowKey":"r"}`,
	` { "PartitionKey" : "p" , "RowKey" : "r" , "n" : 5 , "n@odata.type" : "Edm.Int64" } `,
	`{"n@odata.type":"Edm.Int64","n":"5","PartitionKey":"p","RowKey":"r"}`,
	`{"PartitionKey":null,"RowKey":null,"x":null,"y@odata.type":"Edm.Double","y":null}`,
	`{"PartitionKey":"p","RowKey":"r","Timestamp":"2024-01-01T00:00:00Z","Timestamp@odata.type":"Edm.DateTime"}`,
	`{"PartitionKey":"p","RowKey":"r","Timestamp":"not a time"}`,
	`{"PartitionKey@odata.type":"Edm.String","PartitionKey":"p","RowKey":"r"}`,
	`{"name":"ä ß 中文 😀"}`,
	`{"i":2147483647,"j":-2147483648,"k":2147483648,"l":-2147483649,"m":-0,"o":0.5,"p":1e3,"q":-1.5E-3,"r":12345678901234567890}`,
	`{"t":true,"f":false,"z":0}`,
	`{"b@odata.type":"Edm.Boolean","b":"False","g@odata.type":"Edm.Guid","g":"c9da6455-213d-42c9-9a79-3e9149a57833"}`,
	`{"d@odata.type":"Edm.Double","d":"NaN","e@odata.type":"Edm.Double","e":"-Infinity","x@odata.type":"Edm.Binary","x":"AQID"}`,
	`{"":"empty name","@odata.type":"Edm.String"}`,
	`{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9","j":"10","k":"11","l":"12","m":"13","n":"14","o":"15","p":"16"}`,
}

// edgeBodies are bodies either reader may take; every one is compared.
var edgeBodies = []string{
	// white space, and characters JSON does not count as white space
	"{\"a\":1\f}", "{\"a\":1\v}", "\u00a0{}", "{\"a\" \n:\n 1\n}\n",
	// duplicates
	`{"a":1,"a":2}`, `{"a":1,"b":2,"a":1}`, `{"PartitionKey":"p","PartitionKey":"p"}`,
	`{"a@odata.type":"Edm.Int32","a":1,"a@odata.type":"Edm.Int32"}`,
	`{"a@odata.type":"Edm.Int32","a@odata.type":"Edm.Int64","a":1}`,
	`{"a":1,"a@odata.type":"Edm.Int32","a":1}`,
	// annotations before, after and without their property
	`{"a@odata.type":"Edm.Int64","a":"1"}`, `{"a":"1","a@odata.type":"Edm.Int64"}`,
	`{"a@odata.type":"Edm.Int64"}`, `{"a@odata.type":"Edm.Int64","b":"1"}`,
	`{"a@odata.type":"Edm.Int64","a@odata.type@odata.type":"Edm.String","a":"1"}`,
	`{"a@odata.type@odata.type":"x","a":"1"}`, `{"a@odata.typ":"Edm.Int64","a":"1"}`,
	`{"a@b":1}`, `{"@":1}`, `{"a@odata.type":1,"a":1}`, `{"a@odata.type":null,"a":1}`,
	`{"a@odata.type":"Edm.Unknown","a":1}`, `{"a@odata.type":"edm.int32","a":1}`,
	`{"a@odata.type":"","a":1}`, `{"a@odata.type":"Edm.Int32 ","a":1}`,
	`{"a@odata.type":"Edm.\u0049nt32","a":1}`, `{"a@odata.type":{},"a":1}`,
	`{"odata.x@odata.type":"Edm.Int32","odata.x":1}`, `{"@odata.type":"Edm.Int32"}`,
	`{"@odata.type":"Edm.Int32","":1}`, `{"@odata.type":"Edm.Int32","":"x"}`,
	// keys
	`{"PartitionKey":1,"RowKey":"r"}`, `{"PartitionKey":"p","RowKey":true}`,
	`{"PartitionKey":{},"RowKey":"r"}`, `{"PartitionKey":[],"RowKey":"r"}`,
	`{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"1","RowKey":"r"}`,
	`{"PartitionKey@odata.type":"Edm.String","PartitionKey":null,"RowKey":"r"}`,
	`{"RowKey@odata.type":"Edm.String","RowKey":1}`, `{"PartitionKey":"\u0070"}`,
	`{"PartitionKey":"p\u0000q","RowKey":"r"}`, `{"PartitionKey":"","RowKey":""}`,
	// Timestamp and odata members
	`{"Timestamp":{"a":1}}`, `{"Timestamp":[1,2]}`, `{"Timestamp@odata.type":"Edm.Int32","Timestamp":"x"}`,
	`{"Timestamp@odata.type":"Edm.Nope","Timestamp":"x"}`,
	`{"odata.etag":"W/\"x\"","a":1}`, `{"odata.etag":1}`, `{"odata.type":"acct.t","a":1}`,
	`{"odata.metadata":"https://h/$metadata#t/@Element","a":1}`, `{"odata.":1}`, `{"odata":1}`,
	// escapes, non-ASCII and control characters in names and values
	`{"n\u0061me":1}`, `{"na\"me":1}`, `{"näme":1}`, "{\"na\x01me\":1}", "{\"na\xffme\":1}",
	`{"a":"\u00e4"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud83d"}`, `{"a":"x\/y"}`, `{"a":"\q"}`,
	"{\"a\":\"\x7f\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\t\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}",
	"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"ok\xc3\xa4ok\"}", "{\"" + strings.Repeat("x", 40) + "\xc3\xa4\":1}",
	`{"a@odata.type":"Edm.String","a":"\u00e4"}`, `{"a@odata.type":"Edm.Binary","a":"AQ\u003d\u003d"}`,
	// nested objects and arrays
	`{"a":{}}`, `{"a":[]}`, `{"a":{"b":1}}`, `{"a":[1,{"b":[2]}]}`, `{"a@odata.type":"Edm.String","a":{}}`,
	`{"a":[}`, `{"a":{"b":1,"b":2}}`, `[]`, `[{"a":1}]`, `"x"`, `1`, `null`, `true`, ``, ` `,
	// numbers
	`{"a":2147483647}`, `{"a":2147483648}`, `{"a":-2147483648}`, `{"a":-2147483649}`,
	`{"a":9223372036854775807}`, `{"a":9223372036854775808}`, `{"a":-9223372036854775809}`,
	`{"a":123456789012345678901234567890}`, `{"a":1e308}`, `{"a":1e309}`, `{"a":-1e309}`, `{"a":1e-400}`,
	`{"a":-0}`, `{"a":-0.0}`, `{"a":0e0}`, `{"a":1E+2}`, `{"a":1e-2}`, `{"a":01}`, `{"a":1.}`,
	`{"a":.5}`, `{"a":-}`, `{"a":+1}`, `{"a":1e}`, `{"a":1e+}`, `{"a":0x10}`, `{"a":NaN}`,
	`{"a":Infinity}`, `{"a":tru}`, `{"a":nul}`, `{"a":falsey}`, `{"a":true1}`,
	// trailing garbage and broken structure
	`{}x`, `{} {}`, `{"a":1}}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":1 "b":2}`, `{"a"}`,
	`{a:1}`, `{'a':1}`, `{"a":1`, `{"a":`, `{"a"`, `{"`, `{`, "{\"a\":1}\x00",
}

// typedValues are good and bad values for each EDM type, bare and as strings.
var typedValues = map[string][]string{
	"Edm.String":   {`"s"`, `""`, `1`, `true`, `"ä"`, `"\u00e4"`},
	"Edm.Boolean":  {`true`, `false`, `"True"`, `"FALSE"`, `"yes"`, `1`, `"1"`},
	"Edm.Int32":    {`1`, `"1"`, `-2147483648`, `"2147483647"`, `2147483648`, `"-2147483649"`, `"1.0"`, `1.5`, `"x"`, `"-"`, `""`, `"+1"`, `" 1"`},
	"Edm.Int64":    {`"0"`, `"-9223372036854775808"`, `"9223372036854775807"`, `"9223372036854775808"`, `"99999999999999999999"`, `5`, `"5.0"`, `"x"`, `""`, `"-"`, `"007"`},
	"Edm.Double":   {`1.5`, `"1.5"`, `"NaN"`, `"Infinity"`, `"-Infinity"`, `"nan"`, `"inf"`, `1e400`, `"1e400"`, `"-0"`, `-0`, `"1."`, `"x"`, `true`},
	"Edm.DateTime": {`"2024-01-01T00:00:00Z"`, `"2024-01-01T00:00:00.123456789Z"`, `"2024-01-01T00:00:00"`, `"2024-01-01T00:00"`, `""`, `"1600-12-31T23:59:59Z"`, `"10000-01-01T00:00:00Z"`, `"x"`, `1`},
	"Edm.Guid":     {`"c9da6455-213d-42c9-9a79-3e9149a57833"`, `"C9DA6455-213D-42C9-9A79-3E9149A57833"`, `"c9da6455213d42c99a793e9149a57833"`, `"x"`, `1`},
	"Edm.Binary":   {`"AQID"`, `""`, `"AQI="`, `"AQI"`, `"!!!!"`, `1`},
}

func TestFlatReaderTakesTheCommonForm(t *testing.T) {
	for _, body := range flatBodies {
		if !checkFlatReader(t, []byte(body)) {
			t.Errorf("the flat reader did not take %q", body)
		}
	}
	// Plain text is told: an answer then copies names and String values as they are.
	for body, plain := range map[string]bool{
		benchmarkBody: true,
		`{"PartitionKey":"é","RowKey":"r","A":"x"}`:                                       false, // any string value not ASCII, a key's too
		`{"PartitionKey":"p","RowKey":"r","A":"é"}`:                                       false,
		`{"PartitionKey":"p","RowKey":"r","A":"x","B":1,"C":true,"D":null,"E":"~\u007f"}`: false, // an escape: the general reader
	} {
		e, err := DecodeRequestEntityListed([]byte(body), nil)
		if err != nil || e.PlainText != plain {
			t.Errorf("DecodeRequestEntityListed(%q): PlainText %v, %v; want %v", body, e.PlainText, err, plain)
		}
	}
}

func TestFlatReaderMatchesGeneralReaderOnEdgeCases(t *testing.T) {
	for _, body := range edgeBodies {
		checkFlatReader(t, []byte(body))
	}
	for typ, values := range typedValues {
		for _, v := range values {
			for _, body := range []string{
				`{"PartitionKey":"p","RowKey":"r","v@odata.type":"` + typ + `","v":` + v + `}`,
				`{"v":` + v + `,"v@odata.type":"` + typ + `"}`,
				`{"v":` + v + `}`,
				`{"PartitionKey@odata.type":"` + typ + `","PartitionKey":` + v + `}`,
				`{"Timestamp@odata.type":"` + typ + `","Timestamp":` + v + `}`,
			} {
				checkFlatReader(t, []byte(body))
			}
		}
	}
}

// Every prefix of a sample, and the sample with each byte replaced, decodes alike.
func TestFlatReaderMatchesGeneralReaderOnDamagedBodies(t *testing.T) {
	samples := []string{
		benchmarkBody,
		` { "PartitionKey" : "p" , "n@odata.type" : "Edm.Int64" , "n" : "-12" , "d" : -1.5e+3 , "b" : true , "z" : null } `,
	}
	for _, sample := range samples {
		for i := range len(sample) + 1 {
			checkFlatReader(t, []byte(sample[:i]))
		}
		for i := range len(sample) {
			for _, c := range []byte{'"', '\\', '@', ',', ':', '}', '{', '[', 'x', '0', ' ', 0x01, 0xc3} {
				b := []byte(sample)
				b[i] = c
				checkFlatReader(t, b)
			}
		}
	}
}

// Bodies put together at random from the pieces above, with white space, duplicates and
// damage, decode alike. The seed is fixed; a failure names the body.
func TestFlatReaderMatchesGeneralReaderOnRandomBodies(t *testing.T) {
	const seed, count = 23, 4000
	r := rand.New(rand.NewPCG(seed, seed))
	taken := 0
	for range count {
		if checkFlatReader(t, randomEntityBody(r)) {
			taken++
		}
	}
	t.Logf("seed %d: the flat reader took %d of %d bodies", seed, taken, count)
	if taken < count/5 || taken > count*4/5 {
		t.Errorf("seed %d: the flat reader took %d of %d bodies: the bodies do not test both readers", seed, taken, count)
	}
}

func FuzzRequestEntityListed(f *testing.F) {
	for _, body := range flatBodies {
		f.Add([]byte(body))
	}
	for _, body := range edgeBodies {
		f.Add([]byte(body))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		f.Add(randomEntityBody(r))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkFlatReader(t, body)
	})
}

// randomEntityBody is an entity body from r: mostly in the flat form, now and then with a
// member or a byte the flat reader leaves to the general one.
func randomEntityBody(r *rand.Rand) []byte {
	systemNames := []string{"PartitionKey", "RowKey", "Timestamp", ""}
	badNames := []string{"odata.etag", "odata.type", "näme", `n\u0061me`, "a@b", "@", "x@odata.type@odata.type", "Seq@odata.typ", "odata.x@odata.type"}
	types := []string{"Edm.String", "Edm.Boolean", "Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.DateTime", "Edm.Guid", "Edm.Binary", "Edm.Unknown"}
	goodValues := []string{`"w"`, `""`, `"i00-1-0000000000"`, `"` + benchmarkData + `"`, `"ä"`, `0`, `-0`, `1`, `-1`,
		`2147483647`, `2147483648`, `-2147483649`, `9223372036854775808`, `1e3`, `1.5`, `true`, `false`, `null`}
	badValues := []string{`"\u00e4"`, `"a\"b"`, "\"\x01\"", "\"\xff\"", `1e400`, `01`, `1.`, `-`, `tru`, `{}`, `[]`, `{"a":1}`, `[1,"x"]`}
	rare := func() bool { return r.IntN(30) == 0 }
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	badSpace := r.IntN(20) == 0
	space := func() string {
		switch {
		case badSpace && rare():
			return "\f"
		case r.IntN(4) == 0:
			return pick([]string{" ", "\t", "\n", "\r", "  \n "})
		}
		return ""
	}
	var members, used []string
	member := func(name, value string) {
		members = append(members, `"`+name+`"`+space()+":"+space()+value)
		used = append(used, name)
	}
	n := r.IntN(8)
	if r.IntN(10) == 0 {
		n = 12 + r.IntN(8)
	}
	for i := 0; len(members) < n; i++ {
		name := string(rune('a'+r.IntN(6))) + strconv.Itoa(i)
		if system := pick(systemNames); r.IntN(4) == 0 && !slices.Contains(used, system) {
			name = system
		}
		switch {
		case rare():
			member(pick(badNames), pick(goodValues))
		case rare() && len(used) > 0: // a duplicate
			member(pick(used), pick(goodValues))
		case rare(): // an annotation without its property
			member(name+typeSuffix, `"`+pick(types)+`"`)
		case r.IntN(4) == 0: // a property and its annotation, in either order
			typ := pick(types)
			value := `"s"`
			if vs, ok := typedValues[typ]; ok {
				value = pick(vs)
			}
			annotation := `"` + typ + `"`
			if rare() {
				annotation = pick(goodValues)
			}
			if r.IntN(2) == 0 {
				member(name, value)
				member(name+typeSuffix, annotation)
			} else {
				member(name+typeSuffix, annotation)
				member(name, value)
			}
		case name == "PartitionKey" || name == "RowKey":
			member(name, pick([]string{`"k"`, `""`, `null`, `"` + benchmarkData + `"`}))
		case rare():
			member(name, pick(badValues))
		default:
			member(name, pick(goodValues))
		}
	}
	body := []byte(space() + "{" + space() + strings.Join(members, space()+","+space()) + space() + "}" + space())
	switch r.IntN(20) {
	case 0:
		body = body[:r.IntN(len(body)+1)]
	case 1:
		body[r.IntN(len(body))] = "\"\\{}[],:@x0 \x00\xc3"[r.IntN(14)]
	case 2:
		body = append(body, "x}{ "[r.IntN(4)])
	}
	return body
}

// checkFlatReader holds the flat reader, when it takes body, and DecodeRequestEntityListed to
// the general reader's entity and error, and to what DecodeRequestEntity decodes into a map;
// it reports whether the flat reader took body.
func checkFlatReader(t testing.TB, body []byte) bool {
	t.Helper()
	want, wantErr := decodeRequestEntityListed(body, nil)
	mapped, mappedErr := DecodeRequestEntity(body)
	sameListedOutcome(t, "DecodeRequestEntity", body, listedOf(mapped), mappedErr, want, wantErr)
	got, err := DecodeRequestEntityListed(body, nil)
	sameListedOutcome(t, "DecodeRequestEntityListed", body, got, err, want, wantErr)

	// The flat reader, into arrays too small and large enough, written only as far as the
	// contract allows, and sharing no memory with body.
	var taken bool
	for _, capacity := range []int{0, 1, 16} {
		props := make([]api.Property, 0, capacity)
		copied := append([]byte(nil), body...)
		var flat api.ListedEntity
		ok := readFlatEntity(copied, props, &flat)
		for i := range copied {
			copied[i] = 'X'
		}
		written := 0
		if ok {
			taken = true
			sameListedOutcome(t, "readFlatEntity", body, flat, nil, want, wantErr)
			if cap(flat.Properties) == capacity {
				written = len(flat.Properties)
			} else {
				written = 0 // grew: props's array may be written to its capacity
				continue
			}
		}
		for i, p := range props[written:capacity] {
			if p != (api.Property{}) {
				t.Fatalf("readFlatEntity(%q) (taken %v) left %v at %d of the array it was given", body, ok, p, written+i)
			}
		}
	}
	return taken
}

// checkPlainText fails unless e's claim of plain text holds (every name and String value
// ASCII from 0x20 on without '"' or '\\'), and e renders to the same answer with the claim
// as without it.
func checkPlainText(t testing.TB, what string, body []byte, e *api.ListedEntity) {
	t.Helper()
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for _, p := range e.Properties {
		if !plain(p.Name) || p.Value.Type == api.EdmString && !p.Value.Null && !plain(p.Value.Str) {
			t.Fatalf("%s(%q): PlainText set, but property %q = %q is not plain text", what, body, p.Name, p.Value.Str)
		}
	}
	unclaimed := *e
	unclaimed.PlainText = false
	for _, level := range []Metadata{NoMetadata, MinimalMetadata, FullMetadata} {
		d := Document{Level: level, ServiceURL: "http://127.0.0.1:10002/devstoreaccount1", Account: "devstoreaccount1", Table: "t"}
		got, err1 := AppendListedEntity(nil, e, d)
		want, err2 := AppendListedEntity(nil, &unclaimed, d)
		if !bytes.Equal(got, want) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s(%q): with PlainText the answer is\n%s (%v)\nwithout\n%s (%v)", what, body, got, err1, want, err2)
		}
	}
}

// listedOf is e with its properties listed in name order.
func listedOf(e api.Entity) api.ListedEntity {
	l := api.ListedEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Absent: e.Absent}
	for name, v := range e.Properties {
		l.Properties = append(l.Properties, api.Property{Name: name, Value: v})
	}
	api.SortProperties(l.Properties)
	return l
}

// sameListedOutcome fails unless both decodings failed with equal errors (code, status and
// message) or both succeeded with the same entity, each value bit for bit.
func sameListedOutcome(t testing.TB, what string, body []byte, got api.ListedEntity, gotErr error, want api.ListedEntity, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s(%q): error %v, general reader %v", what, body, gotErr, wantErr)
	}
	if gotErr != nil {
		var g, w *spec.Error
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) || *g != *w {
			t.Fatalf("%s(%q): error %#v, general reader %#v", what, body, gotErr, wantErr)
		}
		return
	}
	if len(got.Properties) == 0 && len(want.Properties) == 0 {
		got.Properties, want.Properties = nil, nil
	}
	for _, e := range []*api.ListedEntity{&got, &want} {
		if e.PlainText {
			checkPlainText(t, what, body, e)
		}
	}
	got.PlainText, want.PlainText = false, false // a hint, which the readers may give or not
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s(%q):\n got            %#v\n general reader %#v", what, body, got, want)
	}
}

// edmTypeNamed finds the type of each name api.ParseEdmType knows, and no other.
func TestEdmTypeNamedIsParseEdmType(t *testing.T) {
	names := []string{"", "E", "Edm.", "Edm.Int", "edm.int64", "Edm.Int16", "Edm.Int64 ", " Edm.Int64", "Edm.Guix", "Edm.DateTimeOffset", "Edm.Single", "Edm.Byte", "Edm.Stringg"}
	for _, typ := range api.AllEdmTypes {
		name := typ.String()
		names = append(names, name, strings.ToLower(name), name[1:], name[:len(name)-1], name+"x", "x"+name)
	}
	for _, name := range names {
		got, gotOK := edmTypeNamed(name)
		want, wantOK := api.ParseEdmType(name)
		if got != want || gotOK != wantOK {
			t.Errorf("edmTypeNamed(%q) = %v, %v; api.ParseEdmType %v, %v", name, got, gotOK, want, wantOK)
		}
	}
}

// BenchmarkDecodeRequestEntityListed decodes the SDK ceiling's write body by
// DecodeRequestEntityListed (the flat reader) and by the general reader alone.
func BenchmarkDecodeRequestEntityListed(b *testing.B) {
	body := []byte(benchmarkBody)
	for _, reader := range []struct {
		name   string
		decode func([]byte, []api.Property) (api.ListedEntity, error)
	}{{"flat", DecodeRequestEntityListed}, {"general", decodeRequestEntityListed}} {
		b.Run("reader="+reader.name, func(b *testing.B) {
			props := make([]api.Property, 0, 8)
			b.ReportAllocs()
			for b.Loop() {
				e, err := reader.decode(body, props)
				if err != nil || len(e.Properties) != 2 {
					b.Fatalf("%v, %d properties", err, len(e.Properties))
				}
				clear(e.Properties)
			}
		})
	}
}
