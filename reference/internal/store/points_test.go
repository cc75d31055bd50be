package store

import (
	"math/rand/v2"
	"testing"
)

// The point index against a map, with hashes narrow enough that most entries collide and
// deletions have to move the entries that probed past them.
func TestPointIndexAgreesWithMap(t *testing.T) {
	for _, width := range []uint64{4, 64, 1 << 12, 1 << 62} {
		r := rand.New(rand.NewPCG(width, 7))
		var p pointIndex
		model := map[uint64]loc{}
		for step := range 50_000 {
			h := r.Uint64N(width)
			switch r.IntN(3) {
			case 0, 1:
				l := loc{slab: uint32(step), size: uint32(r.IntN(100))}
				p.set(h, l)
				model[pointKey(h)] = l
			case 2:
				p.delete(h)
				delete(model, pointKey(h))
			}
			if step%97 == 0 || width <= 64 {
				for k := range min(width, 200) {
					q := r.Uint64N(width)
					if k < width && width <= 200 {
						q = k
					}
					got, ok := p.get(q)
					want, wantOK := model[pointKey(q)]
					if ok != wantOK || got != want {
						t.Fatalf("width %d step %d: get(%d) = %v %v, want %v %v", width, step, q, got, ok, want, wantOK)
					}
				}
			}
			if p.used != len(model) {
				t.Fatalf("width %d step %d: %d entries, want %d", width, step, p.used, len(model))
			}
		}
	}
}
