package reference

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/internal/testseed"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// The differential test drives long random sequences of operations against the Service and
// against a deliberately naive model (a map per table and a sort per query) and compares
// every answer: status, code, failed index, entities, pages and continuations.
//
// Replay a run with: go test -run TestDifferential ./reference/ -seed N (or CONFORM_SEED=N).

var stepsFlag = flag.Int("diff.steps", 0, "operations per differential run (default: a few seconds' worth)")

func TestDifferential(t *testing.T) {
	seed := testseed.Seed(t, "go test -run TestDifferential ./reference/")
	steps := *stepsFlag
	if steps == 0 {
		steps = 3000
		if testing.Short() {
			steps = 500
		}
	}
	for run := range 4 {
		tuning := store.Config{CompactMinDeadBytes: 512} // compact often, so that compaction is compared too
		if run >= 2 {
			tuning.PointHashBits = 3 // most keys share a point hash: look-ups go to the ordered index
		}
		opts := []Option{withStoreConfig(tuning)}
		if run%2 == 1 {
			opts = append(opts, WithPartitionBoundaryPages(true))
		}
		d := newDiff(t, seed+uint64(run), run%2 == 1, opts...)
		for step := range steps {
			d.step = step
			d.randomOp()
			if t.Failed() {
				t.Fatalf("run %d failed at step %d (seed %d); last operations:\n%s", run, step, seed, strings.Join(d.log, "\n"))
			}
		}
	}
}

// diff holds the service, the model and the generator.
type diff struct {
	t      *testing.T
	rng    *rand.Rand
	clock  *fakeClock
	svc    *Service
	model  *model
	etags  []string // every ETag seen, for stale If-Match values
	step   int
	log    []string
	checks int
}

const diffHold = time.Microsecond

func newDiff(t *testing.T, seed uint64, boundaryPages bool, opts ...Option) *diff {
	clock := newFakeClock()
	opts = append([]Option{WithClock(clock.Now), WithDeleteHold(diffHold)}, opts...)
	return &diff{
		t:     t,
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock: clock,
		svc:   New(opts...),
		model: &model{clock: clock, hold: diffHold, boundaryPages: boundaryPages,
			tables: map[string]*mTable{}, deleting: map[string]time.Time{}},
	}
}

func (d *diff) logf(format string, args ...any) {
	d.log = append(d.log, fmt.Sprintf("%5d ", d.step)+fmt.Sprintf(format, args...))
	if len(d.log) > 30 {
		d.log = d.log[1:]
	}
}

// ---- the model ----

type mEntity struct {
	props map[string]api.Value
	ts    time.Time
}

func (e mEntity) etag() string {
	return `W/"datetime'` + strings.ReplaceAll(api.FormatDateTime7(e.ts), ":", "%3A") + `'"`
}

type mTable struct {
	name string
	rows map[api.Key]mEntity
}

type model struct {
	clock         *fakeClock
	hold          time.Duration
	boundaryPages bool
	last          time.Time
	tables        map[string]*mTable
	deleting      map[string]time.Time
}

func (m *model) tick() time.Time {
	ts := m.clock.Now().UTC().Truncate(100 * time.Nanosecond)
	if !ts.After(m.last) {
		ts = m.last.Add(100 * time.Nanosecond)
	}
	m.last = ts
	return ts
}

func (m *model) table(name string) (*mTable, *spec.Error) {
	if t, ok := m.tables[strings.ToLower(name)]; ok {
		return t, nil
	}
	return nil, spec.ErrTableNotFound.New()
}

func (m *model) createTable(name string) *spec.Error {
	if strings.Contains(name, "_") {
		return spec.ErrInvalidResourceName.New()
	}
	lower := strings.ToLower(name)
	if _, ok := m.tables[lower]; ok {
		return spec.ErrTableAlreadyExists.New()
	}
	if until, ok := m.deleting[lower]; ok && m.clock.Now().Before(until) {
		return spec.ErrTableBeingDeleted.New()
	}
	m.tables[lower] = &mTable{name: name, rows: map[api.Key]mEntity{}}
	return nil
}

func (m *model) deleteTable(name string) *spec.Error {
	lower := strings.ToLower(name)
	if _, ok := m.tables[lower]; !ok {
		return spec.ErrResourceNotFound.New()
	}
	delete(m.tables, lower)
	m.deleting[lower] = m.clock.Now().Add(m.hold)
	return nil
}

// validate knows only the invalid inputs the generator makes.
func validate(e api.Entity) *spec.Error {
	if strings.Contains(e.PartitionKey, "/") || strings.Contains(e.RowKey, "/") {
		return spec.ErrOutOfRangeInput.New()
	}
	if _, bad := e.Properties["bad-name"]; bad {
		return spec.ErrPropertyNameInvalid.New()
	}
	return nil
}

func malformed(etag string) bool { return etag == "garbage" }

func nonNull(props map[string]api.Value) map[string]api.Value {
	out := map[string]api.Value{}
	for k, v := range props {
		if !v.Null {
			out[k] = v
		}
	}
	return out
}

func (m *model) write(rows map[api.Key]mEntity, e api.Entity, mode api.UpdateMode, ifMatch string, insert bool) (mEntity, *spec.Error) {
	cur, ok := rows[e.Key()]
	switch {
	case insert && ok:
		return mEntity{}, spec.ErrEntityAlreadyExists.New()
	case !insert && !ok && ifMatch != "":
		return mEntity{}, spec.ErrResourceNotFound.New()
	case ok && !insert && ifMatch != "" && ifMatch != "*" && ifMatch != cur.etag():
		return mEntity{}, spec.ErrUpdateCondition.New()
	}
	props := nonNull(e.Properties)
	if ok && mode == api.Merge && !insert {
		merged := map[string]api.Value{}
		for k, v := range cur.props {
			merged[k] = v
		}
		for k, v := range props {
			merged[k] = v
		}
		props = merged
	}
	ne := mEntity{props: props, ts: m.tick()}
	rows[e.Key()] = ne
	return ne, nil
}

func (m *model) entity(k api.Key, me mEntity) api.Entity {
	props := map[string]api.Value{}
	for n, v := range me.props {
		props[n] = v
	}
	return api.Entity{PartitionKey: k.PartitionKey, RowKey: k.RowKey, Timestamp: me.ts, ETag: me.etag(), Properties: props}
}

func project(e api.Entity, sel []string) api.Entity {
	if len(sel) == 0 {
		return e
	}
	out := api.Entity{ETag: e.ETag, Properties: map[string]api.Value{},
		Absent: api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp}
	for _, n := range sel {
		switch n {
		case "PartitionKey":
			out.PartitionKey, out.Absent = e.PartitionKey, out.Absent&^api.AbsentPartitionKey
		case "RowKey":
			out.RowKey, out.Absent = e.RowKey, out.Absent&^api.AbsentRowKey
		case "Timestamp":
			out.Timestamp, out.Absent = e.Timestamp, out.Absent&^api.AbsentTimestamp
		default:
			if v, ok := e.Properties[n]; ok {
				out.Properties[n] = v
			} else {
				out.Properties[n] = api.Value{Null: true}
			}
		}
	}
	return out
}

func modelToken(key string) string {
	b := strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(key)), "=", "-")
	return "1!" + strconv.Itoa(len(b)) + "!" + b
}

// query returns one page from position pos (nil: the start).
func (m *model) query(name string, f *fnode, top int, sel []string, pos *api.Key) (api.Page, *api.Key, *spec.Error) {
	if top < 0 || top > 1000 {
		return api.Page{}, nil, spec.ErrInvalidInput.New()
	}
	t, err := m.table(name)
	if err != nil {
		return api.Page{}, nil, err
	}
	keys := make([]api.Key, 0, len(t.rows))
	for k := range t.rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b api.Key) int {
		if c := api.CompareKeyStrings(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return api.CompareKeyStrings(a.RowKey, b.RowKey)
	})
	limit := top
	if limit == 0 {
		limit = 1000
	}
	page := api.Page{Entities: []api.Entity{}}
	for _, k := range keys {
		if pos != nil && k.Less(*pos) {
			continue
		}
		me := t.rows[k]
		if f != nil && !f.eval(k, me.props) {
			continue
		}
		n := len(page.Entities)
		if n == limit || (m.boundaryPages && n > 0 && k.PartitionKey != page.Entities[n-1].PartitionKey) {
			page.Continuation = api.Continuation{NextPartitionKey: modelToken(k.PartitionKey), NextRowKey: modelToken(k.RowKey)}
			next := k
			return page, &next, nil
		}
		page.Entities = append(page.Entities, m.entity(k, me))
	}
	return page, nil, nil
}

// ---- filters the generator writes and the model evaluates on its own ----

type fnode struct {
	op   string // and, or, not, cmp
	kids []*fnode
	prop string
	cmp  string
	lit  api.Value
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (f *fnode) String() string {
	switch f.op {
	case "and", "or":
		return "(" + f.kids[0].String() + ") " + f.op + " (" + f.kids[1].String() + ")"
	case "not":
		return "not (" + f.kids[0].String() + ")"
	}
	if f.lit.Type == api.EdmInt32 {
		return fmt.Sprintf("%s %s %d", f.prop, f.cmp, f.lit.Int())
	}
	return fmt.Sprintf("%s %s %s", f.prop, f.cmp, quote(f.lit.Str))
}

func cmpHolds(op string, c int) bool {
	switch op {
	case "eq":
		return c == 0
	case "ne":
		return c != 0
	case "gt":
		return c > 0
	case "ge":
		return c >= 0
	case "lt":
		return c < 0
	}
	return c <= 0
}

func (f *fnode) eval(k api.Key, props map[string]api.Value) bool {
	switch f.op {
	case "and":
		return f.kids[0].eval(k, props) && f.kids[1].eval(k, props)
	case "or":
		return f.kids[0].eval(k, props) || f.kids[1].eval(k, props)
	case "not":
		return !f.kids[0].eval(k, props)
	}
	switch f.prop {
	case "PartitionKey":
		return cmpHolds(f.cmp, api.CompareKeyStrings(k.PartitionKey, f.lit.Str))
	case "RowKey":
		return cmpHolds(f.cmp, api.CompareKeyStrings(k.RowKey, f.lit.Str))
	}
	v, ok := props[f.prop]
	if !ok {
		return false // a missing property: every comparison is false
	}
	if v.Type != api.EdmInt32 { // a type mismatch: as if the property sorted below
		return f.cmp == "ne" || f.cmp == "lt" || f.cmp == "le"
	}
	return cmpHolds(f.cmp, int(min(max(v.Int()-f.lit.Int(), -1), 1)))
}

// ---- the generator ----

var (
	diffTables     = []string{"TabA", "taba", "TABA", "TabB", "TabC", "Missing"}
	diffPartitions = []string{"p0", "p1", "p2", "", "é", "𝄞", "\uff21", "O'Brien"}
	diffRows       = []string{"r0", "r1", "r2", "r3", "r4", "r5", "", "é", "𝄞", "\uff21"}
	diffOps        = []string{"eq", "ne", "gt", "ge", "lt", "le"}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func (d *diff) key() (string, string) {
	return pick(d.rng, diffPartitions), pick(d.rng, diffRows)
}

func (d *diff) entity(pk, rk string) api.Entity {
	e := api.NewEntity(pk, rk, nil)
	r := d.rng
	if r.IntN(40) == 0 {
		e.RowKey += "/"
	}
	if r.IntN(2) == 0 {
		e.Properties["n"] = api.Int32(int32(r.IntN(10)))
	}
	if r.IntN(8) == 0 {
		e.Properties["n"] = api.String("not a number")
	}
	if r.IntN(2) == 0 {
		e.Properties["s"] = api.String(pick(r, []string{"", "x", "héllo", "𝄞"}))
	}
	if r.IntN(4) == 0 {
		e.Properties["b"] = api.Bool(r.IntN(2) == 0)
	}
	if r.IntN(4) == 0 {
		e.Properties["d"] = api.DateTime(testEpoch.Add(time.Duration(r.IntN(1000)) * time.Hour))
	}
	if r.IntN(5) == 0 {
		e.Properties[pick(r, []string{"n", "s", "z"})] = api.Null(0)
	}
	if r.IntN(6) == 0 {
		e.Properties["bin"] = api.Binary([]byte{byte(r.IntN(256)), 0})
	}
	if r.IntN(60) == 0 {
		e.Properties["bad-name"] = api.Int32(1)
	}
	return e
}

func (d *diff) ifMatch(pk, rk, table string, allowEmpty bool) string {
	r := d.rng
	switch r.IntN(10) {
	case 0, 1, 2:
		return "*"
	case 3:
		if len(d.etags) > 0 {
			return pick(r, d.etags)
		}
	case 4:
		if allowEmpty {
			return ""
		}
	case 5:
		if r.IntN(4) == 0 {
			return "garbage"
		}
	}
	if t, err := d.model.table(table); err == nil {
		if e, ok := t.rows[api.Key{PartitionKey: pk, RowKey: rk}]; ok {
			return e.etag()
		}
	}
	return "*"
}

func (d *diff) filter(depth int) *fnode {
	r := d.rng
	if depth < 2 && r.IntN(3) == 0 {
		switch r.IntN(3) {
		case 0:
			return &fnode{op: "not", kids: []*fnode{d.filter(depth + 1)}}
		case 1:
			return &fnode{op: "and", kids: []*fnode{d.filter(depth + 1), d.filter(depth + 1)}}
		default:
			return &fnode{op: "or", kids: []*fnode{d.filter(depth + 1), d.filter(depth + 1)}}
		}
	}
	switch r.IntN(3) {
	case 0:
		return &fnode{op: "cmp", prop: "PartitionKey", cmp: pick(r, diffOps), lit: api.String(pick(r, diffPartitions))}
	case 1:
		return &fnode{op: "cmp", prop: "RowKey", cmp: pick(r, diffOps), lit: api.String(pick(r, diffRows))}
	}
	return &fnode{op: "cmp", prop: "n", cmp: pick(r, diffOps), lit: api.Int32(int32(r.IntN(10)))}
}

func (d *diff) randomOp() {
	r := d.rng
	if r.IntN(3) == 0 {
		d.clock.Advance(time.Duration(r.IntN(20)) * 100 * time.Nanosecond)
	}
	switch n := r.IntN(100); {
	case n < 4:
		d.createTable()
	case n < 6:
		d.deleteTable()
	case n < 26:
		d.insert()
	case n < 46:
		d.update()
	case n < 56:
		d.deleteEntity()
	case n < 66:
		d.get()
	case n < 80:
		d.batch()
	case n < 97:
		d.query()
	default:
		d.queryTables()
	}
}

func (d *diff) createTable() {
	name := pick(d.rng, diffTables)
	if d.rng.IntN(10) == 0 {
		name = "bad_name"
	}
	d.logf("create table %s", name)
	d.compareErr("create table", d.svc.CreateTable(bg, name), d.model.createTable(name))
}

func (d *diff) deleteTable() {
	name := pick(d.rng, diffTables)
	d.logf("delete table %s", name)
	d.compareErr("delete table", d.svc.DeleteTable(bg, name), d.model.deleteTable(name))
}

func (d *diff) insert() {
	table := pick(d.rng, diffTables)
	e := d.entity(d.key())
	d.logf("insert %s %v", table, e)
	got, err := d.svc.InsertEntity(bg, table, e)
	var want api.Entity
	merr := func() *spec.Error {
		t, err := d.model.table(table)
		if err != nil {
			return err
		}
		if err := validate(e); err != nil {
			return err
		}
		me, err := d.model.write(t.rows, e, api.Replace, "", true)
		if err != nil {
			return err
		}
		want = d.model.entity(e.Key(), me)
		return nil
	}()
	if d.compareErr("insert", err, merr) && merr == nil {
		d.compareEntity("insert", got, want)
		d.etags = append(d.etags, got.ETag)
	}
}

func (d *diff) update() {
	table := pick(d.rng, diffTables)
	pk, rk := d.key()
	e := d.entity(pk, rk)
	mode := api.UpdateMode(d.rng.IntN(2))
	ifMatch := d.ifMatch(pk, rk, table, true)
	d.logf("update %s %s if-match %q %v", table, mode, ifMatch, e)
	got, err := d.svc.UpdateEntity(bg, table, e, mode, ifMatch)
	var want string
	merr := func() *spec.Error {
		if malformed(ifMatch) {
			return spec.ErrInvalidInput.New()
		}
		t, err := d.model.table(table)
		if err != nil {
			return err
		}
		if err := validate(e); err != nil {
			return err
		}
		me, err := d.model.write(t.rows, e, mode, ifMatch, false)
		if err != nil {
			return err
		}
		want = me.etag()
		return nil
	}()
	if d.compareErr("update", err, merr) && merr == nil {
		if got != want {
			d.t.Errorf("update: ETag %s, model %s", got, want)
		}
		d.etags = append(d.etags, got)
	}
}

func (d *diff) deleteEntity() {
	table := pick(d.rng, diffTables)
	pk, rk := d.key()
	ifMatch := d.ifMatch(pk, rk, table, true)
	d.logf("delete %s (%q,%q) if-match %q", table, pk, rk, ifMatch)
	err := d.svc.DeleteEntity(bg, table, pk, rk, ifMatch)
	merr := func() *spec.Error {
		if ifMatch == "" {
			return spec.ErrMissingRequiredHeader.New()
		}
		if malformed(ifMatch) {
			return spec.ErrInvalidInput.New()
		}
		t, err := d.model.table(table)
		if err != nil {
			return err
		}
		k := api.Key{PartitionKey: pk, RowKey: rk}
		cur, ok := t.rows[k]
		if !ok {
			return spec.ErrResourceNotFound.New()
		}
		if ifMatch != "*" && ifMatch != cur.etag() {
			return spec.ErrUpdateCondition.New()
		}
		delete(t.rows, k)
		return nil
	}()
	d.compareErr("delete", err, merr)
}

func (d *diff) selection() []string {
	if d.rng.IntN(3) > 0 {
		return nil
	}
	all := []string{"n", "s", "PartitionKey", "RowKey", "Timestamp", "zz", "bin"}
	d.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+d.rng.IntN(len(all)-1)]
}

func (d *diff) get() {
	table := pick(d.rng, diffTables)
	pk, rk := d.key()
	sel := d.selection()
	d.logf("get %s (%q,%q) select %v", table, pk, rk, sel)
	got, err := d.svc.GetEntity(bg, table, pk, rk, sel)
	var want api.Entity
	merr := func() *spec.Error {
		t, err := d.model.table(table)
		if err != nil {
			return err
		}
		k := api.Key{PartitionKey: pk, RowKey: rk}
		me, ok := t.rows[k]
		if !ok {
			return spec.ErrResourceNotFound.New()
		}
		want = project(d.model.entity(k, me), sel)
		return nil
	}()
	if d.compareErr("get", err, merr) && merr == nil {
		d.compareEntity("get", got, want)
	}
}

func (d *diff) batch() {
	r := d.rng
	table := pick(d.rng, diffTables)
	pk := pick(r, diffPartitions)
	n := 1 + r.IntN(6)
	if r.IntN(50) == 0 {
		n = spec.MaxBatchOperations + 1
	}
	ops := make([]api.BatchOp, n)
	for i := range ops {
		rk := pick(r, diffRows)
		if n > len(diffRows) {
			rk = fmt.Sprintf("bulk%03d", i)
		}
		opPK := pk
		if r.IntN(40) == 0 {
			opPK = pick(r, diffPartitions)
		}
		kind := api.BatchOpKind(r.IntN(int(api.BatchDelete) + 1))
		if n == 1 && r.IntN(5) == 0 {
			kind = api.BatchRetrieve
		}
		if n > 1 && r.IntN(80) == 0 {
			kind = api.BatchRetrieve
		}
		op := api.BatchOp{Kind: kind, Entity: d.entity(opPK, rk)}
		if kind == api.BatchDelete || kind == api.BatchRetrieve {
			op.Entity = api.NewEntity(opPK, rk, nil)
		}
		if kind == api.BatchReplace || kind == api.BatchMerge || kind == api.BatchDelete {
			op.IfMatch = d.ifMatch(opPK, rk, table, true)
		}
		ops[i] = op
	}
	d.logf("batch %s %d ops: %v", table, len(ops), ops)
	got, err := d.svc.SubmitBatch(bg, table, ops)
	want, merr := d.model.batch(table, ops)
	if d.compareErr("batch", err, merr) && merr == nil {
		if len(got) != len(want) {
			d.t.Fatalf("batch: %d results, model %d", len(got), len(want))
		}
		for i := range got {
			if got[i].Status != want[i].Status || got[i].ETag != want[i].ETag {
				d.t.Errorf("batch result %d: %d %s, model %d %s", i, got[i].Status, got[i].ETag, want[i].Status, want[i].ETag)
			}
			if (got[i].Entity == nil) != (want[i].Entity == nil) {
				d.t.Errorf("batch result %d: entity %v, model %v", i, got[i].Entity, want[i].Entity)
			} else if got[i].Entity != nil {
				d.compareEntity("batch retrieve", *got[i].Entity, *want[i].Entity)
			}
			if got[i].ETag != "" {
				d.etags = append(d.etags, got[i].ETag)
			}
		}
	}
}

func (m *model) batch(table string, ops []api.BatchOp) ([]api.BatchResult, *spec.Error) {
	if len(ops) > spec.MaxBatchOperations {
		return nil, spec.ErrInvalidInput.New().AtIndex(spec.MaxBatchOperations - 1)
	}
	if len(ops) > 1 {
		for i, op := range ops {
			if op.Kind == api.BatchRetrieve {
				return nil, spec.ErrInvalidInput.New().AtIndex(i)
			}
		}
	}
	t, err := m.table(table)
	if err != nil {
		return nil, err.AtIndex(0)
	}
	if ops[0].Kind == api.BatchRetrieve {
		k := ops[0].Entity.Key()
		me, ok := t.rows[k]
		if !ok {
			return nil, spec.ErrResourceNotFound.New()
		}
		e := m.entity(k, me)
		return []api.BatchResult{{Status: http.StatusOK, ETag: e.ETag, Entity: &e}}, nil
	}
	seen := map[string]bool{}
	for i, op := range ops {
		if op.Entity.PartitionKey != ops[0].Entity.PartitionKey {
			return nil, spec.ErrDifferentPartitions.New().AtIndex(i)
		}
		if seen[op.Entity.RowKey] {
			return nil, spec.ErrInvalidDuplicateRow.New().AtIndex(i)
		}
		seen[op.Entity.RowKey] = true
		if op.Kind != api.BatchDelete {
			if err := validate(op.Entity); err != nil {
				return nil, err.AtIndex(i)
			}
		}
		if op.Kind != api.BatchInsert && op.Kind != api.BatchInsertOrReplace && op.Kind != api.BatchInsertOrMerge && malformed(op.IfMatch) {
			return nil, spec.ErrInvalidInput.New().AtIndex(i)
		}
	}
	rows := make(map[api.Key]mEntity, len(t.rows))
	for k, v := range t.rows {
		rows[k] = v
	}
	results := make([]api.BatchResult, len(ops))
	for i, op := range ops {
		ifMatch := op.IfMatch
		if ifMatch == "" {
			ifMatch = "*"
		}
		var me mEntity
		var err *spec.Error
		status := http.StatusNoContent
		switch op.Kind {
		case api.BatchInsert:
			me, err = m.write(rows, op.Entity, api.Replace, "", true)
			status = http.StatusCreated
		case api.BatchReplace:
			me, err = m.write(rows, op.Entity, api.Replace, ifMatch, false)
		case api.BatchMerge:
			me, err = m.write(rows, op.Entity, api.Merge, ifMatch, false)
		case api.BatchInsertOrReplace:
			me, err = m.write(rows, op.Entity, api.Replace, "", false)
		case api.BatchInsertOrMerge:
			me, err = m.write(rows, op.Entity, api.Merge, "", false)
		case api.BatchDelete:
			cur, ok := rows[op.Entity.Key()]
			switch {
			case !ok:
				err = spec.ErrResourceNotFound.New()
			case ifMatch != "*" && ifMatch != cur.etag():
				err = spec.ErrUpdateCondition.New()
			default:
				delete(rows, op.Entity.Key())
			}
		}
		if err != nil {
			if err.Status != http.StatusBadRequest && i == 0 {
				return nil, err
			}
			return nil, err.AtIndex(i)
		}
		results[i].Status = status
		if op.Kind != api.BatchDelete {
			results[i].ETag = me.etag()
		}
	}
	t.rows = rows
	return results, nil
}

func (d *diff) query() {
	r := d.rng
	table := pick(r, diffTables)
	var f *fnode
	if r.IntN(4) > 0 {
		f = d.filter(0)
	}
	top := pick(r, []int{0, 1, 2, 3, 5, 1000})
	if r.IntN(30) == 0 {
		top = pick(r, []int{-1, 1001})
	}
	sel := d.selection()
	q := api.Query{Top: api.OptionalTop(top), Select: sel}
	if f != nil {
		q.Filter = f.String()
	}
	var pos *api.Key
	for page := 0; ; page++ {
		d.logf("query %s %+v page %d", table, q, page)
		got, err := d.svc.QueryEntities(bg, table, q)
		want, next, merr := d.model.query(table, f, top, sel, pos)
		if !d.compareErr("query", err, merr) || merr != nil {
			return
		}
		if len(got.Entities) != len(want.Entities) {
			d.t.Fatalf("query %s %+v page %d: %d entities %v, model %d %v", table, q, page,
				len(got.Entities), keysOf(got.Entities), len(want.Entities), keysOf(want.Entities))
		}
		for i := range got.Entities {
			d.compareEntity("query", got.Entities[i], project(want.Entities[i], sel))
		}
		if got.Continuation != want.Continuation {
			d.t.Fatalf("query page %d: continuation %+v, model %+v", page, got.Continuation, want.Continuation)
		}
		if r.IntN(2) == 0 {
			d.svc.RecyclePage(got) // later pages decode into its maps
		}
		if next == nil || page > 50 {
			return
		}
		q.Continuation, pos = got.Continuation, next
		for range r.IntN(3) { // writes between pages
			switch r.IntN(3) {
			case 0:
				d.insert()
			case 1:
				d.update()
			default:
				d.deleteEntity()
			}
		}
	}
}

func (d *diff) queryTables() {
	r := d.rng
	q := api.TableQuery{Top: pick(r, []int{0, 1, 2})}
	var only string
	if r.IntN(3) == 0 {
		only = pick(r, diffTables)
		q.Filter = "TableName eq " + quote(only)
	}
	var want []string
	lowers := make([]string, 0, len(d.model.tables))
	for lower := range d.model.tables {
		lowers = append(lowers, lower)
	}
	slices.Sort(lowers)
	for _, lower := range lowers {
		if name := d.model.tables[lower].name; only == "" || name == only {
			want = append(want, name)
		}
	}
	var got []string
	for range 20 {
		d.logf("query tables %+v", q)
		page, err := d.svc.QueryTables(bg, q)
		if err != nil {
			d.t.Fatalf("query tables: %v", err)
		}
		if q.Top > 0 && len(page.Tables) > q.Top {
			d.t.Fatalf("query tables: %d tables with $top=%d", len(page.Tables), q.Top)
		}
		got = append(got, page.Tables...)
		if page.NextTableName == "" {
			break
		}
		q.NextTableName = page.NextTableName
	}
	if !slices.Equal(got, want) {
		d.t.Fatalf("query tables: %v, model %v", got, want)
	}
}

// ---- comparisons ----

// compareErr compares an answer's error with the model's; it reports whether they agree.
func (d *diff) compareErr(what string, got error, want *spec.Error) bool {
	d.t.Helper()
	d.checks++
	if want == nil {
		if got != nil {
			d.t.Errorf("%s: %v, model succeeded", what, got)
			return false
		}
		return true
	}
	var se *spec.Error
	if !errors.As(got, &se) {
		d.t.Errorf("%s: %v, model %v", what, got, want)
		return false
	}
	if se.Status != want.Status || se.Code != want.Code || se.Indexed != want.Indexed || (se.Indexed && se.FailedIndex != want.FailedIndex) {
		d.t.Errorf("%s: %v, model %v", what, se, want)
		return false
	}
	return true
}

func (d *diff) compareEntity(what string, got, want api.Entity) {
	d.t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || !got.Timestamp.Equal(want.Timestamp) ||
		got.ETag != want.ETag || got.Absent != want.Absent || !sameProperties(got.Properties, want.Properties) {
		d.t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}
