package store

import "unsafe"

// loc is where an entity's bytes lie in a table's arena.
type loc struct {
	slab, off    uint32
	pkLen, rkLen uint16
	size         uint32 // the entity's bytes: keys and body
}

// slabBytes is the size of an arena slab; a larger entity gets a slab of its own.
const slabBytes = 1 << 20

// arena holds the bytes of one table's entities in append-only slabs. A slab is never
// written again once a later one is started, and no byte is ever rewritten.
type arena struct {
	slabs    [][]byte
	slabLive []int // bytes of the table's entities in each slab
	written  int   // bytes put into the slabs still held
	live     int   // bytes of the entities in the table
}

// retire records that the entity at l is no longer the table's, and lets go of its slab
// when nothing in it is: the dead bytes of a wholly dead slab cost no compaction, which
// after mass deletes or updates of old entities leaves little to copy.
func (a *arena) retire(l loc) {
	k := int(l.slab)
	if a.slabLive[k] -= int(l.size); a.slabLive[k] == 0 && k != len(a.slabs)-1 {
		a.written -= len(a.slabs[k])
		a.slabs[k] = nil // records that share its bytes keep them alive
	}
}

// put copies an entity's encoding (keys then body) into the arena.
func (a *arena) put(b string, pkLen, rkLen int) loc {
	n := len(b)
	if k := len(a.slabs) - 1; k < 0 || cap(a.slabs[k])-len(a.slabs[k]) < n {
		a.slabs = append(a.slabs, make([]byte, 0, max(slabBytes, n)))
		a.slabLive = append(a.slabLive, 0)
	}
	k := len(a.slabs) - 1
	off := len(a.slabs[k])
	a.slabs[k] = append(a.slabs[k], b...)
	a.written += n
	return loc{slab: uint32(k), off: uint32(off), pkLen: uint16(pkLen), rkLen: uint16(rkLen), size: uint32(n)}
}

// bytes returns l's bytes, shared with the arena (they are never rewritten).
func (a *arena) bytes(l loc) string {
	return unsafe.String(&a.slabs[l.slab][l.off], int(l.size))
}

// record returns the Record at l.
func (a *arena) record(l loc) Record {
	return Record{bytes: a.bytes(l), pkLen: l.pkLen, rkLen: l.rkLen}
}

// keys returns the PartitionKey and RowKey at l.
func (a *arena) keys(l loc) (pk, rk string) {
	b := a.bytes(l)
	return b[:l.pkLen], b[l.pkLen : int(l.pkLen)+int(l.rkLen)]
}

// stringOf returns b's bytes as a string without copying them; b is not changed while the
// string is in use.
func stringOf(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
