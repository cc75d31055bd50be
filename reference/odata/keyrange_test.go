package odata

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

var keyRangeSeed = flag.Uint64("odata.seed", 0, "seed of TestKeyRangeSoundness (0 picks one and logs it)")

func TestKeyRangeExamples(t *testing.T) {
	pk := func(lo string, loInc bool, hi string, hiInc bool) KeyRange {
		return KeyRange{PKLow: lo, HasPKLow: true, PKLowInclusive: loInc, PKHigh: hi, HasPKHigh: true, PKHighInclusive: hiInc}
	}
	pinned := func(p string) KeyRange { return pk(p, true, p, true) }
	withRK := func(r KeyRange, lo string, hasLo, loInc bool, hi string, hasHi, hiInc bool) KeyRange {
		r.RKLow, r.HasRKLow, r.RKLowInclusive = lo, hasLo, loInc
		r.RKHigh, r.HasRKHigh, r.RKHighInclusive = hi, hasHi, hiInc
		return r
	}
	tests := []struct {
		filter string
		want   KeyRange
	}{
		{"", KeyRange{}},
		{"Age gt 3", KeyRange{}},
		{"PartitionKey eq 'a'", pinned("a")},
		{"PartitionKey eq 'a' and RowKey ge 'x' and RowKey lt 'y'", withRK(pinned("a"), "x", true, true, "y", true, false)},
		{"RowKey le 'x' and PartitionKey eq 'a' and Age eq 3", withRK(pinned("a"), "", false, false, "x", true, true)},
		{"RowKey eq 'x'", KeyRange{}}, // RowKey bounds only under a pinned partition
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", pk("a", true, "b", false)},
		{"'b' gt PartitionKey and PartitionKey gt 'a'", pk("a", false, "b", false)},
		{"PartitionKey eq 'a' or PartitionKey eq 'c'", pk("a", true, "c", true)},
		{"PartitionKey eq 'a' or Age eq 1", KeyRange{}},
		{"PartitionKey ne 'a'", KeyRange{}},
		{"PartitionKey eq 5", KeyRange{}}, // a type mismatch can hold for every entity
		{"PartitionKey eq 'a' and PartitionKey eq 'b'", KeyRange{Empty: true}},
		{"PartitionKey gt 'a' and PartitionKey le 'a'", KeyRange{Empty: true}},
		{"PartitionKey eq 'a' and RowKey gt 'y' and RowKey lt 'x'", KeyRange{Empty: true}},
		{"(PartitionKey eq 'a' and PartitionKey eq 'b') or PartitionKey eq 'c'", pinned("c")},
		{"not (PartitionKey lt 'm')", KeyRange{PKLow: "m", HasPKLow: true, PKLowInclusive: true}},
		{"not (PartitionKey ne 'm')", pinned("m")},
		{"not (PartitionKey eq 'a' or PartitionKey eq 'b')", KeyRange{}},
		{"not (PartitionKey lt 'a' or PartitionKey gt 'c')", pk("a", true, "c", true)},
		{"not not (PartitionKey eq 'a')", pinned("a")},
		{"(PartitionKey eq 'a' and RowKey eq 'x') or (PartitionKey eq 'a' and RowKey eq 'z')", withRK(pinned("a"), "x", true, true, "z", true, true)},
		{"(PartitionKey eq 'a' and RowKey eq 'x') or (PartitionKey eq 'b' and RowKey eq 'z')", pk("a", true, "b", true)},
		{"PartitionKey ge 'a' and PartitionKey le 'a' and RowKey gt ''", withRK(pinned("a"), "", true, false, "", false, false)},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.filter).KeyRange(); got != tt.want {
			t.Errorf("KeyRange(%q) =\n  %+v, want\n  %+v", tt.filter, got, tt.want)
		}
	}
	if p, ok := mustParse(t, "PartitionKey eq 'q' and RowKey gt 'r'").KeyRange().PinnedPartition(); !ok || p != "q" {
		t.Errorf("PinnedPartition = %q, %v; want q, true", p, ok)
	}
	if _, ok := mustParse(t, "PartitionKey ge 'q'").KeyRange().PinnedPartition(); ok {
		t.Error("an open range reported a pinned partition")
	}
}

func TestIsKeyRangeExamples(t *testing.T) {
	for filter, want := range map[string]bool{
		"":                                      true,
		"PartitionKey eq 'a'":                   true,
		"RowKey gt 'x' and PartitionKey eq 'a'": true,
		"(RowKey lt 'y') and ('a' eq PartitionKey) and RowKey ge 'x'":   true,
		"PartitionKey ge 'a' and PartitionKey lt 'b'":                   true,
		"PartitionKey eq 'a' and PartitionKey eq 'b' and RowKey eq 'r'": true, // empty
		"RowKey eq 'x'":                                                    false, // no RowKey bounds without a pinned partition
		"PartitionKey ge 'a' and RowKey eq 'x'":                            false,
		"PartitionKey ne 'a'":                                              false,
		"PartitionKey eq 'a' or PartitionKey eq 'c'":                       false,
		"not (PartitionKey lt 'a')":                                        false,
		"PartitionKey eq 'a' and Age eq 3":                                 false,
		"PartitionKey eq 1":                                                false,
		"PartitionKey eq 'a' and RowKey eq datetime'2020-01-01T00:00:00Z'": false,
	} {
		if got := mustParse(t, filter).IsKeyRange(); got != want {
			t.Errorf("IsKeyRange(%q) = %v, want %v", filter, got, want)
		}
	}
}

// TestKeyRangeSoundness checks the contract on random filters and entities: every entity
// that Match accepts lies inside KeyRange, an Empty range matches nothing, and where
// IsKeyRange is true Match and Contains agree on every entity. Replay a failure with
// -odata.seed.
func TestKeyRangeSoundness(t *testing.T) {
	seed := *keyRangeSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -odata.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	keys := []string{"", "a", "a\x00", "ab", "b", "B", "é", "\U0001F600", "\uffff"}
	entities := make([]api.Entity, 0, 200)
	for range 200 {
		e := api.NewEntity(keys[rng.IntN(len(keys))], keys[rng.IntN(len(keys))], nil)
		if rng.IntN(2) == 0 {
			e.Properties["Age"] = api.Int32(int32(rng.IntN(3)))
		}
		entities = append(entities, e)
	}
	const filters = 3000
	bounded, matched, exactFilters := 0, 0, 0
	for range filters {
		g := filterGen{rng: rng, keys: keys}
		src := g.expr(3)
		f, err := ParseFilter(src)
		if err != nil {
			if g.comparisons > 15 {
				continue
			}
			t.Fatalf("generated filter %q does not parse: %v", src, err)
		}
		r := f.KeyRange()
		if r.HasPKLow || r.HasPKHigh || r.Empty {
			bounded++
		}
		exact := f.IsKeyRange()
		if exact {
			exactFilters++
		}
		for i := range entities {
			e := &entities[i]
			inside := r.Contains(e.PartitionKey, e.RowKey)
			if exact && inside != f.Match(e) {
				t.Fatalf("seed %d: %q is a key range (IsKeyRange) but Match says %v and KeyRange %+v says %v for %v",
					seed, src, f.Match(e), r, inside, e)
			}
			if !f.Match(e) {
				continue
			}
			matched++
			if !inside {
				t.Fatalf("seed %d: %q matches %v but KeyRange %+v excludes it", seed, src, e, r)
			}
		}
	}
	// The properties must not hold vacuously.
	if bounded < filters/10 || matched == 0 || exactFilters < filters/50 {
		t.Fatalf("generator too weak: %d of %d ranges bounded, %d matches, %d exact", bounded, filters, matched, exactFilters)
	}
}

type filterGen struct {
	rng         *rand.Rand
	keys        []string
	comparisons int
}

func (g *filterGen) expr(depth int) string {
	if depth == 0 || g.rng.IntN(3) == 0 {
		return g.comparison()
	}
	switch g.rng.IntN(4) {
	case 0:
		return "not (" + g.expr(depth-1) + ")"
	case 1:
		return "(" + g.expr(depth-1) + ") or (" + g.expr(depth-1) + ")"
	default:
		return g.expr(depth-1) + " and " + g.expr(depth-1)
	}
}

func (g *filterGen) comparison() string {
	g.comparisons++
	op := opNames[g.rng.IntN(len(opNames))]
	prop := []string{"PartitionKey", "PartitionKey", "RowKey", "Age"}[g.rng.IntN(4)]
	lit := QuoteString(g.keys[g.rng.IntN(len(g.keys))])
	if prop == "Age" || g.rng.IntN(10) == 0 {
		lit = fmt.Sprint(g.rng.IntN(3))
	}
	if g.rng.IntN(4) == 0 {
		return lit + " " + op + " " + prop
	}
	return strings.Join([]string{prop, op, lit}, " ")
}
