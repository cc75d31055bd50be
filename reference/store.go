package reference

import (
	"hash/maphash"
	"math"
	"unsafe"

	"github.com/google/btree"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Storage of one table. The encoded entities (codec.go) lie in an arena of append-only
// slabs; the index is a google/btree of records, each naming where an entity's bytes lie.
// Records hold no pointer (except look-up probes, which are never stored), so the garbage
// collector does not trace a million entities, and the bytes of an entity are never
// rewritten once written: a decoded entity shares its strings with the arena safely, and a
// reader holding the table's read lock sees a consistent index. Replaced and deleted
// entities leave dead bytes behind; when they outweigh the live ones the table is compacted
// into a fresh arena.

// loc is where an entity's bytes lie in a table's arena.
type loc struct {
	slab, off    uint32
	pkLen, rkLen uint16 // stored keys are at most 1536 bytes of UTF-8 (spec.MaxKeyBytes)
	size         uint32 // the entity's bytes: keys and body
}

// record is one entry of a table's ordered index.
type record struct {
	probe *api.Key // a look-up key; nil in every stored record
	loc
}

// probe returns a record that sorts where the entity (pk, rk) sorts, for index look-ups.
func probe(pk, rk string) record { return record{probe: &api.Key{PartitionKey: pk, RowKey: rk}} }

// slabBytes is the size of an arena slab; a larger entity gets a slab of its own.
const slabBytes = 1 << 20

// compactMinDeadBytes is the dead weight below which a table is never compacted (a
// variable so that tests can compact often).
var compactMinDeadBytes = 8 << 20

// arena holds the bytes of one table's entities. It is guarded by the table's lock: readers
// hold the read lock, writers the write lock.
type arena struct {
	slabs   [][]byte
	written int // bytes ever put
	live    int // bytes of the records in the table's index
}

// newIndex returns an empty arena and its index.
func newIndex() (*arena, *btree.BTreeG[record]) {
	a := &arena{}
	return a, btree.NewG(btreeDegree, a.less)
}

// put copies an entity's encoding (keys then body) into the arena.
func (a *arena) put(b []byte, pkLen, rkLen int) record {
	n := len(b)
	if k := len(a.slabs) - 1; k < 0 || cap(a.slabs[k])-len(a.slabs[k]) < n {
		a.slabs = append(a.slabs, make([]byte, 0, max(slabBytes, n)))
	}
	k := len(a.slabs) - 1
	off := len(a.slabs[k])
	a.slabs[k] = append(a.slabs[k], b...)
	a.written += n
	return record{loc: loc{slab: uint32(k), off: uint32(off), pkLen: uint16(pkLen), rkLen: uint16(rkLen), size: uint32(n)}}
}

// bytes returns r's bytes, shared with the arena (they are never rewritten).
func (a *arena) bytes(r record) string {
	return unsafe.String(&a.slabs[r.slab][r.off], int(r.size))
}

// keys returns r's PartitionKey and RowKey.
func (a *arena) keys(r record) (pk, rk string) {
	if r.probe != nil {
		return r.probe.PartitionKey, r.probe.RowKey
	}
	b := a.bytes(r)
	return b[:r.pkLen], b[r.pkLen : int(r.pkLen)+int(r.rkLen)]
}

// body returns r's encoded body.
func (a *arena) body(r record) string {
	return a.bytes(r)[int(r.pkLen)+int(r.rkLen):]
}

// less is the index order: PartitionKey, then RowKey, each by api.CompareKeyStrings.
func (a *arena) less(x, y record) bool {
	xpk, xrk := a.keys(x)
	ypk, yrk := a.keys(y)
	if c := api.CompareKeyStrings(xpk, ypk); c != 0 {
		return c < 0
	}
	return api.CompareKeyStrings(xrk, yrk) < 0
}

// The point index maps a hash of an entity's keys to its loc, so that Get and the writes
// find an entity without descending the ordered index. A hash shared by two keys maps to
// ambiguous, which sends look-ups of that hash to the ordered index. It describes the
// committed index only; a transaction may use it too, since it addresses each entity at
// most once.

// ambiguous marks a hash shared by more than one entity.
var ambiguous = loc{slab: math.MaxUint32}

// pointHashMask narrows the point hash; tests narrow it to force shared hashes.
var pointHashMask = ^uint64(0)

func (t *table) pointHash(pk, rk string) uint64 {
	return (maphash.String(t.seed, pk) ^ (maphash.String(t.seed, rk) * 0x9e3779b97f4a7c15)) & pointHashMask
}

// lookup finds the committed entity (pk, rk); the caller holds t's lock.
func (t *table) lookup(pk, rk string) (record, bool) {
	l, ok := t.points[t.pointHash(pk, rk)]
	switch {
	case !ok:
		return record{}, false
	case l == ambiguous:
		return t.tree.Get(probe(pk, rk))
	}
	r := record{loc: l}
	if spk, srk := t.arena.keys(r); spk != pk || srk != rk {
		return record{}, false
	}
	return r, true
}

// setPoint records that (pk, rk) now lies at l.
func (t *table) setPoint(pk, rk string, l loc) {
	h := t.pointHash(pk, rk)
	if cur, ok := t.points[h]; ok {
		if cur == ambiguous {
			return
		}
		if spk, srk := t.arena.keys(record{loc: cur}); spk != pk || srk != rk {
			l = ambiguous
		}
	}
	t.points[h] = l
}

// dropPoint records that (pk, rk) is gone.
func (t *table) dropPoint(pk, rk string) {
	h := t.pointHash(pk, rk)
	if cur, ok := t.points[h]; ok && cur != ambiguous {
		delete(t.points, h)
	}
}

// decode returns the entity r holds.
func (s *Service) decode(a *arena, r record) api.Entity {
	pk, rk := a.keys(r)
	return s.names.decode(pk, rk, a.body(r))
}

// writer applies writes to one version of a table's index: the table's own (single
// operations) or a clone (a transaction). The caller holds the table's write lock.
type writer struct {
	s         *Service
	t         *table
	tree      *btree.BTreeG[record]
	liveDelta int
	changes   []pointChange
}

// pointChange is one change to the point index, applied when the writer commits.
type pointChange struct {
	pk, rk  string
	at      loc
	deleted bool
}

// insert stores the validated entity e; an existing entity is 409 EntityAlreadyExists.
func (w *writer) insert(e api.Entity) (record, *spec.Error) {
	if _, found := w.t.lookup(e.PartitionKey, e.RowKey); found {
		return record{}, spec.ErrEntityAlreadyExists.New()
	}
	return w.store(e.PartitionKey, e.RowKey, e.Properties)
}

// update replaces or merges the validated entity e; ifMatch "" is an upsert.
func (w *writer) update(e api.Entity, mode api.UpdateMode, ifMatch string) (record, *spec.Error) {
	old, found := w.t.lookup(e.PartitionKey, e.RowKey)
	switch {
	case !found && ifMatch == "":
		return w.store(e.PartitionKey, e.RowKey, e.Properties)
	case !found && ifMatch == api.IfMatchAny:
		return record{}, spec.ErrResourceNotFound.New()
	case !found:
		return record{}, errConditionalMissing()
	case ifMatch != "" && ifMatch != api.IfMatchAny && ifMatch != formatETag(bodyTicks(w.t.arena.body(old))):
		return record{}, spec.ErrUpdateCondition.New()
	}
	props := e.Properties
	if mode == api.Merge {
		props = w.s.decode(w.t.arena, old).Properties
		for name, v := range e.Properties {
			if storedProperty(name, v) {
				props[name] = v
			}
		}
	}
	return w.store(e.PartitionKey, e.RowKey, props)
}

// store checks the entity that would be stored, stamps it with the next tick and puts it
// in the index.
func (w *writer) store(pk, rk string, props map[string]api.Value) (record, *spec.Error) {
	if serr := checkStored(pk, rk, props); serr != nil {
		return record{}, serr
	}
	t := w.t
	t.scratch = w.s.names.encodeEntity(t.scratch, pk, rk, w.s.nextTick(), props)
	r := t.arena.put(t.scratch, len(pk), len(rk))
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil // do not keep a buffer sized for a rare large entity
	}
	if old, replaced := w.tree.ReplaceOrInsert(r); replaced {
		w.liveDelta -= int(old.size)
	}
	w.liveDelta += int(r.size)
	w.changes = append(w.changes, pointChange{pk: pk, rk: rk, at: r.loc})
	return r, nil
}

// delete removes an entity when ifMatch ("*" or an ETag) allows.
func (w *writer) delete(pk, rk, ifMatch string) *spec.Error {
	old, found := w.t.lookup(pk, rk)
	if !found {
		return spec.ErrResourceNotFound.New()
	}
	if ifMatch != api.IfMatchAny && ifMatch != formatETag(bodyTicks(w.t.arena.body(old))) {
		return spec.ErrUpdateCondition.New()
	}
	w.tree.Delete(old)
	w.liveDelta -= int(old.size)
	w.changes = append(w.changes, pointChange{pk: pk, rk: rk, deleted: true})
	return nil
}

// commit makes w's index the table's and compacts the table when dead bytes outweigh the
// live ones.
func (w *writer) commit() {
	t := w.t
	t.tree = w.tree
	t.arena.live += w.liveDelta
	for _, c := range w.changes {
		if c.deleted {
			t.dropPoint(c.pk, c.rk)
		} else {
			t.setPoint(c.pk, c.rk, c.at)
		}
	}
	w.liveDelta, w.changes = 0, nil
	if dead := t.arena.written - t.arena.live; dead > compactMinDeadBytes && dead > t.arena.live {
		t.compact()
	}
}

// compact copies the live entities into a fresh arena and index (write lock held).
func (t *table) compact() {
	old := t.arena
	a, tree := newIndex()
	t.tree.Ascend(func(r record) bool {
		tree.ReplaceOrInsert(a.put([]byte(old.bytes(r)), int(r.pkLen), int(r.rkLen)))
		return true
	})
	a.live = a.written
	t.arena, t.tree = a, tree
	t.rebuildPoints()
}

// rebuildPoints recomputes the point index from the ordered index.
func (t *table) rebuildPoints() {
	t.points = make(map[uint64]loc, t.tree.Len())
	t.tree.Ascend(func(r record) bool {
		pk, rk := t.arena.keys(r)
		t.setPoint(pk, rk, r.loc)
		return true
	})
}
