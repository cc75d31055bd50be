package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

// YCSB is one YCSB core workload, declared as YCSB declares it: an operation mix, a key
// distribution and a record shape (https://github.com/brianfrankcooper/YCSB/wiki/Core-Workloads).
// In Table terms a record is an entity whose RowKey is the YCSB key and whose PartitionKey is
// derived from it, so every read names its PartitionKey; an update is a Merge of one field;
// a scan is a range of one partition from the chosen key on, one page of at most its length.
type YCSB struct {
	// Name is the core workload's letter, "A" to "F".
	Name string
	// Proportions of the operation mix; they add up to 1.
	Read, Update, Insert, Scan, ReadModifyWrite float64
	// Distribution chooses the record each operation touches.
	Distribution Distribution
	// RecordCount records are loaded before the run.
	RecordCount int
	// Partitions the records are spread over.
	Partitions int
	// FieldCount fields of FieldLength bytes make a record (YCSB: 10 × 100 bytes).
	FieldCount, FieldLength int
	// MaxScanLength bounds a scan; scan lengths are uniform in 1..MaxScanLength.
	MaxScanLength int
}

// YCSB's record shape and sizes.
const (
	ycsbFields        = 10
	ycsbFieldLength   = 100
	ycsbMaxScan       = 100
	ycsbRecords       = 1000
	ycsbPartitions    = 16
	ycsbLargeRecords  = 100_000
	ycsbLargePartions = 64
)

// YCSBCoreWorkloads returns workloads A–F with their documented mixes, under distribution d.
func YCSBCoreWorkloads(d Distribution, large bool) []YCSB {
	base := YCSB{Distribution: d, RecordCount: ycsbRecords, Partitions: ycsbPartitions,
		FieldCount: ycsbFields, FieldLength: ycsbFieldLength, MaxScanLength: ycsbMaxScan}
	if large {
		base.RecordCount, base.Partitions = ycsbLargeRecords, ycsbLargePartions
	}
	mix := func(name string, set func(w *YCSB)) YCSB {
		w := base
		w.Name = name
		set(&w)
		return w
	}
	return []YCSB{
		mix("A", func(w *YCSB) { w.Read, w.Update = 0.5, 0.5 }),   // update heavy
		mix("B", func(w *YCSB) { w.Read, w.Update = 0.95, 0.05 }), // read mostly
		mix("C", func(w *YCSB) { w.Read = 1 }),                    // read only
		mix("D", func(w *YCSB) { w.Read, w.Insert = 0.95, 0.05 }), // read latest
		mix("E", func(w *YCSB) { w.Scan, w.Insert = 0.95, 0.05 }), // short ranges
		mix("F", func(w *YCSB) { w.Read, w.ReadModifyWrite = 0.5, 0.5 }),
	}
}

// YCSBCases returns YCSB's core workloads A–F under each key distribution.
func YCSBCases(large bool) []Case {
	var out []Case
	for _, d := range Distributions() {
		for _, w := range YCSBCoreWorkloads(d, large) {
			out = append(out, w.Case())
		}
	}
	// Order by workload, then distribution.
	ordered := make([]Case, 0, len(out))
	for _, name := range []string{"A", "B", "C", "D", "E", "F"} {
		for _, c := range out {
			if c.Params[0].Value == name {
				ordered = append(ordered, c)
			}
		}
	}
	return ordered
}

// TagYCSBDefault groups the YCSB cases that run under YCSB's own request distribution for
// their workload (its workloada..workloadf files: zipfian, latest for D): six cases of the
// eighteen, the set `make bench` runs by default.
const TagYCSBDefault = "ycsb-default"

// defaultDistribution is YCSB's requestdistribution for the workload.
func (y YCSB) defaultDistribution() Distribution {
	if y.Name == "D" {
		return Latest
	}
	return Zipfian
}

// Case returns the workload as a benchmark case: YCSB/workload=A/dist=zipfian.
func (y YCSB) Case() Case {
	tags := []string{"ycsb"}
	if y.Distribution == y.defaultDistribution() {
		tags = append(tags, TagYCSBDefault)
	}
	return Case{Family: "YCSB", Params: []Param{{"workload", y.Name}, {"dist", string(y.Distribution)}}, Tags: tags,
		setup: func(ctx context.Context, env *Env, table string) (*workload, error) { return y.setup(ctx, env, table) }}
}

// Validate reports a workload whose mix does not add up or whose shape is empty.
func (y YCSB) Validate() error {
	sum := y.Read + y.Update + y.Insert + y.Scan + y.ReadModifyWrite
	if sum < 0.999 || sum > 1.001 {
		return fmt.Errorf("ycsb %s: the operation mix adds up to %.3f, not 1", y.Name, sum)
	}
	if y.RecordCount <= 0 || y.Partitions <= 0 || y.FieldCount <= 0 || y.FieldLength <= 0 {
		return fmt.Errorf("ycsb %s: record count, partitions and record shape must be positive", y.Name)
	}
	if y.Scan > 0 && y.MaxScanLength <= 0 {
		return fmt.Errorf("ycsb %s: scans need a MaxScanLength", y.Name)
	}
	_, err := newChooser(y.Distribution)
	return err
}

// key returns the keys of record n: the RowKey is YCSB's hashed key "user…", the
// PartitionKey a bucket of the same hash.
func (y YCSB) key(n int64) (string, string) {
	h := fnv64(uint64(n))
	return fmt.Sprintf("u%03d", h%uint64(y.Partitions)), fmt.Sprintf("user%020d", h)
}

func fieldName(f int) string { return fmt.Sprintf("field%d", f) }

// fieldValue is FieldLength bytes that start with the record's RowKey and the field's
// name, so a read of another record's or another field's data is caught.
func (y YCSB) fieldValue(rk string, f int, version uint64) string {
	var b strings.Builder
	b.Grow(y.FieldLength)
	fmt.Fprintf(&b, "%s:%d:%d:", rk, f, version)
	for b.Len() < y.FieldLength {
		b.WriteByte(byte('a' + b.Len()%26))
	}
	return b.String()[:y.FieldLength]
}

func (y YCSB) record(n int64, version uint64) api.Entity {
	pk, rk := y.key(n)
	props := make(map[string]api.Value, y.FieldCount)
	for f := 0; f < y.FieldCount; f++ {
		props[fieldName(f)] = api.String(y.fieldValue(rk, f, version))
	}
	return api.NewEntity(pk, rk, props)
}

// checkRecord checks that e is a record with keys (pk, rk): always its keys, in depth
// every field's shape.
func (y YCSB) checkRecord(e api.Entity, pk, rk string, deep bool) error {
	if e.PartitionKey != pk || e.RowKey != rk {
		return wrong("asked for (%s, %s), got (%s, %s)", pk, rk, e.PartitionKey, e.RowKey)
	}
	if !deep {
		return nil
	}
	if len(e.Properties) != y.FieldCount {
		return wrong("(%s, %s) has %d fields, want %d", pk, rk, len(e.Properties), y.FieldCount)
	}
	for f := 0; f < y.FieldCount; f++ {
		v := e.Properties[fieldName(f)].Str
		if len(v) != y.FieldLength || !strings.HasPrefix(v, fmt.Sprintf("%s:%d:", rk, f)) {
			return wrong("(%s, %s) %s holds data that was never written there: %.40q", pk, rk, fieldName(f), v)
		}
	}
	return nil
}

type ycsbOp int

const (
	opRead ycsbOp = iota
	opUpdate
	opInsert
	opScan
	opRMW
)

func (y YCSB) pick(r *rand.Rand) ycsbOp {
	u := r.Float64()
	for _, c := range []struct {
		p  float64
		op ycsbOp
	}{{y.Read, opRead}, {y.Update, opUpdate}, {y.Insert, opInsert}, {y.Scan, opScan}} {
		if u < c.p {
			return c.op
		}
		u -= c.p
	}
	if y.ReadModifyWrite > 0 {
		return opRMW
	}
	return opRead
}

func (y YCSB) setup(ctx context.Context, env *Env, table string) (*workload, error) {
	if env.Quick {
		y.RecordCount, y.Partitions = 200, 4
	}
	if err := y.Validate(); err != nil {
		return nil, err
	}
	// Load: group records by partition.
	byPart := make([][]int64, y.Partitions)
	for n := int64(0); n < int64(y.RecordCount); n++ {
		h := fnv64(uint64(n)) % uint64(y.Partitions)
		byPart[h] = append(byPart[h], n)
	}
	err := loadPartitions(ctx, env.Backend, table, y.Partitions, func(p int) []api.Entity {
		es := make([]api.Entity, len(byPart[p]))
		for i, n := range byPart[p] {
			es[i] = y.record(n, 0)
		}
		return es
	})
	if err != nil {
		return nil, err
	}
	acked := newAckCounter(int64(y.RecordCount))
	return &workload{step: func(w *Worker) error {
		c := w.chooser(y.Distribution)
		op := y.pick(w.Rand)
		if op == opInsert {
			n := acked.reserve()
			defer acked.ack(n)
			e := y.record(n, w.Rand.Uint64())
			out, err := w.B.InsertEntity(w.Ctx, w.Table, e)
			if err != nil {
				return err
			}
			if out.RowKey != e.RowKey || out.ETag == "" {
				return wrong("insert of (%s, %s) returned (%s, %s) with ETag %q", e.PartitionKey, e.RowKey, out.PartitionKey, out.RowKey, out.ETag)
			}
			w.later(readBack(w.Table, e.PartitionKey, e.RowKey, func(got api.Entity) error {
				return y.checkRecord(got, e.PartitionKey, e.RowKey, true)
			}))
			return nil
		}
		pk, rk := y.key(c.next(w.Rand, acked.readable()))
		switch op {
		case opScan:
			return y.scan(w, pk, rk)
		case opUpdate:
			return y.update(w, pk, rk)
		case opRMW:
			e, err := w.B.GetEntity(w.Ctx, w.Table, pk, rk, nil)
			if err != nil {
				return err
			}
			if err := y.checkRecord(e, pk, rk, w.deep()); err != nil {
				return err
			}
			return y.update(w, pk, rk)
		}
		e, err := w.B.GetEntity(w.Ctx, w.Table, pk, rk, nil)
		if err != nil {
			return err
		}
		return y.checkRecord(e, pk, rk, w.deep())
	}}, nil
}

// update merges one field with a new value; the record must keep every other field.
func (y YCSB) update(w *Worker, pk, rk string) error {
	f := w.Rand.IntN(y.FieldCount)
	e := api.NewEntity(pk, rk, map[string]api.Value{fieldName(f): api.String(y.fieldValue(rk, f, w.Rand.Uint64()))})
	etag, err := w.B.UpdateEntity(w.Ctx, w.Table, e, api.Merge, api.IfMatchAny)
	if err != nil {
		return err
	}
	if etag == "" {
		return wrong("merge of (%s, %s) returned no ETag", pk, rk)
	}
	w.later(readBack(w.Table, pk, rk, func(got api.Entity) error { return y.checkRecord(got, pk, rk, true) }))
	return nil
}

// scan reads one page of at most a random length from (pk, rk) on, within the partition.
func (y YCSB) scan(w *Worker, pk, rk string) error {
	n := 1 + w.Rand.IntN(y.MaxScanLength)
	page, err := w.B.QueryEntities(w.Ctx, w.Table, api.Query{
		Filter: fmt.Sprintf("PartitionKey eq %s and RowKey ge %s", quote(pk), quote(rk)), Top: api.OptionalTop(n)})
	if err != nil {
		return err
	}
	es := page.Entities
	if len(es) == 0 || len(es) > n {
		return wrong("scan of %d from (%s, %s) returned %d entities", n, pk, rk, len(es))
	}
	if err := checkKeyOrder(es, nil); err != nil {
		return err
	}
	if err := y.checkRecord(es[0], pk, rk, w.deep()); err != nil {
		return err
	}
	for _, e := range es {
		if e.PartitionKey != pk || e.RowKey < rk {
			return wrong("scan from (%s, %s) returned (%s, %s)", pk, rk, e.PartitionKey, e.RowKey)
		}
	}
	return nil
}
