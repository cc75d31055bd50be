package api

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSortPropertiesOrdersByName against a plain sort of the names, for lists short
// (sorted by insertion) and long, of names that share first bytes and names that do not.
func TestSortPropertiesOrdersByName(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "b", "B", "é", "Data", "Seq", "zz", "a1", "a10", "a2", "ab"}
	for i := 0; i < 2000; i++ {
		var ps []Property
		seen := map[string]bool{}
		for range r.IntN(30) {
			name := alphabet[r.IntN(len(alphabet))] + alphabet[r.IntN(len(alphabet))]
			if !seen[name] {
				seen[name] = true
				ps = append(ps, Property{Name: name, Value: String(name)})
			}
		}
		want := slices.Clone(ps)
		slices.SortFunc(want, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
		SortProperties(ps)
		if !slices.Equal(ps, want) {
			t.Fatalf("SortProperties gave %v, want %v", ps, want)
		}
	}
}
