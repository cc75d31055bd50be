package reference

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

func TestKeys(t *testing.T) {
	ok := []struct{ name, pk, rk string }{
		{"empty PartitionKey", "", "r"},
		{"empty RowKey", "p", ""},
		{"512 BMP characters (1 KiB of UTF-16)", strings.Repeat("é", 512), "r"},
		{"256 non-BMP characters (1 KiB of UTF-16)", "p", strings.Repeat("𝄞", 256)},
		{"quote and space", "O'Brien", "a b"},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestService(t)
			mustInsert(t, s, ent(c.pk, c.rk))
			mustGet(t, s, c.pk, c.rk)
		})
	}
	bad := []struct{ name, pk, rk string }{
		{"513 characters", strings.Repeat("k", 513), "r"},
		{"257 non-BMP characters", "p", strings.Repeat("𝄞", 257)},
		{"invalid UTF-8", "p\xff", "r"},
	}
	for _, r := range []rune{'/', '\\', '#', '?', 0, '\t', '\n', '\r', 0x1F, 0x7F, 0x80, 0x9F} {
		bad = append(bad, struct{ name, pk, rk string }{fmt.Sprintf("PartitionKey with %U", r), "a" + string(r), "r"})
		bad = append(bad, struct{ name, pk, rk string }{fmt.Sprintf("RowKey with %U", r), "p", string(r) + "b"})
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestService(t)
			_, err := s.InsertEntity(bg, "Tbl", ent(c.pk, c.rk))
			wantError(t, err, http.StatusBadRequest, "OutOfRangeInput")
			_, err = s.UpdateEntity(bg, "Tbl", ent(c.pk, c.rk), api.Replace, "")
			wantError(t, err, http.StatusBadRequest, "OutOfRangeInput")
		})
	}
}

func TestPropertyNames(t *testing.T) {
	cases := []struct {
		name string
		code string
	}{
		{strings.Repeat("a", 255), ""},
		{"_under", ""},
		{"Größe", ""},
		{"名前", ""},
		{"a1_b2", ""},
		{strings.Repeat("a", 256), "PropertyNameTooLong"},
		{"", "PropertyNameInvalid"},
		{"1abc", "PropertyNameInvalid"},
		{"a-b", "PropertyNameInvalid"},
		{"a b", "PropertyNameInvalid"},
		{"a.b", "PropertyNameInvalid"},
		{"odata.etag", "PropertyNameInvalid"},
		{"a\u0001", "PropertyNameInvalid"},
		{"a\ue000", "PropertyNameInvalid"},
		{"PartitionKey", "PropertyNameInvalid"},
		{"RowKey", "PropertyNameInvalid"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%.20q", c.name), func(t *testing.T) {
			s, _ := newTestService(t)
			_, err := s.InsertEntity(bg, "Tbl", ent("p", "r", c.name, api.Int32(1)))
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantError(t, err, http.StatusBadRequest, c.code)
			// The name is checked even when the value is null.
			_, err = s.InsertEntity(bg, "Tbl", ent("p", "r2", c.name, api.Null(0)))
			wantError(t, err, http.StatusBadRequest, c.code)
		})
	}
}

func manyProperties(n int) map[string]api.Value {
	props := make(map[string]api.Value, n)
	for i := range n {
		props[fmt.Sprintf("p%03d", i)] = api.Int32(int32(i))
	}
	return props
}

func TestPropertyCount(t *testing.T) {
	s, _ := newTestService(t)
	mustInsert(t, s, api.NewEntity("p", "252", manyProperties(spec.MaxCustomProperties)))
	_, err := s.InsertEntity(bg, "Tbl", api.NewEntity("p", "253", manyProperties(spec.MaxCustomProperties+1)))
	se := wantError(t, err, http.StatusBadRequest, "TooManyProperties")
	if se.Message != spec.ErrTooManyProperties.Message {
		t.Fatalf("message %q", se.Message)
	}
	// Nulls are not stored and do not count.
	props := manyProperties(spec.MaxCustomProperties)
	props["extra"] = api.Null(0)
	mustInsert(t, s, api.NewEntity("p", "nulls", props))
	// A merge is checked on the entity it would leave.
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "252", "extra", api.Int32(1)), api.Merge, "*")
	wantError(t, err, http.StatusBadRequest, "TooManyProperties")
	if got := mustGet(t, s, "p", "252"); len(got.Properties) != spec.MaxCustomProperties {
		t.Fatalf("a failed merge changed the entity: %d properties", len(got.Properties))
	}
}

func TestValueRanges(t *testing.T) {
	cases := []struct {
		name string
		v    api.Value
		code string
	}{
		{"string of 32 Ki - 1 code units", api.String(strings.Repeat("a", spec.MaxStringChars-1)), ""},
		{"string of 32 Ki code units, refused as a live answer did", api.String(strings.Repeat("a", spec.MaxStringChars)), "PropertyValueTooLarge"},
		{"string of 32 Ki + 1 code units", api.String(strings.Repeat("a", spec.MaxStringChars+1)), "PropertyValueTooLarge"},
		{"non-BMP string of 32 Ki - 2 code units", api.String(strings.Repeat("𝄞", spec.MaxStringChars/2-1)), ""},
		{"non-BMP string of 32 Ki code units", api.String(strings.Repeat("𝄞", spec.MaxStringChars/2)), "PropertyValueTooLarge"},
		{"non-BMP string over 32 Ki code units", api.String(strings.Repeat("𝄞", spec.MaxStringChars/2) + "a"), "PropertyValueTooLarge"},
		{"invalid UTF-8 string", api.String("a\xffb"), "InvalidValueType"},
		{"binary of 64 KiB", api.Binary(make([]byte, spec.MaxBinaryBytes)), ""},
		{"binary of 64 KiB + 1", api.Binary(make([]byte, spec.MaxBinaryBytes+1)), "PropertyValueTooLarge"},
		{"DateTime at 1601-01-01", api.DateTime(spec.MinDateTime), ""},
		{"DateTime a tick before 1601", api.DateTime(spec.MinDateTime.Add(-100)), "OutOfRangeInput"},
		{"DateTime zero", api.Value{Type: api.EdmDateTime}, "OutOfRangeInput"},
		{"DateTime at the end of 9999", api.DateTime(spec.MaxDateTime), ""},
		{"DateTime in 10000", api.DateTime(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)), "OutOfRangeInput"},
		{"Int32 above 32 bits", int32OutOfRange(math.MaxInt32 + 1), "InvalidValueType"},
		{"Int32 below 32 bits", int32OutOfRange(math.MinInt32 - 1), "InvalidValueType"},
		{"Guid malformed", api.Guid("not-a-guid"), "InvalidValueType"},
		{"Guid without dashes", api.Guid("0f8fad5bd9cb469fa16570867728950e"), "InvalidValueType"},
		{"Guid with a bad digit", api.Guid("0f8fad5b-d9cb-469f-a165-70867728950g"), "InvalidValueType"},
		{"unknown type", api.Value{Type: api.EdmType(99)}, "InvalidValueType"},
		{"no type", api.Value{Str: "x"}, "InvalidValueType"},
		{"null of an unknown type", api.Value{Type: api.EdmType(99), Null: true}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestService(t)
			_, err := s.InsertEntity(bg, "Tbl", ent("p", "r", "v", c.v))
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			code, _ := spec.LookupErrorCode(c.code)
			wantError(t, err, code.Status, c.code)
		})
	}
}

func TestEntitySize(t *testing.T) {
	e := ent("pk", "rk", "s", api.String("héllo"), "n", api.Int32(1), "z", api.Null(0))
	// 4 + 2×(2+2) + [8 + 2×1 + 4 + 2×5] + [8 + 2×1 + 4]
	if got, want := EntitySize(e.PartitionKey, e.RowKey, e.Properties), 4+8+24+14; got != want {
		t.Fatalf("EntitySize = %d, want %d", got, want)
	}

	// Fifteen full binary properties and one that fills the entity to exactly 1 MiB.
	props := map[string]api.Value{}
	for i := range 15 {
		props[fmt.Sprintf("b%02d", i)] = api.Binary(make([]byte, spec.MaxBinaryBytes))
	}
	base := EntitySize("p", "r", props)
	last := spec.MaxEntityBytes - base - (spec.SizePropertyOverhead + 2*3 + spec.SizeBinaryOverhead)
	props["b15"] = api.Binary(make([]byte, last))
	if got := EntitySize("p", "r", props); got != spec.MaxEntityBytes {
		t.Fatalf("size %d, want exactly %d", got, spec.MaxEntityBytes)
	}
	s, _ := newTestService(t)
	mustInsert(t, s, api.NewEntity("p", "r", props))
	props["b15"] = api.Binary(make([]byte, last+1))
	_, err := s.InsertEntity(bg, "Tbl", api.NewEntity("p", "r2", props))
	wantError(t, err, http.StatusBadRequest, "EntityTooLarge")
	// A merge that grows the stored entity past 1 MiB fails.
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "r", "x", api.Bool(true)), api.Merge, "*")
	wantError(t, err, http.StatusBadRequest, "EntityTooLarge")
}

// TestEntitySizeBeforeValueSize: an entity over 1 MiB made of strings each one unit over
// the value limit is EntityTooLarge, as Storage answered (E-entity-size-first); one such
// string in a small entity stays PropertyValueTooLarge.
func TestEntitySizeBeforeValueSize(t *testing.T) {
	s, _ := newTestService(t)
	over := api.String(strings.Repeat("a", spec.MaxStoredStringUnits+1))
	props := map[string]api.Value{}
	for i := range 20 {
		props[fmt.Sprintf("s%02d", i)] = over
	}
	_, err := s.InsertEntity(bg, "Tbl", api.NewEntity("p", "r", props))
	wantError(t, err, http.StatusBadRequest, "EntityTooLarge")
	_, err = s.InsertEntity(bg, "Tbl", ent("p", "r", "s", over))
	wantError(t, err, http.StatusBadRequest, "PropertyValueTooLarge")
}

// TestEntityWithoutKeysIsRefused: the model refuses an entity flagged without a key, as
// Storage refuses such an insert (E-insert-no-keys), in a transaction too.
func TestEntityWithoutKeysIsRefused(t *testing.T) {
	s, _ := newTestService(t)
	for _, absent := range []api.Absent{api.AbsentPartitionKey, api.AbsentRowKey, api.AbsentPartitionKey | api.AbsentRowKey} {
		e := ent("", "", "V", api.Int32(10))
		e.Absent = absent
		_, err := s.InsertEntity(bg, "Tbl", e)
		wantError(t, err, http.StatusBadRequest, "PropertiesNeedValue")
		_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchInsert, Entity: e}})
		wantError(t, err, http.StatusBadRequest, "PropertiesNeedValue")
	}
	page, err := s.QueryEntities(bg, "Tbl", api.Query{})
	if err != nil || len(page.Entities) != 0 {
		t.Fatalf("stored %v, %v", page.Entities, err)
	}
}

func TestValidationOrderIsDeterministic(t *testing.T) {
	s, _ := newTestService(t)
	e := ent("p", "r",
		"zz-invalid", api.Int32(1),
		"b", int32OutOfRange(math.MaxInt64),
		"a", api.String(strings.Repeat("x", spec.MaxStringChars+1)),
		"c", api.Guid("bad"))
	for range 20 {
		_, err := s.InsertEntity(bg, "Tbl", e)
		wantError(t, err, http.StatusBadRequest, "PropertyValueTooLarge") // "a" sorts first
	}
	// Keys come before properties, the count before each property.
	e.PartitionKey = "bad/key"
	_, err := s.InsertEntity(bg, "Tbl", e)
	wantError(t, err, http.StatusBadRequest, "OutOfRangeInput")
	props := manyProperties(spec.MaxCustomProperties + 1)
	props["bad name"] = api.Int32(1)
	_, err = s.InsertEntity(bg, "Tbl", api.NewEntity("p", "r", props))
	wantError(t, err, http.StatusBadRequest, "TooManyProperties")
}

func TestUTF16Len(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "€": 1, "𝄞": 2, "a𝄞é€": 5} {
		if got := utf16Len(s); got != want {
			t.Errorf("utf16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestCheckIfMatch(t *testing.T) {
	for _, ok := range []string{"*", `""`, `"x"`, `W/"datetime'2021-09-20T21%3A55%3A33.1005177Z'"`, `W/"0x5B168C7B6E589D2"`} {
		if err := checkIfMatch(ok); err != nil {
			t.Errorf("checkIfMatch(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"x", `"`, `W/`, `W/"`, `"a"b"`, `"a", "b"`, "**"} {
		if err := checkIfMatch(bad); err == nil {
			t.Errorf("checkIfMatch(%q) accepted a malformed tag", bad)
		}
	}
}

// int32OutOfRange is an Edm.Int32 value holding i, which does not fit 32 bits.
func int32OutOfRange(i int64) api.Value {
	v := api.Int64(i)
	v.Type = api.EdmInt32
	return v
}

// checkKey's ASCII loops (eight bytes, then one at a time) answer as the general check
// does, with the same length.
func TestCheckKeyASCIIAgreesWithGeneralCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for range 20_000 {
		b := make([]byte, r.IntN(4)*r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(128))
			if r.IntN(4) > 0 {
				b[i] = 'a' + byte(r.IntN(26))
			}
		}
		key := string(b)
		units, err := checkKeyUnits(key)
		wantUnits, wantErr := checkNonASCIIKey(key)
		if (err == nil) != (wantErr == nil) || err == nil && (units != wantUnits || units != api.UTF16Len(key)) {
			t.Fatalf("checkKeyUnits(%q) = %d, %v; general check says %d, %v", key, units, err, wantUnits, wantErr)
		}
		if (checkKey(key) == nil) != (err == nil) {
			t.Fatalf("checkKey(%q) and checkKeyUnits disagree", key)
		}
	}
}

// Every entity checkStoredSize lets through fits in the store's header.
func TestStoreHoldsEveryEntityWithinTheLimits(t *testing.T) {
	if spec.MaxCustomProperties > store.MaxProperties || spec.MaxEntityBytes > store.MaxEntitySize {
		t.Fatalf("the store holds %d properties and %d bytes; the limits are %d and %d",
			store.MaxProperties, store.MaxEntitySize, spec.MaxCustomProperties, spec.MaxEntityBytes)
	}
}

// checkListedEntity's size of a valid entity is what its stored properties add by
// api.EntitySize's accounting, strings of every kind of character among them.
func TestCheckListedEntitySize(t *testing.T) {
	s, _ := newTestService(t)
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a", "plain ascii text of more than sixteen bytes", strings.Repeat("x", 33),
		strings.Repeat("abcdefghijklmnop", 3) + "é", "é𝄞\u2028", strings.Repeat("𝄞", 20) + "tail"}
	values := []api.Value{api.Int32(1), api.Int64(2), api.Double(3), api.Bool(true), api.Null(api.EdmString),
		api.Binary([]byte("bin")), api.Guid("c9da6455-213d-42c9-9a79-3e9149a57833"), api.DateTime(time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC))}
	for i := range 500 {
		if i == 250 { // the names known from here on
			mustInsert(t, s, api.NewEntity("pk", "known", map[string]api.Value{"a": api.Int32(1), "Bé": api.Int32(1), "longer_name_of_a_property": api.Int32(1)}))
		}
		props := map[string]api.Value{}
		for _, name := range []string{"a", "Bé", "Timestamp", "longer_name_of_a_property", "z"} {
			switch r.IntN(3) {
			case 0:
				props[name] = api.String(texts[r.IntN(len(texts))])
			case 1:
				props[name] = values[r.IntN(len(values))]
			}
		}
		e := listEntity(api.NewEntity("pk", "rk", props), nil)
		size, ids, serr := s.checkListedEntity(&e, nil)
		if serr != nil {
			t.Fatalf("%v: %v", props, serr)
		}
		if want := listedEntitySize(&e); size != want {
			t.Fatalf("%v: size %d, want %d", props, size, want)
		}
		for i, p := range e.Properties {
			want, _, ok := s.names.Interned(p.Name)
			switch {
			case !storedProperty(p.Name, p.Value):
				want = store.Skip
			case !ok:
				want = store.NoID
			}
			if ids[i] != want {
				t.Fatalf("%v: id of %s %d, want %d", props, p.Name, ids[i], want)
			}
		}
	}
	for _, bad := range []string{"\xff", strings.Repeat("a", 20) + "\xc3", "é\xed\xa0\x80"} {
		e := listEntity(api.NewEntity("pk", "rk", map[string]api.Value{"a": api.String(bad)}), nil)
		if _, _, serr := s.checkListedEntity(&e, nil); serr == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// stringUnits agrees with api.UTF16Len and utf8.ValidString on strings of every length up to
// past two of its blocks, with a non-ASCII character, an invalid byte or neither at every
// place.
func TestStringUnitsAgreesWithUTF16LenAndValidity(t *testing.T) {
	for n := 0; n <= 70; n++ {
		for at := -1; at < n; at++ {
			for _, odd := range []string{"é", "𝄞", "\xff", "\xe2\x82"} {
				b := []byte(strings.Repeat("a", n))
				s := string(b)
				if at >= 0 {
					s = s[:at] + odd + s[at:]
				}
				units, ok := stringUnits(s)
				if wantOK := utf8.ValidString(s); ok != wantOK || ok && units != api.UTF16Len(s) {
					t.Fatalf("stringUnits(%q) = %d, %v; want %d, %v", s, units, ok, api.UTF16Len(s), wantOK)
				}
			}
		}
	}
}

// plainKeyWord passes exactly the words whose eight bytes are ASCII that forbiddenKeyByte
// lets through: every byte value at every position of a word of letters, and every pair of
// byte values at two positions.
func TestPlainKeyWordIsForbiddenKeyByte(t *testing.T) {
	plainByte := func(c byte) bool { return c < utf8.RuneSelf && !forbiddenKeyByte[c] }
	word := func(b [8]byte) uint64 { return binary.LittleEndian.Uint64(b[:]) }
	for c := 0; c < 256; c++ {
		for at := range 8 {
			b := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
			b[at] = byte(c)
			if got := plainKeyWord(word(b)); got != plainByte(byte(c)) {
				t.Fatalf("plainKeyWord(%q) = %v, want %v", b[:], got, !got)
			}
		}
		for d := 0; d < 256; d++ {
			for _, at := range [][2]int{{0, 1}, {0, 7}, {3, 4}, {6, 7}} {
				b := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
				b[at[0]], b[at[1]] = byte(c), byte(d)
				if got := plainKeyWord(word(b)); got != (plainByte(byte(c)) && plainByte(byte(d))) {
					t.Fatalf("plainKeyWord(%q) = %v, want %v", b[:], got, !got)
				}
			}
		}
	}
}
