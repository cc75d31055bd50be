package odata

import "github.com/tableconform/conform/reference/api"

// KeyRange is a conservative description of the keys of the entities a filter can match,
// so that the reference can seek in its (PartitionKey, RowKey)-ordered index instead of
// scanning. Contract: every entity that Match accepts has keys inside the range (Contains
// reports true); the range may be wider than the matching set, never narrower.
//
// A bound is present only when its Has flag is set. Strings compare with
// api.CompareKeyStrings. RowKey bounds are given only when the PartitionKey is pinned to
// one value (PKLow == PKHigh, both inclusive); otherwise they are all unset. Empty means
// that no entity can match (e.g. `PartitionKey eq 'a' and PartitionKey eq 'b'`); the other
// fields are then unset.
type KeyRange struct {
	Empty bool

	PKLow, PKHigh                   string
	HasPKLow, HasPKHigh             bool
	PKLowInclusive, PKHighInclusive bool

	RKLow, RKHigh                   string
	HasRKLow, HasRKHigh             bool
	RKLowInclusive, RKHighInclusive bool
}

// PinnedPartition returns the single PartitionKey that every match has, if there is one.
func (r KeyRange) PinnedPartition() (string, bool) {
	if !r.Empty && r.HasPKLow && r.HasPKHigh && r.PKLowInclusive && r.PKHighInclusive && r.PKLow == r.PKHigh {
		return r.PKLow, true
	}
	return "", false
}

// Contains reports whether an entity with keys pk and rk lies inside the range.
func (r KeyRange) Contains(pk, rk string) bool {
	if r.Empty {
		return false
	}
	return withinBounds(pk, r.PKLow, r.HasPKLow, r.PKLowInclusive, r.PKHigh, r.HasPKHigh, r.PKHighInclusive) &&
		withinBounds(rk, r.RKLow, r.HasRKLow, r.RKLowInclusive, r.RKHigh, r.HasRKHigh, r.RKHighInclusive)
}

func withinBounds(s, lo string, hasLo, loInc bool, hi string, hasHi, hiInc bool) bool {
	if hasLo {
		c := api.CompareKeyStrings(s, lo)
		if c < 0 || (c == 0 && !loInc) {
			return false
		}
	}
	if hasHi {
		c := api.CompareKeyStrings(s, hi)
		if c > 0 || (c == 0 && !hiInc) {
			return false
		}
	}
	return true
}

// KeyRange returns bounds that every matching entity's keys satisfy. Only comparisons of
// PartitionKey or RowKey with a String constant narrow the range: a constant of another
// type is a type mismatch (see eval.go), which can be true for every entity. `and`
// intersects, `or` takes the hull, and `not` is pushed down to the comparisons (the keys
// are always present and always strings, so `not (PartitionKey lt 'a')` is
// `PartitionKey ge 'a'`).
func (f *Filter) KeyRange() KeyRange {
	if f == nil || f.root == nil {
		return KeyRange{Empty: f != nil && f.none}
	}
	b := keyBox(f.root, false)
	if b.empty() {
		return KeyRange{Empty: true}
	}
	r := KeyRange{
		PKLow: b.pk.lo, HasPKLow: b.pk.hasLo, PKLowInclusive: b.pk.loInc,
		PKHigh: b.pk.hi, HasPKHigh: b.pk.hasHi, PKHighInclusive: b.pk.hiInc,
	}
	if _, pinned := r.PinnedPartition(); pinned {
		r.RKLow, r.HasRKLow, r.RKLowInclusive = b.rk.lo, b.rk.hasLo, b.rk.loInc
		r.RKHigh, r.HasRKHigh, r.RKHighInclusive = b.rk.hi, b.rk.hasHi, b.rk.hiInc
	}
	return r
}

// IsKeyRange reports whether f matches exactly the entities whose keys f.KeyRange()
// contains, so that a seek over the range need not evaluate f: f is empty, or a
// conjunction (`and`, in any order and grouping) of comparisons other than `ne` between
// PartitionKey or RowKey and a String constant, with RowKey compared only where the
// PartitionKey ends up pinned (KeyRange gives RowKey bounds only then) or the range is
// empty. Anything else (`or`, `not`, another property, a constant of another type) may
// make the range wider than the matches, and IsKeyRange says false.
func (f *Filter) IsKeyRange() bool {
	if f == nil || f.root == nil {
		return true
	}
	comparesRowKey := false
	if !keyConjunction(f.root, &comparesRowKey) {
		return false
	}
	if !comparesRowKey {
		return true
	}
	r := f.KeyRange()
	_, pinned := r.PinnedPartition()
	return pinned || r.Empty
}

// keyConjunction reports whether n is a conjunction of String comparisons (not `ne`) of
// the keys, and notes in comparesRowKey whether RowKey is one of them.
func keyConjunction(n *node, comparesRowKey *bool) bool {
	switch n.kind {
	case nodeAnd:
		for _, k := range n.kids {
			if !keyConjunction(k, comparesRowKey) {
				return false
			}
		}
		return true
	case nodeCompare:
		if n.lit.Null || n.lit.Type != api.EdmString || n.op == OpNe {
			return false
		}
		switch n.prop.kind {
		case propPartitionKey:
			return true
		case propRowKey:
			*comparesRowKey = true
			return true
		}
	}
	return false
}

// interval is a set of key strings between two optional bounds; none marks the empty set.
type interval struct {
	lo, hi       string
	hasLo, hasHi bool
	loInc, hiInc bool
	none         bool
}

func (a interval) intersect(b interval) interval {
	if a.none || b.none {
		return interval{none: true}
	}
	r := a
	if b.hasLo {
		if !r.hasLo {
			r.lo, r.hasLo, r.loInc = b.lo, true, b.loInc
		} else if c := api.CompareKeyStrings(b.lo, r.lo); c > 0 || (c == 0 && !b.loInc) {
			r.lo, r.loInc = b.lo, b.loInc
		}
	}
	if b.hasHi {
		if !r.hasHi {
			r.hi, r.hasHi, r.hiInc = b.hi, true, b.hiInc
		} else if c := api.CompareKeyStrings(b.hi, r.hi); c < 0 || (c == 0 && !b.hiInc) {
			r.hi, r.hiInc = b.hi, b.hiInc
		}
	}
	if r.hasLo && r.hasHi {
		if c := api.CompareKeyStrings(r.lo, r.hi); c > 0 || (c == 0 && !(r.loInc && r.hiInc)) {
			return interval{none: true}
		}
	}
	return r
}

func (a interval) hull(b interval) interval {
	if a.none {
		return b
	}
	if b.none {
		return a
	}
	r := interval{}
	if a.hasLo && b.hasLo {
		r.hasLo = true
		switch c := api.CompareKeyStrings(a.lo, b.lo); {
		case c < 0:
			r.lo, r.loInc = a.lo, a.loInc
		case c > 0:
			r.lo, r.loInc = b.lo, b.loInc
		default:
			r.lo, r.loInc = a.lo, a.loInc || b.loInc
		}
	}
	if a.hasHi && b.hasHi {
		r.hasHi = true
		switch c := api.CompareKeyStrings(a.hi, b.hi); {
		case c > 0:
			r.hi, r.hiInc = a.hi, a.hiInc
		case c < 0:
			r.hi, r.hiInc = b.hi, b.hiInc
		default:
			r.hi, r.hiInc = a.hi, a.hiInc || b.hiInc
		}
	}
	return r
}

// box is PartitionKey interval × RowKey interval.
type box struct{ pk, rk interval }

func (b box) empty() bool { return b.pk.none || b.rk.none }

func (b box) intersect(o box) box {
	r := box{pk: b.pk.intersect(o.pk), rk: b.rk.intersect(o.rk)}
	if r.empty() {
		return box{pk: interval{none: true}, rk: interval{none: true}}
	}
	return r
}

func (b box) hull(o box) box {
	if b.empty() {
		return o
	}
	if o.empty() {
		return b
	}
	return box{pk: b.pk.hull(o.pk), rk: b.rk.hull(o.rk)}
}

// keyBox bounds the keys of the entities for which n evaluates to !negated.
func keyBox(n *node, negated bool) box {
	switch n.kind {
	case nodeAnd, nodeOr:
		intersect := (n.kind == nodeAnd) != negated // De Morgan under negation
		var acc box
		for i, k := range n.kids {
			b := keyBox(k, negated)
			switch {
			case i == 0:
				acc = b
			case intersect:
				acc = acc.intersect(b)
			default:
				acc = acc.hull(b)
			}
		}
		return acc
	case nodeNot:
		return keyBox(n.kids[0], !negated)
	case nodeCompare:
		if n.lit.Type != api.EdmString || (n.prop.kind != propPartitionKey && n.prop.kind != propRowKey) {
			return box{}
		}
		op := n.op
		if negated {
			op = op.negate()
		}
		iv := comparisonInterval(op, n.lit.Str)
		if n.prop.kind == propPartitionKey {
			return box{pk: iv}
		}
		return box{rk: iv}
	}
	return box{}
}

func comparisonInterval(op Op, v string) interval {
	switch op {
	case OpEq:
		return interval{lo: v, hi: v, hasLo: true, hasHi: true, loInc: true, hiInc: true}
	case OpGt:
		return interval{lo: v, hasLo: true}
	case OpGe:
		return interval{lo: v, hasLo: true, loInc: true}
	case OpLt:
		return interval{hi: v, hasHi: true}
	case OpLe:
		return interval{hi: v, hasHi: true, hiInc: true}
	}
	return interval{} // ne: unbounded
}
