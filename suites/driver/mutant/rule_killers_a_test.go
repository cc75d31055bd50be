package mutant

import (
	"slices"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// TestCompareNatural checks the fault of numeric-key-order: digit runs compare as numbers,
// and everything else as the service compares keys, so keys without digits keep their order.
func TestCompareNatural(t *testing.T) {
	keys := []string{"99", "1000", "2", "10", "1", "9", "123"}
	slices.SortFunc(keys, compareNatural)
	if want := []string{"1", "2", "9", "10", "99", "123", "1000"}; !slices.Equal(keys, want) {
		t.Errorf("unpadded numbers sorted as %v, want %v", keys, want)
	}
	plain := []string{"Sales", "B", "a", "Sale", "\U0001F600", "\uFF61", "sales", "Sales2", "Salesman"}
	want := slices.Clone(plain)
	slices.SortFunc(want, api.CompareKeyStrings)
	slices.SortFunc(plain, compareNatural)
	if !slices.Equal(plain, want) {
		t.Errorf("keys sorted as %q, want the service's order %q", plain, want)
	}
}
