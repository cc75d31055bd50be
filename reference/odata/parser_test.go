package odata

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func TestParseFilterValid(t *testing.T) {
	tests := []struct {
		name, filter, canonical string
		comparisons             int
	}{
		{"key range", "PartitionKey eq 'a' and RowKey ge 'x' and RowKey lt 'y'", "PartitionKey eq 'a' and RowKey ge 'x' and RowKey lt 'y'", 3},
		{"constant first is mirrored", "30 lt Age", "Age gt 30", 1},
		{"bare boolean", "IsActive", "IsActive", 0},
		{"negated bare boolean", "not IsActive", "not IsActive", 0},
		{"negated comparison", "not (Age eq 30)", "not (Age eq 30)", 1},
		{"double negation", "not not a", "not not a", 0},
		{"and binds tighter than or", "a eq 1 or b eq 2 and c eq 3", "a eq 1 or b eq 2 and c eq 3", 3},
		{"parentheses kept where needed", "(a eq 1 or b eq 2) and c eq 3", "(a eq 1 or b eq 2) and c eq 3", 3},
		{"nested and flattened", "a eq 1 and (b eq 2 and c eq 3)", "a eq 1 and b eq 2 and c eq 3", 3},
		{"redundant parentheses", "((Age eq 30))", "Age eq 30", 1},
		{"parenthesised operand", "Age gt (30)", "Age gt 30", 1},
		{"blanks of every kind", "  Age\teq\n30  ", "Age eq 30", 1},
		{"quote doubling", "Name eq 'O''Brien'", "Name eq 'O''Brien'", 1},
		{"empty string", "Name ne ''", "Name ne ''", 1},
		{"Int32", "N eq 30", "N eq 30", 1},
		{"negative Int32", "N eq -5", "N eq -5", 1},
		{"Int32 bounds", "N ge -2147483648 and N le 2147483647", "N ge -2147483648 and N le 2147483647", 2},
		{"Int64", "Big eq 123L", "Big eq 123L", 1},
		{"Int64 lower-case suffix", "Big eq 123l", "Big eq 123L", 1},
		{"Int64 bound", "Big eq -9223372036854775808L", "Big eq -9223372036854775808L", 1},
		{"Double", "P eq 100.25", "P eq 100.25", 1},
		{"Double exponent", "P eq 1e3", "P eq 1000.0", 1},
		{"Double whole", "P eq 1.0", "P eq 1.0", 1},
		{"Double suffix", "P eq 3D", "P eq 3.0", 1},
		{"Double negative", "P lt -2.5E-3", "P lt -0.0025", 1},
		{"Boolean", "F eq true or F eq false", "F eq true or F eq false", 2},
		{"DateTime", "D eq datetime'2008-07-10T00:00:00Z'", "D eq datetime'2008-07-10T00:00:00Z'", 1},
		{"DateTime date only", "D eq datetime'2008-07-10'", "D eq datetime'2008-07-10T00:00:00Z'", 1},
		{"DateTime minutes and offset", "D eq datetime'2008-07-10T01:02+01:00'", "D eq datetime'2008-07-10T00:02:00Z'", 1},
		{"DateTime seven digits", "D eq datetime'2008-07-10T00:00:00.1234567Z'", "D eq datetime'2008-07-10T00:00:00.1234567Z'", 1},
		{"DateTime negative offset", "D eq datetime'2008-07-10T23:30:00.5-23:59'", "D eq datetime'2008-07-11T23:29:00.5Z'", 1},
		{"Guid any case", "G eq guid'A455C695-DF98-5678-AAAA-81D3367E5A34'", "G eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'", 1},
		{"Binary X", "B eq X'0aFF'", "B eq X'0AFF'", 1},
		{"Binary lower-case x", "B eq x'0aff'", "B eq X'0AFF'", 1},
		{"Binary keyword", "B eq binary'0AFF'", "B eq X'0AFF'", 1},
		{"Binary empty", "B eq X''", "B eq X''", 1},
		{"type prefix as a property name", "datetime eq 1 and X eq 2", "datetime eq 1 and X eq 2", 2},
		{"non-ASCII names and values", "Straße eq 'ü😀'", "Straße eq 'ü😀'", 1},
		{"timestamp", "Timestamp ge datetime'2020-01-01T00:00:00Z'", "Timestamp ge datetime'2020-01-01T00:00:00Z'", 1},
		{"empty filter matches all", "", "", 0},
		{"blank filter matches all", "   ", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(tt.filter)
			if err != nil {
				t.Fatalf("ParseFilter(%q): %v", tt.filter, err)
			}
			if got := f.String(); got != tt.canonical {
				t.Errorf("ParseFilter(%q).String() = %q, want %q", tt.filter, got, tt.canonical)
			}
			if got := f.Comparisons(); got != tt.comparisons {
				t.Errorf("ParseFilter(%q).Comparisons() = %d, want %d", tt.filter, got, tt.comparisons)
			}
			again, err := ParseFilter(f.String())
			if err != nil || again.String() != f.String() {
				t.Errorf("canonical %q does not parse back to itself: %v, %v", f.String(), again, err)
			}
		})
	}
}

// TestParseFilterSyntaxErrors checks the code, the message and the reported position. The
// first two positions are the service's own answers (see syntaxError).
func TestParseFilterSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, filter string
		position     int
	}{
		{"service: stray words", "aaa bbb ccc", 7},
		{"service: stray literal", "property1 eq 1'invalid'", 23},
		{"missing constant", "Name eq", 7},
		{"unterminated string", "Name eq 'abc", 12},
		{"dangling and", "Name eq 'a' and", 15},
		{"leading and", "and Name eq 'a'", 3},
		{"unclosed parenthesis", "(Name eq 'a'", 12},
		{"extra parenthesis", "Name eq 'a')", 12},
		{"empty parentheses", "()", 2},
		{"upper-case operator", "Name EQ 'a'", 7},
		{"upper-case and", "Name eq 'a' AND Age eq 1", 15},
		{"dangling not", "Name eq 'a' and not", 19},
		{"Int64 suffix on a fraction", "Age eq 1.5L", 11},
		{"Int32 overflow", "Age eq 2147483648", 17},
		{"Int64 overflow", "Age eq 9223372036854775808L", 27},
		{"Double overflow", "Age eq 1e999", 12},
		{"Decimal suffix", "Age eq 5M", 9},
		{"Single suffix", "Age eq 3f", 9},
		{"bad month", "d eq datetime'2008-13-01T00:00:00Z'", 35},
		{"bad day", "d eq datetime'2009-02-29T00:00:00Z'", 35},
		{"no zone", "d eq datetime'2008-07-10T00:00:00'", 34},
		{"eight fraction digits", "d eq datetime'2008-07-10T00:00:00.12345678Z'", 44},
		{"fraction without digits", "d eq datetime'2008-07-10T00:00:00.Z'", 36},
		{"zone out of range", "d eq datetime'2008-07-10T00:00:00+24:00'", 40},
		{"bad guid", "g eq guid'not-a-guid'", 21},
		{"odd hex", "b eq X'0'", 9},
		{"unknown literal prefix", "b eq Y'00'", 10},
		{"datetimeoffset literal", "d eq datetimeoffset'2008-07-10T00:00:00Z'", 41},
		{"invalid character", "a eq 1 # b", 7},
		{"lone minus", "Age eq -", 7},
		{"comma", "a eq 1, b", 6},
		{"position counts UTF-16 units", "Name eq 'ü' zz", 14},
		{"surrogate pair counts twice", "Name eq '😀' zz", 15},
		{"operator as operand", "Name eq eq", 10},
		{"function call", "startswith(Name, 'a')", 11},
		{"function after a comparison", "Name eq 'a' and substringof('a', Name)", 28},
		{"arithmetic", "Age add 1 eq 2", 7},
		{"dangling or", "Name eq 'a' or", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFilter(tt.filter)
			want := fmt.Sprintf(spec.MsgFilterSyntaxFormat, tt.position, tt.filter)
			se := requireSpecError(t, err, http.StatusBadRequest, spec.ErrInvalidInput.Code)
			if se != nil && se.Message != want {
				t.Errorf("ParseFilter(%q) message = %q, want %q", tt.filter, se.Message, want)
			}
		})
	}
}

func TestParseFilterSemanticErrors(t *testing.T) {
	sixteen := strings.TrimSuffix(strings.Repeat("a eq 1 and ", 16), " and ")
	fifteen := strings.TrimSuffix(strings.Repeat("a eq 1 and ", 15), " and ")
	tests := []struct {
		name, filter string
		status       int
		code         string
		message      string // "" for any
	}{
		{"null constant", "Name eq null", 400, "InvalidInput", ""},
		{"null constant first", "null ne Name", 400, "InvalidInput", ""},
		{"constant as a condition", "Name eq 'a' and 5", 400, "InvalidInput", ""},
		{"string as a condition", "'a'", 400, "InvalidInput", ""},
		{"service: property against property", "property1 eq propery2", 501, "NotImplemented", spec.ErrNotImplemented.Message},
		{"service: constant against constant", "1 eq 2", 501, "NotImplemented", spec.ErrNotImplemented.Message},
		{"upper-case True is a property", "Name eq True", 501, "NotImplemented", ""},
		{"condition compared", "(a eq 1) eq true", 501, "NotImplemented", ""},
		{"not binds tighter than eq", "not a eq 'x'", 501, "NotImplemented", ""},
		{"sixteen comparisons", sixteen, 400, "InvalidInput", spec.MsgTooManyComparisons},
		{"too deep parentheses", strings.Repeat("(", MaxFilterNesting+1) + "a eq 1" + strings.Repeat(")", MaxFilterNesting+1), 400, "InvalidInput", ""},
		{"too deep not", strings.Repeat("not ", MaxFilterNesting+1) + "a", 400, "InvalidInput", ""},
		{"far too deep", strings.Repeat("(", 1_000_000), 400, "InvalidInput", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFilter(tt.filter)
			se := requireSpecError(t, err, tt.status, tt.code)
			if se != nil && tt.message != "" && se.Message != tt.message {
				t.Errorf("message = %q, want %q", se.Message, tt.message)
			}
		})
	}
	for _, ok := range []string{
		fifteen,
		strings.Repeat("(", MaxFilterNesting) + "a eq 1" + strings.Repeat(")", MaxFilterNesting),
		strings.Repeat("not ", MaxFilterNesting) + "a",
	} {
		if _, err := ParseFilter(ok); err != nil {
			t.Errorf("ParseFilter(%.40q...) = %v, want success at the limit", ok, err)
		}
	}
}

func TestParseTableFilter(t *testing.T) {
	f, err := ParseTableFilter("TableName ge 'b' and TableName lt 'c'")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"a": false, "b": true, "bzz": true, "c": false, "B": false} {
		if got := f.MatchTable(name); got != want {
			t.Errorf("MatchTable(%q) = %v, want %v", name, got, want)
		}
	}
	other, err := ParseTableFilter("PartitionKey ne 'x'")
	if err != nil {
		t.Fatal(err)
	}
	if other.MatchTable("anything") {
		t.Error("a filter on a property other than TableName matched a table; the property is missing there")
	}
	if _, err := ParseTableFilter("TableName eq"); err == nil {
		t.Error("ParseTableFilter accepted a malformed filter")
	}
}

// requireSpecError fails unless err is a *spec.Error with the given status and code.
func requireSpecError(t *testing.T, err error, status int, code string) *spec.Error {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) {
		t.Errorf("error = %v (%T), want *spec.Error %d %s", err, err, status, code)
		return nil
	}
	if se.Status != status || se.Code != code {
		t.Errorf("error = %v, want %d %s", se, status, code)
	}
	return se
}

// TestBareBooleanFilter: `true` or `false` as the whole filter runs the query, matching
// every entity or none (E-filter-bare-boolean); the rendering parses back the same.
func TestBareBooleanFilter(t *testing.T) {
	e := api.NewEntity("p", "r", nil)
	for _, c := range []struct {
		filter string
		match  bool
	}{{"true", true}, {"false", false}, {" ( false ) ", false}} {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Fatalf("%q: %v", c.filter, err)
		}
		if f.Match(&e) != c.match || f.MatchTable("t") != c.match || f.KeyRange().Empty == c.match {
			t.Errorf("%q: Match %v, MatchTable %v, KeyRange %+v", c.filter, f.Match(&e), f.MatchTable("t"), f.KeyRange())
		}
		back, err := ParseFilter(f.String())
		if err != nil || back.Match(&e) != c.match {
			t.Errorf("%q renders as %q, which reads back as %v, %v", c.filter, f.String(), back, err)
		}
	}
}
