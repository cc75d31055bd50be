package store

import (
	"slices"

	"github.com/tidwall/btree"
)

// Frozen is a table as it was when Freeze returned: later writes, compactions and Resets of
// the table do not change it. It is read-only and safe for concurrent use; holding it keeps
// the bytes of the entities it holds alive.
type Frozen struct {
	tree  *btree.BTreeG[record]
	slots []loc
	slabs [][]byte
}

// Freeze returns a frozen view of t, which needs t to itself (no writer, no concurrent
// reader: the index's Copy may not run beside them). It costs a copy-on-write copy of
// the ordered index (O(1); later writes copy the index nodes they change) and a copy of the
// slot table (a few bytes per entity): no entity is copied.
func (t *Table) Freeze() *Frozen {
	return &Frozen{tree: t.tree.Copy(), slots: slices.Clone(t.slots), slabs: slices.Clone(t.arena.slabs)}
}

// Len returns the number of entities in f.
func (f *Frozen) Len() int { return f.tree.Len() }

// Ascend calls visit with each record of f in key order until visit returns false.
func (f *Frozen) Ascend(visit func(Record) bool) {
	// Scan compares nothing, so the table's order (lessFunc, which reads the live table) is never
	// called.
	f.tree.Scan(func(r record) bool {
		l := f.slots[r.id]
		b := stringOf(f.slabs[l.slab][l.off : l.off+l.size])
		return visit(Record{bytes: b, pkLen: l.pkLen, rkLen: l.rkLen})
	})
}
