package store

import (
	"hash/maphash"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/tidwall/btree"

	"github.com/tableconform/conform/reference/api"
)

// Storage of one table. The encoded entities (codec.go) lie in an arena of append-only
// slabs (arena.go). Each entity has a stable id, written into its encoding, and the slot of
// that id says where its current bytes lie, so that replacing an entity moves no index
// entry. The ordered index is a B-tree (tidwall/btree) of records (partition id, entity id,
// RowKey prefix): a key after every other is appended to the last leaf, and each partition
// keeps the path its last insert took, so that keys written in order are placed with a few
// comparisons; the point index (points.go) maps a hash of the
// keys to the entity's bytes. Neither index holds a pointer, so the garbage collector does not trace a million
// entities, and the bytes of an entity are never rewritten once written: a Record, and an
// entity decoded from it, share the arena's bytes safely, and readers holding the table's
// read lock see a consistent table.
//
// Writes change the table in place and keep an undo log (writer.go), so that a
// transaction whose operation fails is rolled back before any reader can see it.

// Table is the storage of one table: its entities in key order (api.CompareKeyStrings, by
// PartitionKey then RowKey), with point look-ups by key. Keys are valid UTF-8, as the
// caller validates them: only there is that order a total order.
//
// A Table does no locking of its own. Its reading methods may run concurrently with each
// other; its Writer needs the table to itself, from Begin to Commit or Rollback. The caller
// holds a read-write lock accordingly.
type Table struct {
	names    *Names
	seed     maphash.Seed
	hashMask uint64 // narrows point hashes (Config)
	compact  int    // Config.CompactMinDeadBytes

	arena     *arena
	slots     []loc                 // where the bytes of each entity id lie; loc{} when free
	freeIDs   []uint32              // entity ids to reuse
	tree      *btree.BTreeG[record] // the ordered index
	parts     []partition           // the partitions by id
	freeParts []uint32              // partition ids to reuse
	partIDs   map[string]uint32     // partition ids by PartitionKey
	lastPart  uint32                // the partition of the last indexInsert, if it is still there
	points    pointIndex            // the point index
	scratch   []byte                // encoding buffer of the writer
	w         Writer                // the writer, reused
}

// Config tunes a Table; the zero Config is the production tuning. Tests narrow it to reach
// the rare paths often.
type Config struct {
	// CompactMinDeadBytes is the dead weight below which the table is never compacted
	// (0: 8 MiB).
	CompactMinDeadBytes int
	// PointHashBits, when non-zero, narrows the point index's hash to that many bits, so
	// that keys share hashes and look-ups go to the ordered index.
	PointHashBits int
}

// defaultCompactMinDeadBytes is the production Config.CompactMinDeadBytes.
const defaultCompactMinDeadBytes = 8 << 20

// NewTable returns an empty table whose property names are interned in names.
func NewTable(names *Names, c Config) *Table {
	t := &Table{names: names, seed: maphash.MakeSeed(), hashMask: math.MaxUint64, compact: c.CompactMinDeadBytes}
	if c.PointHashBits > 0 && c.PointHashBits < 64 {
		t.hashMask = 1<<c.PointHashBits - 1
	}
	if t.compact <= 0 {
		t.compact = defaultCompactMinDeadBytes
	}
	t.Reset()
	return t
}

// Reset empties t, which needs t to itself. Records read from t before stay valid.
func (t *Table) Reset() {
	t.arena = &arena{}
	t.tree = btree.NewBTreeGOptions(t.lessFunc(), btree.Options{Degree: btreeDegree, NoLocks: true})
	t.slots, t.freeIDs = nil, nil
	t.parts, t.freeParts = nil, nil
	t.partIDs = map[string]uint32{}
	t.lastPart = 0
	t.points = pointIndex{}
	t.scratch = nil
}

// btreeDegree is the index's branching factor: wide nodes keep the tree shallow for
// million-entity tables.
const btreeDegree = 32

// Len returns the number of entities in t.
func (t *Table) Len() int { return t.tree.Len() }

// Record is one stored entity as it lies in its table's arena: its keys and its encoded
// body. Its bytes are never rewritten, so a Record stays valid, unchanged, after the
// table's lock is released and after any later write, compaction or Reset. The zero
// Record is no entity.
type Record struct {
	bytes        string // keys then body, shared with the arena
	pkLen, rkLen uint16 // stored keys are short: the caller refuses long ones
}

// PartitionKey returns the record's PartitionKey.
func (r Record) PartitionKey() string { return r.bytes[:r.pkLen] }

// RowKey returns the record's RowKey.
func (r Record) RowKey() string { return r.bytes[r.pkLen : int(r.pkLen)+int(r.rkLen)] }

func (r Record) body() string { return r.bytes[int(r.pkLen)+int(r.rkLen):] }

// Ticks returns the Timestamp the record was written with, in api ticks.
func (r Record) Ticks() int64 { return bodyTicks(r.body()) }

// ETag returns the ETag the record was written with.
func (r Record) ETag() string { return bodyETag(r.body()) }

// Entity decodes the record, its property names from names (the table's): keys,
// Timestamp, ETag and properties. The entity is the caller's; its strings, a Binary's bytes
// among them, are shared with the arena (they are immutable). A Guid reads back in lower
// case.
func (r Record) Entity(names *Names) api.Entity { return r.EntityInto(names, nil) }

// EntityInto is Entity with the properties decoded into props, which must be empty (a map
// the caller recycles); a nil props gets a new map.
func (r Record) EntityInto(names *Names, props map[string]api.Value) api.Entity {
	k := int(r.pkLen) + int(r.rkLen)
	body := r.bytes[k:]
	return api.Entity{
		PartitionKey: r.bytes[:r.pkLen],
		RowKey:       r.bytes[r.pkLen:k],
		Timestamp:    api.TimeOfTicks(bodyTicks(body)),
		ETag:         bodyETag(body),
		Properties:   names.decodeProperties(body, props),
	}
}

// ListedInto decodes the record into e as EntityInto does, with its properties listed in
// name order instead of put in a map: e.Properties's array is reused (grown if need be), and
// every other field of e is overwritten.
func (r Record) ListedInto(names *Names, e *api.ListedEntity) {
	k := int(r.pkLen) + int(r.rkLen)
	body := r.bytes[k:]
	ps := names.appendProperties(e.Properties[:0], body)
	api.SortProperties(ps)
	*e = api.ListedEntity{
		PartitionKey: r.bytes[:r.pkLen],
		RowKey:       r.bytes[r.pkLen:k],
		Timestamp:    api.TimeOfTicks(bodyTicks(body)),
		ETag:         bodyETag(body),
		Properties:   ps,
	}
}

// record is one entry of a table's ordered index: PartitionKey order by partition, then
// RowKey order, decided by the RowKey's first sixteen bytes when they can and by the keys
// themselves when they cannot (Table.lessFunc). Sixteen bytes decide the order of the RowKeys
// clients make of a prefix and a counter, which share their first eight, without reading
// the keys.
type record struct {
	pid  uint32 // the entity's partition in Table.parts, or probePartition for a look-up probe
	id   uint32 // the entity's slot in Table.slots, or the probe's slot in probeKeys
	rkp  uint64 // keyPrefix2 of the RowKey: its first word
	rkp2 uint64 // and its second
}

// newRecord returns the index record of entity (or probe) id of partition pid, whose RowKey
// is rk.
func newRecord(pid, id uint32, rk string) record {
	r := record{pid: pid, id: id}
	r.rkp, r.rkp2 = keyPrefix2(rk)
	return r
}

// partition is one PartitionKey present in a table.
type partition struct {
	pk    string         // a copy, so that it does not hold an arena slab
	count int            // entities of the partition in the index
	hint  btree.PathHint // where in the index the partition's last insert went
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
				return newRecord(probePartition, uint32(slot), rk)
			}
		}
		runtime.Gosched() // every slot is lent: more concurrent seeks than slots
	}
}

func releaseProbe(r record) { probeKeys[r.id].Store(nil) }

// lessFunc returns the index order: PartitionKey, then RowKey, each by CompareKeys; records
// of one partition whose RowKey prefixes differ are decided without reading a key.
func (t *Table) lessFunc() func(x, y record) bool {
	return func(x, y record) bool {
		if x.pid != y.pid {
			if c := CompareKeys(t.partitionKey(x), t.partitionKey(y)); c != 0 {
				return c < 0
			}
		}
		if x.rkp != y.rkp {
			return x.rkp < y.rkp
		}
		if x.rkp2 != y.rkp2 {
			return x.rkp2 < y.rkp2
		}
		return CompareKeys(t.rowKey(x), t.rowKey(y)) < 0
	}
}

func (t *Table) partitionKey(r record) string {
	if r.pid == probePartition {
		return probeKeys[r.id].Load().PartitionKey
	}
	return t.parts[r.pid].pk
}

func (t *Table) rowKey(r record) string {
	if r.pid == probePartition {
		return probeKeys[r.id].Load().RowKey
	}
	_, rk := t.arena.keys(t.slots[r.id])
	return rk
}

// Ascend calls visit with each record at or after the key from, in key order, until visit
// returns false.
func (t *Table) Ascend(from api.Key, visit func(Record) bool) {
	start := acquireProbe(from.PartitionKey, from.RowKey)
	defer releaseProbe(start)
	t.tree.Ascend(start, func(r record) bool {
		return visit(t.arena.record(t.slots[r.id]))
	})
}

// AscendPartition is Ascend over the records of partition pk only: it visits those at or
// after from, and stops at the partition's end.
func (t *Table) AscendPartition(pk string, from api.Key, visit func(Record) bool) {
	pid, ok := t.partIDs[pk]
	if !ok {
		return
	}
	if from.PartitionKey != pk {
		if CompareKeys(from.PartitionKey, pk) > 0 {
			return
		}
		from = api.Key{PartitionKey: pk}
	}
	start := acquireProbe(from.PartitionKey, from.RowKey)
	defer releaseProbe(start)
	t.tree.Ascend(start, func(r record) bool {
		return r.pid == pid && visit(t.arena.record(t.slots[r.id]))
	})
}

// Get returns the record with keys pk and rk.
func (t *Table) Get(pk, rk string) (Record, bool) {
	l, ok := t.lookupHashed(t.pointHash(pk, rk), pk, rk)
	if !ok {
		return Record{}, false
	}
	return t.arena.record(l), true
}

// indexInsert puts entity id, whose keys are pk and rk, in the ordered index.
func (t *Table) indexInsert(id uint32, pk, rk string) {
	pid, ok := t.lastPart, false
	if int(pid) < len(t.parts) && t.parts[pid].count > 0 && t.parts[pid].pk == pk {
		ok = true // the partition inserted into last
	} else {
		pid, ok = t.partIDs[pk]
	}
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
	t.lastPart = pid
	p := &t.parts[pid]
	p.count++
	r := newRecord(pid, id, rk)
	if last, ok := t.tree.Max(); ok && t.tree.Less(last, r) {
		t.tree.Load(r) // after every key: appended to the last leaf, when it has room
		return
	}
	t.tree.SetHint(r, &p.hint)
}

// indexDelete takes entity id, whose keys are pk and rk, out of the ordered index.
func (t *Table) indexDelete(id uint32, pk, rk string) {
	pid, ok := t.partIDs[pk]
	if !ok {
		return
	}
	if _, found := t.tree.Delete(newRecord(pid, id, rk)); !found {
		return
	}
	if t.parts[pid].count--; t.parts[pid].count == 0 {
		delete(t.partIDs, pk)
		t.parts[pid] = partition{}
		t.freeParts = append(t.freeParts, pid)
	}
}

// newID returns a free entity id.
func (t *Table) newID() uint32 {
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
// ambiguous, which sends look-ups of that hash to the ordered index. A writer changes it as
// it writes, and its rollback puts back the entries it changed.

// ambiguous marks a hash shared by more than one entity.
var ambiguous = loc{slab: math.MaxUint32}

func (t *Table) pointHash(pk, rk string) uint64 {
	return (maphash.String(t.seed, pk) ^ (maphash.String(t.seed, rk) * 0x9e3779b97f4a7c15)) & t.hashMask
}

// lookupHashed finds the entity (pk, rk) given h, its point hash.
func (t *Table) lookupHashed(h uint64, pk, rk string) (loc, bool) {
	l, ok := t.points.get(h)
	return t.lookupPoint(l, ok, pk, rk)
}

// lookupPoint is lookupHashed given the point index's entry for h, l if ok.
func (t *Table) lookupPoint(l loc, ok bool, pk, rk string) (loc, bool) {
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

// setPoint records that (pk, rk), whose point hash is h, now lies at l, and returns the
// entry for h it changed (restorePoint puts it back).
func (t *Table) setPoint(h uint64, pk, rk string, l loc) (prior loc, had bool) {
	prior, had = t.points.get(h)
	if had {
		if prior == ambiguous {
			return prior, had
		}
		if spk, srk := t.arena.keys(prior); spk != pk || srk != rk {
			l = ambiguous
		}
	}
	t.points.set(h, l)
	return prior, had
}

// dropPoint records that the entity whose point hash is h is gone, and returns the entry for
// h it changed.
func (t *Table) dropPoint(h uint64) (prior loc, had bool) {
	prior, had = t.points.get(h)
	if had && prior != ambiguous {
		t.points.delete(h)
	}
	return prior, had
}

// restorePoint puts back the entry for h that setPoint or dropPoint changed.
func (t *Table) restorePoint(h uint64, prior loc, had bool) {
	if had {
		t.points.set(h, prior)
	} else {
		t.points.delete(h)
	}
}

// compactTable copies the live entities into a fresh arena, in key order.
func (t *Table) compactTable() {
	old := t.arena
	a := &arena{}
	t.tree.Scan(func(r record) bool {
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
func (t *Table) rebuildPoints() {
	t.points = pointIndex{}
	t.points.reserve(t.tree.Len())
	t.tree.Scan(func(r record) bool {
		l := t.slots[r.id]
		pk, rk := t.arena.keys(l)
		t.setPoint(t.pointHash(pk, rk), pk, rk, l)
		return true
	})
}
