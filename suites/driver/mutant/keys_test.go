package mutant

import (
	"strings"
	"testing"
)

func TestMapKeyLiteralsFoldsTheKeysAFilterComparesWith(t *testing.T) {
	cases := map[string]string{
		"PartitionKey eq 'Sales' and RowKey ge 'B'":         "PartitionKey eq 'sales' and RowKey ge 'b'",
		"'O''Brien' le RowKey":                              "'o''brien' le RowKey",
		"Name eq 'Sales' and (PartitionKey ne 'It''S')":     "Name eq 'Sales' and (PartitionKey ne 'it''s')",
		"Department eq 'PartitionKey eq ''X'''":             "Department eq 'PartitionKey eq ''X'''",
		"RowKey gt 'A' or Age gt 3 and PartitionKey eq 'Q'": "RowKey gt 'a' or Age gt 3 and PartitionKey eq 'q'",
		"": "",
	}
	for in, want := range cases {
		if got := mapKeyLiterals(in, strings.ToLower); got != want {
			t.Errorf("mapKeyLiterals(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSystemNamesAnyCaseSpellsOnlyTheSystemNames(t *testing.T) {
	cases := map[string]string{
		"partitionkey eq 'p' and ROWKEY ge 'rowkey'":  "PartitionKey eq 'p' and RowKey ge 'rowkey'",
		"timestamp lt datetime'2020-01-01T00:00:00Z'": "Timestamp lt datetime'2020-01-01T00:00:00Z'",
		"Rank eq 3 and name ne 'partitionkey'":        "Rank eq 3 and name ne 'partitionkey'",
		"PartitionKey eq 'p'":                         "PartitionKey eq 'p'",
	}
	for in, want := range cases {
		if got := systemNamesAnyCase(in); got != want {
			t.Errorf("systemNamesAnyCase(%q) = %q, want %q", in, got, want)
		}
	}
}
