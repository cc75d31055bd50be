package store

import (
	"math"

	"github.com/tableconform/conform/reference/api"
)

// Writer applies the writes of one operation or transaction to its table in place, with an
// undo log, and ends with Commit or Rollback. Between Begin and that end it has the table to
// itself: the caller holds the table's write lock.
//
// A write goes in three steps, so that the caller decides between them: Find the key, Encode
// (or EncodeMerge) what the entity there would become, and Put it or Remove the entity
// found. Every write updates both indexes at once, so that a Find sees the transaction's
// earlier writes; Rollback puts back everything they changed.
type Writer struct {
	t         *Table
	liveDelta int
	undo      []undoStep // every write, reverted by Rollback, settled by Commit
	encoded   Encoded    // the entity last encoded
	ids       []uint32   // scratch: the name ids of a listed encoding
}

type undoKind uint8

const (
	undoInsert undoKind = iota
	undoReplace
	undoDelete
)

// undoStep is one write: the entity id, where its bytes lay before and where the write put
// them, and the point index's entry for its hash before the write.
type undoStep struct {
	kind       undoKind
	hadPoint   bool
	id         uint32
	prev, at   loc
	h          uint64
	pointEntry loc
}

// Begin returns t's writer; the caller has t to itself until the writer's Commit or
// Rollback.
func (t *Table) Begin() *Writer {
	w := &t.w
	w.t = t
	return w
}

// Entry is the place of one key in the table, as the writer found it: the entity stored
// there, if any. It is good until the writer's next write.
type Entry struct {
	h      uint64 // the point hash of (pk, rk)
	pk, rk string
	at     loc
	rec    Record
	found  bool

	point    loc  // the point index's entry for h, if hadPoint
	hadPoint bool // whether the point index had an entry for h
	// writes is how many writes the transaction had made when Find read the entry: Put and
	// Remove use what Find read, which a write in between may have changed.
	writes int
}

// Found reports whether an entity is stored under the entry's key.
func (e Entry) Found() bool { return e.found }

// Record returns the entity stored under the entry's key (the zero Record if none).
func (e Entry) Record() Record { return e.rec }

// Find returns the entry of the key (pk, rk), as the transaction has left it so far. The
// entry may be written (Put, Remove) only before any other write of the transaction: past
// one, Put and Remove panic rather than write on what the entry no longer says.
func (w *Writer) Find(pk, rk string) Entry {
	t := w.t
	h := t.pointHash(pk, rk)
	e := Entry{h: h, pk: pk, rk: rk, writes: len(w.undo)}
	e.point, e.hadPoint = t.points.get(h)
	if e.at, e.found = t.lookupPoint(e.point, e.hadPoint, pk, rk); e.found {
		e.rec = t.arena.record(e.at)
	}
	return e
}

// Encoded is an entity encoded for Put, with what the caller checks before it is stored.
// It lies in the writer, good until the writer's next Encode, EncodeMerge or Put.
type Encoded struct {
	// Properties is the number of properties it stores.
	Properties int
	// Size is its size by api.EntitySize's accounting.
	Size int

	entry Entry
	buf   []byte
}

// Encode encodes the entity that Put would store at entry e: the properties of props that
// keep accepts, and nothing of what e holds now. The values have been validated.
func (w *Writer) Encode(e Entry, props map[string]api.Value, keep Keep) *Encoded {
	t := w.t
	buf, count, size := t.names.encodeEntity(t.scratch, e.pk, e.rk, props, keep)
	t.scratch = buf
	w.encoded = Encoded{Properties: count, Size: size, entry: e, buf: buf}
	return &w.encoded
}

// EncodeMerge encodes the entity that Put would store at entry e when props are laid over
// what e holds: the properties of props that keep accepts, and every stored property none of
// them names. At an entry with no entity it is Encode.
func (w *Writer) EncodeMerge(e Entry, props map[string]api.Value, keep Keep) *Encoded {
	if !e.found {
		return w.Encode(e, props, keep)
	}
	t := w.t
	buf, count, size := t.names.encodeMerge(t.scratch, e.pk, e.rk, props, keep, e.rec.body())
	t.scratch = buf
	w.encoded = Encoded{Properties: count, Size: size, entry: e, buf: buf}
	return &w.encoded
}

// Listed is an entity's properties listed for EncodeListed and EncodeMergeListed, with
// what the caller decided and learnt of them as it validated them.
type Listed struct {
	// Properties are listed in name order, each name once.
	Properties []api.Property
	// IDs holds for each property Skip if it is not to be stored (the caller's Keep), else
	// the id Names.Interned gave its name, or NoID.
	IDs []uint32
	// Size is the size of the entity of the writer's keys and the properties to store, by
	// api.EntitySize's accounting.
	Size int
}

// EncodeListed is Encode of the properties l lists.
func (w *Writer) EncodeListed(e Entry, l *Listed) *Encoded {
	t := w.t
	buf, count, size, ids := t.names.encodeListed(t.scratch, e.pk, e.rk, l, w.ids)
	t.scratch, w.ids = buf, ids
	w.encoded = Encoded{Properties: count, Size: size, entry: e, buf: buf}
	return &w.encoded
}

// EncodeMergeListed is EncodeMerge of the properties l lists.
func (w *Writer) EncodeMergeListed(e Entry, l *Listed) *Encoded {
	if !e.found {
		return w.EncodeListed(e, l)
	}
	t := w.t
	buf, count, size, ids := t.names.encodeMergeListed(t.scratch, e.pk, e.rk, l, e.rec.body(), w.ids)
	t.scratch, w.ids = buf, ids
	w.encoded = Encoded{Properties: count, Size: size, entry: e, buf: buf}
	return &w.encoded
}

// checkFresh panics unless e was found after the transaction's last write (see Find).
func (w *Writer) checkFresh(e *Entry) {
	if e.writes != len(w.undo) {
		panic("store: an entry written after another write of its transaction; Find it again")
	}
}

// Put stores enc at its entry, replacing the entity there, with the Timestamp ticks and
// the ETag etag, and returns the record stored. It panics when enc exceeds the store's
// capacity (MaxProperties, MaxEntitySize), a key is longer than 65535 bytes or the ETag
// longer than 255: the caller refuses such entities first.
func (w *Writer) Put(enc *Encoded, ticks int64, etag []byte) Record {
	t := w.t
	e := &enc.entry
	if enc.Properties > MaxProperties || enc.Size > MaxEntitySize || len(etag) > math.MaxUint8 ||
		len(e.pk) > math.MaxUint16 || len(e.rk) > math.MaxUint16 {
		panic("store: an entity beyond the store's capacity")
	}
	w.checkFresh(e)
	var id uint32
	if e.found {
		id = bodyEntityID(e.rec.body())
	} else {
		id = t.newID()
	}
	buf := stampBody(enc.buf, len(e.pk)+len(e.rk), ticks, id, etag)
	l := t.arena.put(stringOf(buf), len(e.pk), len(e.rk))
	t.scratch = buf
	enc.buf = nil
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil // do not keep a buffer sized for a rare large entity
	}
	t.slots[id] = l
	u := undoStep{kind: undoInsert, id: id, at: l, h: e.h}
	if e.found {
		u.kind, u.prev = undoReplace, e.at
		w.liveDelta -= int(e.at.size)
	} else {
		t.indexInsert(id, e.pk, e.rk)
	}
	// setPoint, knowing what Find found: the entry for h is this entity's, another's (which
	// makes h ambiguous), already ambiguous, or none.
	switch {
	case e.hadPoint && e.point == ambiguous:
	case e.hadPoint && !e.found:
		t.points.set(e.h, ambiguous)
	default:
		t.points.set(e.h, l)
	}
	u.pointEntry, u.hadPoint = e.point, e.hadPoint
	w.undo = append(w.undo, u)
	w.liveDelta += int(l.size)
	return t.arena.record(l)
}

// Remove takes the entity at entry e, which has one, out of the table.
func (w *Writer) Remove(e Entry) {
	if !e.found {
		return
	}
	w.checkFresh(&e)
	t := w.t
	id := bodyEntityID(e.rec.body())
	t.indexDelete(id, e.pk, e.rk)
	u := undoStep{kind: undoDelete, id: id, prev: e.at, h: e.h}
	u.pointEntry, u.hadPoint = t.dropPoint(e.h)
	w.undo = append(w.undo, u)
	w.liveDelta -= int(e.at.size)
}

// Rollback reverts every write of w, newest first, and ends it.
func (w *Writer) Rollback() {
	t := w.t
	for i := len(w.undo) - 1; i >= 0; i-- {
		u := &w.undo[i]
		t.restorePoint(u.h, u.pointEntry, u.hadPoint)
		switch u.kind {
		case undoInsert:
			pk, rk := t.arena.keys(u.at)
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

// Commit makes w's writes the table's, and ends it: the bytes they replaced are dead, and
// the ids of the entities they removed free. It compacts the table when dead bytes outweigh
// the live ones.
func (w *Writer) Commit() {
	t := w.t
	a := t.arena
	a.live += w.liveDelta
	for i := range w.undo {
		if u := &w.undo[i]; u.kind != undoDelete {
			a.slabLive[u.at.slab] += int(u.at.size)
		}
	}
	// Only then retire what was replaced or removed: a slab is let go of when nothing in it
	// is live, and the transaction may have written into the slab of what it replaced.
	for i := range w.undo {
		u := &w.undo[i]
		switch u.kind {
		case undoReplace:
			a.retire(u.prev)
		case undoDelete:
			a.retire(u.prev)
			t.slots[u.id] = loc{}
			t.freeIDs = append(t.freeIDs, u.id)
		}
	}
	w.reset()
	if dead := a.written - a.live; dead > t.compact && dead > a.live {
		t.compactTable()
	}
}

func (w *Writer) reset() {
	w.undo = w.undo[:0]
	w.encoded = Encoded{} // drop the caller's key strings
	w.liveDelta = 0
	w.t = nil
}
