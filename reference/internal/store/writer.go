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
// found. Finds see the transaction's own earlier writes.
type Writer struct {
	t         *Table
	liveDelta int
	changes   []pointChange // applied to the point index by Commit
	undo      []undoStep    // reverted by Rollback
	freed     []uint32      // ids of removed entities, freed by Commit
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
}

// Found reports whether an entity is stored under the entry's key.
func (e Entry) Found() bool { return e.found }

// Record returns the entity stored under the entry's key (the zero Record if none).
func (e Entry) Record() Record { return e.rec }

// Find returns the entry of the key (pk, rk), as the transaction has left it so far.
func (w *Writer) Find(pk, rk string) Entry {
	t := w.t
	h := t.pointHash(pk, rk)
	e := Entry{h: h, pk: pk, rk: rk}
	if l, written, ok := w.written(h, pk, rk); written {
		e.at, e.found = l, ok
	} else {
		e.at, e.found = t.lookupHashed(h, pk, rk)
	}
	if e.found {
		e.rec = t.arena.record(e.at)
	}
	return e
}

// written finds the transaction's last write of (pk, rk), whose point hash is h: written
// says there is one, and ok that it stored the entity at l rather than removed it. The point
// index describes the committed table only.
func (w *Writer) written(h uint64, pk, rk string) (l loc, written, ok bool) {
	for i := len(w.changes) - 1; i >= 0; i-- {
		if c := &w.changes[i]; c.h == h && c.pk == pk && c.rk == rk {
			return c.at, true, !c.deleted
		}
	}
	return loc{}, false, false
}

// Encoded is an entity encoded for Put, with what the caller checks before it is stored.
// It lies in the writer's buffer, good until the writer's next Encode or Put.
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
func (w *Writer) Encode(e Entry, props map[string]api.Value, keep Keep) Encoded {
	t := w.t
	buf, count, size := t.names.encodeEntity(t.scratch, e.pk, e.rk, props, keep)
	t.scratch = buf
	return Encoded{Properties: count, Size: size, entry: e, buf: buf}
}

// EncodeMerge encodes the entity that Put would store at entry e when props are laid over
// what e holds: the properties of props that keep accepts, and every stored property none of
// them names. At an entry with no entity it is Encode.
func (w *Writer) EncodeMerge(e Entry, props map[string]api.Value, keep Keep) Encoded {
	if !e.found {
		return w.Encode(e, props, keep)
	}
	t := w.t
	buf, count, size := t.names.encodeMerge(t.scratch, e.pk, e.rk, props, keep, e.rec.body())
	t.scratch = buf
	return Encoded{Properties: count, Size: size, entry: e, buf: buf}
}

// Put stores enc at its entry, replacing the entity there, with the Timestamp ticks and
// the ETag etag (at most 255 bytes), and returns the record stored.
func (w *Writer) Put(enc Encoded, ticks int64, etag []byte) Record {
	t := w.t
	e := enc.entry
	if len(etag) > math.MaxUint8 || len(e.pk) > math.MaxUint16 || len(e.rk) > math.MaxUint16 {
		panic("store: key or ETag too long to store")
	}
	var id uint32
	if e.found {
		id = bodyID(e.rec.body())
	} else {
		id = t.newID()
	}
	buf := stampBody(enc.buf, len(e.pk)+len(e.rk), ticks, id, etag)
	l := t.arena.put(stringOf(buf), len(e.pk), len(e.rk))
	t.scratch = buf
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil // do not keep a buffer sized for a rare large entity
	}
	t.slots[id] = l
	if e.found {
		w.undo = append(w.undo, undoStep{kind: undoReplace, id: id, prev: e.at})
		w.liveDelta -= int(e.at.size)
	} else {
		t.indexInsert(id, e.pk, e.rk)
		w.undo = append(w.undo, undoStep{kind: undoInsert, id: id})
	}
	w.liveDelta += int(l.size)
	w.changes = append(w.changes, pointChange{h: e.h, pk: e.pk, rk: e.rk, at: l})
	return t.arena.record(l)
}

// Remove takes the entity at entry e, which has one, out of the table.
func (w *Writer) Remove(e Entry) {
	if !e.found {
		return
	}
	t := w.t
	id := bodyID(e.rec.body())
	t.indexDelete(id, e.pk, e.rk)
	w.undo = append(w.undo, undoStep{kind: undoDelete, id: id, prev: e.at})
	w.freed = append(w.freed, id)
	w.liveDelta -= int(e.at.size)
	w.changes = append(w.changes, pointChange{h: e.h, pk: e.pk, rk: e.rk, deleted: true})
}

// Rollback reverts every write of w, newest first, and ends it.
func (w *Writer) Rollback() {
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

// Commit makes w's writes the table's, and ends it. It compacts the table when dead bytes
// outweigh the live ones.
func (w *Writer) Commit() {
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
	if dead := t.arena.written - t.arena.live; dead > t.compact && dead > t.arena.live {
		t.compactTable()
	}
}

func (w *Writer) reset() {
	clear(w.changes) // drop the callers' key strings
	w.changes, w.undo, w.freed = w.changes[:0], w.undo[:0], w.freed[:0]
	w.liveDelta = 0
	w.t = nil
}
