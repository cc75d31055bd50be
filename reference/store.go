package reference

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/google/btree"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Storage of one table. The encoded entities (codec.go) lie in an arena of append-only
// slabs. Each entity has a stable id, written into its encoding, and the slot of that id
// says where its current bytes lie, so that replacing an entity moves no index entry. The
// ordered index is a google/btree of records (partition id, entity id, RowKey prefix); the
// point index maps a hash of the keys to the entity's bytes. Neither index holds a pointer,
// so the garbage collector does not trace a million entities, and the bytes of an entity
// are never rewritten once written: a decoded entity shares its strings with the arena
// safely, and a reader holding the table's read lock sees a consistent table. Replaced and
// deleted entities leave dead bytes behind: a slab left with none of the table's entities
// is let go of at once, and when the dead bytes of the others outweigh the live ones the
// table is compacted into a fresh arena.
//
// Writes change the table in place under its write lock and keep an undo log, so that a
// transaction whose operation fails is rolled back before any reader can see it.

// loc is where an entity's bytes lie in a table's arena.
type loc struct {
	slab, off    uint32
	pkLen, rkLen uint16 // stored keys are at most 1536 bytes of UTF-8 (spec.MaxKeyBytes)
	size         uint32 // the entity's bytes: keys and body
}

// record is one entry of a table's ordered index: PartitionKey order by partition, then
// RowKey order, decided by the RowKey prefix when it can and by the keys themselves when it
// cannot (table.less).
type record struct {
	pid uint32 // the entity's partition in table.parts, or probePartition for a look-up probe
	id  uint32 // the entity's slot in table.slots, or the probe's slot in probeKeys
	rkp uint64 // keyPrefix of the RowKey
}

// partition is one PartitionKey present in a table.
type partition struct {
	pk    string // a copy, so that it does not hold an arena slab
	count int    // entities of the partition in the index
}

// probePartition marks a look-up probe: a record whose keys are in probeKeys.
const probePartition = math.MaxUint32

// probeKeys lends look-up keys to the index's less function, which sees only records.
var probeKeys [256]atomic.Pointer[api.Key]

// acquireProbe returns a record that sorts where the entity (pk, rk) sorts; the caller
// releases it after use.
func acquireProbe(pk, rk string) record {
	k := &api.Key{PartitionKey: pk, RowKey: rk}
	for {
		start := rand.N(len(probeKeys))
		for i := range probeKeys {
			slot := (start + i) % len(probeKeys)
			if probeKeys[slot].CompareAndSwap(nil, k) {
				return record{pid: probePartition, id: uint32(slot), rkp: keyPrefix(rk)}
			}
		}
		runtime.Gosched() // every slot is lent: more concurrent seeks than slots
	}
}

func releaseProbe(r record) { probeKeys[r.id].Store(nil) }

// slabBytes is the size of an arena slab; a larger entity gets a slab of its own.
const slabBytes = 1 << 20

// compactMinDeadBytes is the dead weight below which a table is never compacted (a
// variable so that tests can compact often).
var compactMinDeadBytes = 8 << 20

// arena holds the bytes of one table's entities. It is guarded by the table's lock: readers
// hold the read lock, writers the write lock.
type arena struct {
	slabs    [][]byte
	slabLive []int // bytes of the table's entities in each slab
	written  int   // bytes put into the slabs still held
	live     int   // bytes of the entities in the table
}

// retire records that the entity at l is no longer the table's, and lets go of its slab
// when nothing in it is (a slab is never written again once a later one is started): the
// dead bytes of a wholly dead slab cost no compaction, which after mass deletes or updates
// of old entities leaves little to copy.
func (a *arena) retire(l loc) {
	k := int(l.slab)
	if a.slabLive[k] -= int(l.size); a.slabLive[k] == 0 && k != len(a.slabs)-1 {
		a.written -= len(a.slabs[k])
		a.slabs[k] = nil // decoded entities that share its bytes keep them alive
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

// keys returns the PartitionKey and RowKey at l.
func (a *arena) keys(l loc) (pk, rk string) {
	b := a.bytes(l)
	return b[:l.pkLen], b[l.pkLen : int(l.pkLen)+int(l.rkLen)]
}

// body returns the encoded body at l.
func (a *arena) body(l loc) string {
	return a.bytes(l)[int(l.pkLen)+int(l.rkLen):]
}

// resetStorage empties t (write lock held).
func (t *table) resetStorage() {
	t.arena = &arena{}
	t.tree = btree.NewG(btreeDegree, t.less)
	t.slots, t.freeIDs = nil, nil
	t.parts, t.freeParts = nil, nil
	t.partIDs = map[string]uint32{}
	t.points = pointIndex{}
	t.scratch = nil
}

// less is the index order: PartitionKey, then RowKey, each by api.CompareKeyStrings.
func (t *table) less(x, y record) bool {
	if x.pid != y.pid {
		if c := compareKeys(t.partitionKey(x), t.partitionKey(y)); c != 0 {
			return c < 0
		}
	}
	if x.rkp != y.rkp {
		return x.rkp < y.rkp
	}
	return compareKeys(t.rowKey(x), t.rowKey(y)) < 0
}

func (t *table) partitionKey(r record) string {
	if r.pid == probePartition {
		return probeKeys[r.id].Load().PartitionKey
	}
	return t.parts[r.pid].pk
}

func (t *table) rowKey(r record) string {
	if r.pid == probePartition {
		return probeKeys[r.id].Load().RowKey
	}
	_, rk := t.arena.keys(t.slots[r.id])
	return rk
}

// indexInsert puts entity id, whose keys are pk and rk, in the ordered index.
func (t *table) indexInsert(id uint32, pk, rk string) {
	pid, ok := t.partIDs[pk]
	if !ok {
		p := partition{pk: strings.Clone(pk)}
		if n := len(t.freeParts); n > 0 {
			pid = t.freeParts[n-1]
			t.freeParts = t.freeParts[:n-1]
			t.parts[pid] = p
		} else {
			pid = uint32(len(t.parts))
			t.parts = append(t.parts, p)
		}
		t.partIDs[p.pk] = pid
	}
	t.parts[pid].count++
	t.tree.ReplaceOrInsert(record{pid: pid, id: id, rkp: keyPrefix(rk)})
}

// indexDelete takes entity id, whose keys are pk and rk, out of the ordered index.
func (t *table) indexDelete(id uint32, pk, rk string) {
	pid, ok := t.partIDs[pk]
	if !ok {
		return
	}
	if _, found := t.tree.Delete(record{pid: pid, id: id, rkp: keyPrefix(rk)}); !found {
		return
	}
	if t.parts[pid].count--; t.parts[pid].count == 0 {
		delete(t.partIDs, pk)
		t.parts[pid] = partition{}
		t.freeParts = append(t.freeParts, pid)
	}
}

// newID returns a free entity id.
func (t *table) newID() uint32 {
	if n := len(t.freeIDs); n > 0 {
		id := t.freeIDs[n-1]
		t.freeIDs = t.freeIDs[:n-1]
		return id
	}
	t.slots = append(t.slots, loc{})
	return uint32(len(t.slots) - 1)
}

// The point index maps a hash of an entity's keys to its loc, so that Get and the writes
// find an entity without descending the ordered index. A hash shared by two keys maps to
// ambiguous, which sends look-ups of that hash to the ordered index. It describes the
// committed table only; a transaction may use it too, since it addresses each entity at
// most once.

// ambiguous marks a hash shared by more than one entity.
var ambiguous = loc{slab: math.MaxUint32}

// pointHashMask narrows the point hash; tests narrow it to force shared hashes.
var pointHashMask = ^uint64(0)

func (t *table) pointHash(pk, rk string) uint64 {
	return (maphash.String(t.seed, pk) ^ (maphash.String(t.seed, rk) * 0x9e3779b97f4a7c15)) & pointHashMask
}

// lookup finds the entity (pk, rk); the caller holds t's lock.
func (t *table) lookup(pk, rk string) (loc, bool) { return t.lookupHashed(t.pointHash(pk, rk), pk, rk) }

// lookupHashed is lookup given h, the point hash of (pk, rk).
func (t *table) lookupHashed(h uint64, pk, rk string) (loc, bool) {
	l, ok := t.points.get(h)
	switch {
	case !ok:
		return loc{}, false
	case l == ambiguous:
		probe := acquireProbe(pk, rk)
		r, found := t.tree.Get(probe)
		releaseProbe(probe)
		if !found {
			return loc{}, false
		}
		return t.slots[r.id], true
	}
	if spk, srk := t.arena.keys(l); spk != pk || srk != rk {
		return loc{}, false
	}
	return l, true
}

// setPoint records that (pk, rk), whose point hash is h, now lies at l.
func (t *table) setPoint(h uint64, pk, rk string, l loc) {
	if cur, ok := t.points.get(h); ok {
		if cur == ambiguous {
			return
		}
		if spk, srk := t.arena.keys(cur); spk != pk || srk != rk {
			l = ambiguous
		}
	}
	t.points.set(h, l)
}

// dropPoint records that (pk, rk), whose point hash is h, is gone.
func (t *table) dropPoint(h uint64) {
	if cur, ok := t.points.get(h); ok && cur != ambiguous {
		t.points.delete(h)
	}
}

// decode returns the entity at l.
func (s *Service) decode(a *arena, l loc) api.Entity {
	pk, rk := a.keys(l)
	return s.names.decode(pk, rk, a.body(l))
}

// writer applies the writes of one operation or transaction to its table in place, with an
// undo log; the caller holds the table's write lock and ends with commit or rollback.
type writer struct {
	s         *Service
	t         *table
	liveDelta int
	changes   []pointChange // applied to the point index by commit
	undo      []undoStep    // reverted by rollback
	freed     []uint32      // ids of deleted entities, freed by commit
}

// pointChange is one change to the point index, applied when the writer commits.
type pointChange struct {
	h       uint64 // the point hash of (pk, rk)
	pk, rk  string
	at      loc
	deleted bool
}

type undoKind uint8

const (
	undoInsert undoKind = iota
	undoReplace
	undoDelete
)

// undoStep is one write to revert: the entity id and where its bytes lay before.
type undoStep struct {
	kind undoKind
	id   uint32
	prev loc
}

// beginWrite returns t's writer, reset; the caller holds t's write lock.
func (t *table) beginWrite(s *Service) *writer {
	w := &t.w
	w.s, w.t = s, t
	return w
}

// store checks the entity that would be stored, stamps it with the next tick and puts it
// in the table, replacing the entity at old when exists.
func (w *writer) store(h uint64, pk, rk string, props map[string]api.Value, old loc, exists bool) (loc, *spec.Error) {
	buf, count, size := w.s.names.encodeEntity(w.t.scratch, pk, rk, props)
	w.t.scratch = buf
	if serr := checkStoredSize(count, size); serr != nil {
		return loc{}, serr
	}
	return w.put(h, pk, rk, buf, old, exists), nil
}

// merge checks the entity that merging props into the entity at old would store, stamps
// it with the next tick and puts it in the table.
func (w *writer) merge(h uint64, pk, rk string, props map[string]api.Value, old loc) (loc, *spec.Error) {
	buf, count, size := w.s.names.encodeMerge(w.t.scratch, pk, rk, props, w.t.arena.body(old))
	w.t.scratch = buf
	if serr := checkStoredSize(count, size); serr != nil {
		return loc{}, serr
	}
	return w.put(h, pk, rk, buf, old, true), nil
}

// put copies the encoded entity buf into the arena, as the entity at old when exists and
// as a new entity otherwise, and indexes it.
func (w *writer) put(h uint64, pk, rk string, buf []byte, old loc, exists bool) loc {
	t := w.t
	var id uint32
	if exists {
		id = bodyID(t.arena.body(old))
	} else {
		id = t.newID()
	}
	body := buf[len(pk)+len(rk):]
	setBodyTimestamp(body, w.s.nextTick())
	setBodyID(body, id)
	l := t.arena.put(unsafe.String(unsafe.SliceData(buf), len(buf)), len(pk), len(rk))
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil // do not keep a buffer sized for a rare large entity
	}
	t.slots[id] = l
	if exists {
		w.undo = append(w.undo, undoStep{kind: undoReplace, id: id, prev: old})
		w.liveDelta -= int(old.size)
	} else {
		t.indexInsert(id, pk, rk)
		w.undo = append(w.undo, undoStep{kind: undoInsert, id: id})
	}
	w.liveDelta += int(l.size)
	w.changes = append(w.changes, pointChange{h: h, pk: pk, rk: rk, at: l})
	return l
}

// remove takes the entity at old, with keys pk, rk and point hash h, out of the table.
func (w *writer) remove(h uint64, pk, rk string, old loc) {
	t := w.t
	id := bodyID(t.arena.body(old))
	t.indexDelete(id, pk, rk)
	w.undo = append(w.undo, undoStep{kind: undoDelete, id: id, prev: old})
	w.freed = append(w.freed, id)
	w.liveDelta -= int(old.size)
	w.changes = append(w.changes, pointChange{h: h, deleted: true})
}

// rollback reverts every write of w, newest first.
func (w *writer) rollback() {
	t := w.t
	for i := len(w.undo) - 1; i >= 0; i-- {
		u := w.undo[i]
		switch u.kind {
		case undoInsert:
			pk, rk := t.arena.keys(t.slots[u.id])
			t.indexDelete(u.id, pk, rk)
			t.slots[u.id] = loc{}
			t.freeIDs = append(t.freeIDs, u.id)
		case undoReplace:
			t.slots[u.id] = u.prev
		case undoDelete:
			t.slots[u.id] = u.prev
			pk, rk := t.arena.keys(u.prev)
			t.indexInsert(u.id, pk, rk)
		}
	}
	w.reset()
}

// commit makes w's writes the table's and compacts the table when dead bytes outweigh the
// live ones.
func (w *writer) commit() {
	t := w.t
	t.arena.live += w.liveDelta
	for _, c := range w.changes {
		if c.deleted {
			t.dropPoint(c.h)
		} else {
			t.setPoint(c.h, c.pk, c.rk, c.at)
			t.arena.slabLive[c.at.slab] += int(c.at.size)
		}
	}
	for _, u := range w.undo {
		if u.kind == undoReplace || u.kind == undoDelete {
			t.arena.retire(u.prev)
		}
	}
	for _, id := range w.freed {
		t.slots[id] = loc{}
		t.freeIDs = append(t.freeIDs, id)
	}
	w.reset()
	if dead := t.arena.written - t.arena.live; dead > compactMinDeadBytes && dead > t.arena.live {
		t.compact()
	}
}

func (w *writer) reset() {
	clear(w.changes) // drop the callers' key strings
	w.changes, w.undo, w.freed = w.changes[:0], w.undo[:0], w.freed[:0]
	w.liveDelta = 0
	w.s, w.t = nil, nil
}

// compact copies the live entities into a fresh arena, in key order (write lock held).
func (t *table) compact() {
	old := t.arena
	a := &arena{}
	t.tree.Ascend(func(r record) bool {
		l := t.slots[r.id]
		nl := a.put(old.bytes(l), int(l.pkLen), int(l.rkLen))
		a.slabLive[nl.slab] += int(nl.size)
		t.slots[r.id] = nl
		return true
	})
	a.live = a.written
	t.arena = a
	t.rebuildPoints()
}

// rebuildPoints recomputes the point index from the ordered index.
func (t *table) rebuildPoints() {
	t.points = pointIndex{}
	t.points.reserve(t.tree.Len())
	t.tree.Ascend(func(r record) bool {
		l := t.slots[r.id]
		pk, rk := t.arena.keys(l)
		t.setPoint(t.pointHash(pk, rk), pk, rk, l)
		return true
	})
}

// bodyID returns the entity id written in an encoded body.
func bodyID(body string) uint32 {
	return uint32(body[8]) | uint32(body[9])<<8 | uint32(body[10])<<16 | uint32(body[11])<<24
}

func setBodyID(body []byte, id uint32) { binary.LittleEndian.PutUint32(body[8:], id) }
