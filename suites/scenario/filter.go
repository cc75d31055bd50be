package scenario

import "strings"

// Quote renders s as a $filter String literal, doubling single quotes (EVIDENCE.md 3.1).
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// And joins $filter clauses with "and", each in parentheses.
func And(clauses ...string) string {
	parts := make([]string, len(clauses))
	for i, c := range clauses {
		parts[i] = "(" + c + ")"
	}
	return strings.Join(parts, " and ")
}

// Cmp renders one comparison of a property with a String literal:
// Cmp("RowKey", "ge", "empid_000100") is RowKey ge 'empid_000100'.
func Cmp(prop, op, value string) string { return prop + " " + op + " " + Quote(value) }
