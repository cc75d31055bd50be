package store

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/internal/testseed"
	"github.com/tableconform/conform/reference/api"
)

// The store's executable specification: a naive model (a map of entities, a sort per scan,
// a copy of the map per transaction) and a Table receive the same random transactions of
// writes, merges and removes, committed or rolled back, with compactions and resets; every
// Find, Get, scan and count of the Table must agree with the model, and every Record read
// earlier must still read as it did.
//
// Replay a run with: go test -run TestTableAgreesWithModel ./reference/internal/store -seed N
// (or CONFORM_SEED=N).

var stepsFlag = flag.Int("model.steps", 0, "transactions per model run (default: a few seconds' worth)")

func TestTableAgreesWithModel(t *testing.T) {
	seed := testseed.Seed(t, "go test -run TestTableAgreesWithModel ./reference/internal/store")
	steps := *stepsFlag
	if steps == 0 {
		steps = 1500
		if testing.Short() {
			steps = 500
		}
	}
	configs := []Config{
		{CompactMinDeadBytes: 256},                   // compact often
		{CompactMinDeadBytes: 256, PointHashBits: 3}, // and most keys share a point hash
		{PointHashBits: 1},                           // look-ups go to the ordered index
		{},                                           // the production tuning
	}
	for run, c := range configs {
		m := newModelRun(t, seed+uint64(run), c)
		for step := range steps {
			m.step = step
			m.transaction()
			if t.Failed() {
				t.Fatalf("run %d (%+v) failed at step %d (seed %d); last operations:\n%s", run, c, step, seed, strings.Join(m.log, "\n"))
			}
		}
		if c.CompactMinDeadBytes > 0 && m.compactions == 0 {
			t.Fatalf("run %d (%+v): no compaction in %d transactions", run, c, steps)
		}
	}
}

// mEntity is an entity of the model.
type mEntity struct {
	props map[string]api.Value
	ticks int64
}

// heldRecord is a Record read earlier and the entity it read as then.
type heldRecord struct {
	rec  Record
	want api.Entity
}

type modelRun struct {
	t           *testing.T
	rng         *rand.Rand
	names       *Names
	tbl         *Table
	rows        map[api.Key]mEntity // the committed table
	ticks       int64
	pks, rks    []string
	held        []heldRecord
	step        int
	log         []string
	compactions int
}

func newModelRun(t *testing.T, seed uint64, c Config) *modelRun {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	names := NewNames()
	m := &modelRun{t: t, rng: rng, names: names, tbl: NewTable(names, c), rows: map[api.Key]mEntity{}}
	// Few partitions and rows, so that keys are written again and again; keys from the
	// pieces of the key-order test, so that the order's hard cases meet.
	for range 4 {
		m.pks = append(m.pks, validKey(rng))
	}
	for range 24 {
		m.rks = append(m.rks, validKey(rng))
	}
	return m
}

// validKey returns a random key of valid UTF-8: keys are (the reference refuses others),
// and only there is the key order a total order.
func validKey(rng *rand.Rand) string { return strings.ToValidUTF8(randomKey(rng), "\uFFFD") }

func (m *modelRun) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf("%5d ", m.step)+fmt.Sprintf(format, args...))
	if len(m.log) > 40 {
		m.log = m.log[1:]
	}
}

func (m *modelRun) randomKey() api.Key {
	return api.Key{PartitionKey: m.pks[m.rng.IntN(len(m.pks))], RowKey: m.rks[m.rng.IntN(len(m.rks))]}
}

var propNames = []string{"a", "b", "Name", "é", "Timestamp", "x𝄞"}

func (m *modelRun) randomProps() map[string]api.Value {
	props := map[string]api.Value{}
	for range m.rng.IntN(5) {
		var v api.Value
		switch m.rng.IntN(9) {
		case 0:
			v = api.Null(api.EdmString)
		case 1:
			v = api.String(strings.Repeat("é", m.rng.IntN(3)*m.rng.IntN(200)))
		case 2:
			v = api.Binary(make([]byte, m.rng.IntN(4)*m.rng.IntN(100)))
		case 3:
			v = api.Bool(m.rng.IntN(2) == 0)
		case 4:
			v = api.DateTimeTicks(m.rng.Int64N(3_155_378_975_999_999_999))
		case 5:
			v = api.Double(m.rng.NormFloat64())
		case 6:
			v = api.Guid(fmt.Sprintf("%08x-0000-4000-8000-%012x", m.rng.Uint32(), m.rng.Uint64()>>16))
		case 7:
			v = api.Int32(m.rng.Int32() - 1<<30)
		case 8:
			v = api.Int64(int64(m.rng.Uint64()))
		}
		props[propNames[m.rng.IntN(len(propNames))]] = v
	}
	return props
}

func (m *modelRun) entity(k api.Key, e mEntity) api.Entity {
	return api.Entity{PartitionKey: k.PartitionKey, RowKey: k.RowKey, Timestamp: api.TimeOfTicks(e.ticks),
		ETag: string(etagOf(e.ticks)), Properties: e.props}
}

// transaction runs one transaction of one to six writes against both, then commits or
// rolls it back, and checks the table.
func (m *modelRun) transaction() {
	arena := m.tbl.arena
	if m.rng.IntN(500) == 0 {
		m.logf("reset")
		m.tbl.Reset()
		m.rows = map[api.Key]mEntity{}
		m.check()
		return
	}
	rows := maps.Clone(m.rows) // the transaction's view
	w := m.tbl.Begin()
	for range 1 + m.rng.IntN(6) {
		k := m.randomKey()
		e := w.Find(k.PartitionKey, k.RowKey)
		want, ok := rows[k]
		if e.Found() != ok {
			m.t.Errorf("Find(%q, %q): found %v, the model %v", k.PartitionKey, k.RowKey, e.Found(), ok)
			return
		}
		if ok {
			m.checkRecord("Find", e.Record(), m.entity(k, want))
		}
		switch op := m.rng.IntN(10); {
		case op < 4: // replace or insert
			props := m.randomProps()
			m.ticks++
			m.logf("put %q %q %v at %d", k.PartitionKey, k.RowKey, props, m.ticks)
			rec := w.Put(w.Encode(e, props, keepSent), m.ticks, etagOf(m.ticks))
			rows[k] = mEntity{props: kept(props, nil), ticks: m.ticks}
			m.checkRecord("Put", rec, m.entity(k, rows[k]))
		case op < 7: // merge
			props := m.randomProps()
			m.ticks++
			m.logf("merge %q %q %v at %d", k.PartitionKey, k.RowKey, props, m.ticks)
			rec := w.Put(w.EncodeMerge(e, props, keepSent), m.ticks, etagOf(m.ticks))
			rows[k] = mEntity{props: kept(props, rows[k].props), ticks: m.ticks}
			m.checkRecord("Put", rec, m.entity(k, rows[k]))
		default:
			m.logf("remove %q %q (found %v)", k.PartitionKey, k.RowKey, ok)
			w.Remove(e)
			delete(rows, k)
		}
	}
	if m.rng.IntN(4) == 0 {
		m.logf("rollback")
		w.Rollback()
	} else {
		m.logf("commit")
		w.Commit()
		m.rows = rows
	}
	if m.tbl.arena != arena {
		m.compactions++
	}
	m.check()
}

// kept returns old with the properties of props that keepSent accepts laid over it.
func kept(props, old map[string]api.Value) map[string]api.Value {
	out := maps.Clone(old)
	if out == nil {
		out = map[string]api.Value{}
	}
	for name, v := range props {
		if keepSent(name, v) {
			if v.Type == api.EdmGuid {
				v = api.Guid(strings.ToLower(v.Str))
			}
			out[name] = v
		}
	}
	return out
}

// check compares the committed table with the model: count, point reads, scans from
// random keys, in whole or in a partition, and the records held from earlier.
func (m *modelRun) check() {
	if got := m.tbl.Len(); got != len(m.rows) {
		m.t.Errorf("Len() = %d, the model has %d", got, len(m.rows))
	}
	for range 4 {
		k := m.randomKey()
		rec, ok := m.tbl.Get(k.PartitionKey, k.RowKey)
		want, wantOK := m.rows[k]
		if ok != wantOK {
			m.t.Errorf("Get(%q, %q): found %v, the model %v", k.PartitionKey, k.RowKey, ok, wantOK)
			return
		}
		if ok {
			m.checkRecord("Get", rec, m.entity(k, want))
			if m.rng.IntN(4) == 0 {
				m.held = append(m.held, heldRecord{rec, m.entity(k, want)})
			}
		}
	}
	if len(m.held) > 50 {
		m.held = m.held[len(m.held)-50:]
	}
	for _, h := range m.held {
		m.checkRecord("a record held", h.rec, h.want)
	}

	keys := slices.SortedFunc(maps.Keys(m.rows), func(a, b api.Key) int {
		if c := api.CompareKeyStrings(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return api.CompareKeyStrings(a.RowKey, b.RowKey)
	})
	from := m.randomKey()
	if m.rng.IntN(3) == 0 {
		from.RowKey = validKey(m.rng) // not necessarily a key the table has
	}
	stop := m.rng.IntN(len(keys) + 2)
	var want []api.Key
	for _, k := range keys {
		if !k.Less(from) {
			want = append(want, k)
		}
	}
	m.compareScan(fmt.Sprintf("Ascend(%q, %q)", from.PartitionKey, from.RowKey), want, stop, func(visit func(Record) bool) {
		m.tbl.Ascend(from, visit)
	})
	pk := m.pks[m.rng.IntN(len(m.pks))]
	want = want[:0]
	for _, k := range keys {
		if k.PartitionKey == pk && !k.Less(from) {
			want = append(want, k)
		}
	}
	m.compareScan(fmt.Sprintf("AscendPartition(%q, %q, %q)", pk, from.PartitionKey, from.RowKey), want, stop, func(visit func(Record) bool) {
		m.tbl.AscendPartition(pk, from, visit)
	})
}

// compareScan runs scan with a visitor that stops after stop records, and compares what it
// visited with the first stop keys of want.
func (m *modelRun) compareScan(name string, want []api.Key, stop int, scan func(func(Record) bool)) {
	var got []Record
	scan(func(r Record) bool {
		got = append(got, r)
		return len(got) < stop
	})
	if stop == 0 {
		stop = 1 // the first visit happens before the visitor can stop
	}
	want = want[:min(stop, len(want))]
	if len(got) != len(want) {
		m.t.Errorf("%s visited %d records, the model %d", name, len(got), len(want))
		return
	}
	for i, k := range want {
		m.checkRecord(name, got[i], m.entity(k, m.rows[k]))
	}
}

func (m *modelRun) checkRecord(what string, rec Record, want api.Entity) {
	m.t.Helper()
	got := rec.Entity(m.names)
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || rec.PartitionKey() != want.PartitionKey ||
		rec.RowKey() != want.RowKey || got.ETag != want.ETag || rec.ETag() != want.ETag || !got.Timestamp.Equal(want.Timestamp) ||
		rec.Ticks() != api.Ticks(want.Timestamp) || !sameProperties(got.Properties, want.Properties) {
		m.t.Errorf("%s: %v, the model %v", what, got, want)
	}
	// The listed form: the same entity, its properties in name order, decoded over a
	// reused buffer's stale contents.
	stale := []api.Property{{Name: "stale", Value: api.String("x")}, {Name: "zz", Value: api.Int32(1)}}
	listed := api.ListedEntity{PartitionKey: "stale", ETag: "stale", Absent: api.AbsentRowKey, Properties: stale}
	rec.ListedInto(m.names, &listed)
	asMap := map[string]api.Value{}
	for i, p := range listed.Properties {
		if i > 0 && listed.Properties[i-1].Name >= p.Name {
			m.t.Errorf("%s: listed properties out of order: %v", what, listed.Properties)
		}
		asMap[p.Name] = p.Value
	}
	if listed.PartitionKey != want.PartitionKey || listed.RowKey != want.RowKey || listed.ETag != want.ETag ||
		!listed.Timestamp.Equal(want.Timestamp) || listed.Absent != 0 || len(asMap) != len(listed.Properties) ||
		!sameProperties(asMap, want.Properties) {
		m.t.Errorf("%s: listed %v, the model %v", what, listed, want)
	}
}
