package api

import (
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

func TestUTF16LenCountsCodeUnits(t *testing.T) {
	for _, s := range []string{
		"", "abc", "é", "€uro", "日本語", "😀", "a😀b𝄞", "\xff", "a\xc3", "\xe2\x82", "\xf0\x9f\x98",
		strings.Repeat("x", 1000), "abcdefg😀", "abcdefgh😀", strings.Repeat("x", 13) + "é" + strings.Repeat("y", 9),
		strings.Repeat("12345678", 3) + "\xff" + strings.Repeat("z", 8) + "日",
	} {
		want := len(utf16.Encode([]rune(s)))
		if got := UTF16Len(s); got != want {
			t.Errorf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestValueSizeByType(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want int
	}{
		{String(""), 4},
		{String("ab"), 4 + 4},
		{String("😀"), 4 + 4},
		{Binary(make([]byte, 10)), 4 + 10},
		{Bool(true), 1},
		{DateTime(time.Unix(0, 0)), 8},
		{Double(1.5), 8},
		{Guid("00000000-0000-0000-0000-000000000000"), 16},
		{Int32(7), 4},
		{Int64(7), 8},
		{Value{Type: EdmString, Null: true}, 0},
		{Value{Type: EdmType(99)}, 0},
	} {
		if got := ValueSize(tc.v); got != tc.want {
			t.Errorf("ValueSize(%s) = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func TestEntitySizeAccounting(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Entity
		want int
	}{
		{"keys only", NewEntity("pk", "r", nil), 4 + 2*3},
		{"non-BMP key", NewEntity("😀", "", nil), 4 + 2*2},
		{"one Int32", NewEntity("p", "r", map[string]Value{"Age": Int32(1)}), 4 + 2*2 + 8 + 2*3 + 4},
		{"one String", NewEntity("p", "r", map[string]Value{"N": String("abc")}), 4 + 2*2 + 8 + 2*1 + 4 + 2*3},
		{"null not stored", NewEntity("p", "r", map[string]Value{"N": {Type: EdmString, Null: true}}), 4 + 2*2},
		{"Timestamp not stored", NewEntity("p", "r", map[string]Value{"Timestamp": DateTime(time.Unix(0, 0))}), 4 + 2*2},
	} {
		if got := EntitySize(tc.e); got != tc.want {
			t.Errorf("%s: EntitySize(%s) = %d, want %d", tc.name, tc.e, got, tc.want)
		}
	}
}
