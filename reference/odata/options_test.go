package odata

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func TestParseTop(t *testing.T) {
	for s, want := range map[string]int{"1": 1, "30": 30, "1000": 1000, " 5 ": 5} {
		got, err := ParseTop(s)
		if err != nil || got != want {
			t.Errorf("ParseTop(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"0", "-1", "1001", "2147483647", "99999999999999999999", "", "abc", "1.5", "1e3", "+"} {
		_, err := ParseTop(s)
		se := requireSpecError(t, err, http.StatusBadRequest, spec.ErrInvalidInput.Code)
		if se != nil && se.Message != spec.ErrInvalidInput.Message {
			t.Errorf("ParseTop(%q) message = %q, want the service's %q", s, se.Message, spec.ErrInvalidInput.Message)
		}
	}
}

func TestParseSelect(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Age", []string{"Age"}},
		{"age,sex", []string{"age", "sex"}},
		{" PartitionKey , RowKey,Timestamp ", []string{"PartitionKey", "RowKey", "Timestamp"}},
		{"a,b,a", []string{"a", "b"}},
		{"_x,Straße,a1", []string{"_x", "Straße", "a1"}},
		{"", nil},
		{"*", nil},
	}
	for _, tt := range tests {
		got, err := ParseSelect(tt.in)
		if err != nil || strings.Join(got, "|") != strings.Join(tt.want, "|") || (got == nil) != (tt.want == nil) {
			t.Errorf("ParseSelect(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	many := strings.TrimSuffix(strings.Repeat("p,", spec.MaxSelectProperties+1), ",")
	atLimit := make([]string, spec.MaxSelectProperties)
	for i := range atLimit {
		atLimit[i] = "p" + strings.Repeat("x", i)
	}
	if got, err := ParseSelect(strings.Join(atLimit, ",")); err != nil || len(got) != spec.MaxSelectProperties {
		t.Errorf("ParseSelect of %d names = %d, %v", spec.MaxSelectProperties, len(got), err)
	}
	for _, bad := range []string{"a,,b", "a,", ",a", "1a", "a-b", "a b", "a,*", strings.Repeat("n", spec.MaxPropertyNameLength+1), many} {
		_, err := ParseSelect(bad)
		requireSpecError(t, err, http.StatusBadRequest, spec.ErrInvalidInput.Code)
	}
}

func TestFormatLiteral(t *testing.T) {
	tests := []struct {
		v    api.Value
		want string
	}{
		{api.String("it's"), "'it''s'"},
		{api.String(""), "''"},
		{api.Int32(-5), "-5"},
		{api.Int64(123), "123L"},
		{api.Double(100.25), "100.25"},
		{api.Double(3), "3.0"},
		{api.Double(1e21), "1e+21"},
		{api.Double(math.Copysign(0, -1)), "-0.0"},
		{api.Bool(true), "true"},
		{api.DateTime(time.Date(2008, 7, 10, 1, 2, 3, 400000000, time.FixedZone("", 3600))), "datetime'2008-07-10T00:02:03.4Z'"},
		{api.Guid("A455C695-DF98-5678-AAAA-81D3367E5A34"), "guid'a455c695-df98-5678-aaaa-81d3367e5a34'"},
		{api.Binary([]byte{0x0a, 0xff}), "X'0AFF'"},
	}
	for _, tt := range tests {
		got, err := FormatLiteral(tt.v)
		if err != nil || got != tt.want {
			t.Errorf("FormatLiteral(%v) = %q, %v; want %q", tt.v, got, err, tt.want)
			continue
		}
		// The literal compares equal to the value it came from.
		e := api.NewEntity("p", "r", map[string]api.Value{"V": tt.v})
		if !mustParse(t, "V eq "+got).Match(&e) {
			t.Errorf("V eq %s does not match V = %v", got, tt.v)
		}
	}
	for _, bad := range []api.Value{api.Null(api.EdmString), api.Double(math.NaN()), api.Double(math.Inf(-1)),
		int32OutOfRange(1 << 40), api.Guid("nope"), {Type: api.EdmType(99)}} {
		if s, err := FormatLiteral(bad); err == nil {
			t.Errorf("FormatLiteral(%v) = %q, want an error", bad, s)
		}
	}
	if got := QuoteString("a'b''c"); got != "'a''b''''c'" {
		t.Errorf("QuoteString = %q", got)
	}
}

// int32OutOfRange is an Edm.Int32 value holding i, which does not fit 32 bits.
func int32OutOfRange(i int64) api.Value {
	v := api.Int64(i)
	v.Type = api.EdmInt32
	return v
}
