package mutant

import "testing"

// TestPartitionOfFilter: the pattern mutants fault only a query whose filter is one
// PartitionKey equality, read with the service's lexer, and refuse any other filter.
func TestPartitionOfFilter(t *testing.T) {
	for _, c := range []struct {
		filter, pk string
		ok         bool
	}{
		{"PartitionKey eq '2014073118'", "2014073118", true},
		{"PartitionKey eq 'O''Neil'", "O'Neil", true},
		{"PartitionKey  eq  'a'", "a", true},
		{"PartitionKey eq 'a' and RowKey ge 'b'", "", false},
		{"RowKey eq 'a'", "", false},
		{"PartitionKey ne 'a'", "", false},
		{"PartitionKey eq 5", "", false},
		{"PartitionKey eq 'unterminated", "", false},
		{"", "", false},
	} {
		pk, ok := partitionOfFilter(c.filter)
		if pk != c.pk || ok != c.ok {
			t.Errorf("partitionOfFilter(%q) = %q, %v; want %q, %v", c.filter, pk, ok, c.pk, c.ok)
		}
	}
}

// TestComparesWith: a comparison is found by its property and operator words, not by a
// property name inside a string literal.
func TestComparesWith(t *testing.T) {
	for _, c := range []struct {
		filter, prop, op string
		want             bool
	}{
		{"PartitionKey eq 'Sales' and RowKey ge 'a' and RowKey lt 'b'", "RowKey", "ge", true},
		{"PartitionKey eq 'Sales' and RowKey ge 'a' and RowKey lt 'b'", "RowKey", "lt", true},
		{"RowKey ge 'a'", "RowKey", "lt", false},
		{"Age ge 18", "Age", "", true},
		{"Name eq 'Age ge 18'", "Age", "", false},
		{"(Level eq 'Error') or (Level eq 'Critical')", "Level", "", true},
		{"", "Level", "", false},
	} {
		if got := comparesWith(c.filter, c.prop, c.op); got != c.want {
			t.Errorf("comparesWith(%q, %q, %q) = %v; want %v", c.filter, c.prop, c.op, got, c.want)
		}
	}
}
