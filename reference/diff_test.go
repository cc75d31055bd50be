package reference_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/internal/testseed"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/model"
	"github.com/tableconform/conform/reference/spec"
)

// The differential test drives long random sequences of operations through api.Backend
// against the engine (reference.Service, its store tuned to compact often and to share
// point hashes) and against the naive model (reference/model: a map per table and a sort
// per query), and compares every answer: status, code, failed index, entities with their
// Timestamps and ETags, pages and continuations, table lists. A divergence fails the test
// with the seed, the step and the operations that led to it.
//
// Replay a run with: go test -run TestDifferential ./reference/ -seed N (or CONFORM_SEED=N).

var stepsFlag = flag.Int("diff.steps", 0, "operations per differential run (default: a few seconds' worth)")

var bg = context.Background()

// diffEpoch is the fake clock's start.
var diffEpoch = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)

func TestDifferential(t *testing.T) {
	seed := testseed.Seed(t, "go test -run TestDifferential ./reference/")
	steps := *stepsFlag
	if steps == 0 {
		steps = 20000
		if testing.Short() {
			steps = 3000
		}
	}
	for run := range 6 {
		tuning := store.Config{CompactMinDeadBytes: 512} // compact often, so that compaction is compared too
		if run >= 2 {
			tuning.PointHashBits = 3 // most keys share a point hash: look-ups go to the ordered index
		}
		d := newDiff(t, seed+uint64(run), run%2 == 1, run >= 4, reference.WithStoreConfig(tuning))
		for step := range steps {
			d.step = step
			d.randomOp()
			if t.Failed() {
				t.Fatalf("run %d diverged at step %d (seed %d); the operations up to it:\n%s", run, step, seed, strings.Join(d.log, "\n"))
			}
		}
		t.Logf("run %d: %d operations agreed; refusals by code: %v", run, steps, d.refusals)
	}
}

// diffClock is the clock both sides read: it moves only when the generator moves it.
type diffClock struct{ now time.Time }

func (c *diffClock) Now() time.Time { return c.now }

// diff holds the engine, the model and the generator.
type diff struct {
	t        *testing.T
	rng      *rand.Rand
	clock    *diffClock
	engine   *reference.Service
	model    *model.Model
	etags    []string // every ETag seen, for stale If-Match values
	step     int
	log      []string
	refusals map[string]int // the codes both sides answered, for the log
	batching bool           // the entities made are a transaction's: no sets for the limits
}

const diffHold = time.Microsecond

// newDiff returns a comparison of the engine, built with opts, and the model; cosmos gives
// both the options of the Cosmos flavour (case-sensitive table names, its property limits).
func newDiff(t *testing.T, seed uint64, boundaryPages, cosmos bool, opts ...reference.Option) *diff {
	clock := &diffClock{now: diffEpoch}
	opts = append([]reference.Option{reference.WithClock(clock.Now), reference.WithDeleteHold(diffHold),
		reference.WithPartitionBoundaryPages(boundaryPages)}, opts...)
	modelOpts := []model.Option{model.WithClock(clock.Now), model.WithDeleteHold(diffHold),
		model.WithPartitionBoundaryPages(boundaryPages)}
	if cosmos {
		opts = append(opts, reference.CosmosOptions()...)
		modelOpts = append(modelOpts, model.CosmosOptions()...)
	}
	return &diff{
		t:        t,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		clock:    clock,
		engine:   reference.New(opts...),
		model:    model.New(modelOpts...),
		refusals: map[string]int{},
	}
}

// logf records an operation; the last 40 are printed on a divergence.
func (d *diff) logf(format string, args ...any) {
	d.log = append(d.log, fmt.Sprintf("%5d ", d.step)+fmt.Sprintf(format, args...))
	if len(d.log) > 40 {
		d.log = d.log[1:]
	}
}

// ---- the generator ----

var (
	// "\u212Aelvin" starts with the Kelvin sign, whose Unicode lower case is 'k': a table
	// name matches another only in ASCII case.
	diffTables     = []string{"TabA", "taba", "TABA", "TabB", "TabC", "Missing", "Kelvin", "\u212Aelvin"}
	diffPartitions = []string{"p0", "p1", "p2", "", "é", "𝄞", "\uff21", "O'Brien"}
	diffRows       = []string{"r0", "r1", "r2", "r3", "r4", "r5", "", "é", "𝄞", "\uff21"}
	diffOps        = []string{"eq", "ne", "gt", "ge", "lt", "le"}
	diffGuids      = []string{"0F8FAD5B-D9CB-469F-A165-70867728950E", "7c9e6679-7425-40de-944b-e07fc1f90ae7"}
)

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func (d *diff) key() (string, string) {
	return pick(d.rng, diffPartitions), pick(d.rng, diffRows)
}

// entity returns an entity with properties of every EDM type, now and then an invalid one
// (a key with '/', a bad property name, an Int32 property of another type).
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
		e.Properties["d"] = api.DateTime(diffEpoch.Add(time.Duration(r.IntN(1000)) * time.Hour))
	}
	if r.IntN(4) == 0 {
		e.Properties["l"] = api.Int64(int64(r.IntN(10)) << 33)
	}
	if r.IntN(4) == 0 {
		e.Properties["f"] = api.Double(float64(r.IntN(10)) / 4)
	}
	if r.IntN(6) == 0 {
		e.Properties["g"] = api.Guid(pick(r, diffGuids))
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
	// Merges of the sets below into one entity (p0, r0) reach the limits of the stored
	// entity: three sets of six values of 60 KB pass its size, three sets of 100
	// properties its property count.
	if !d.batching && r.IntN(10) == 0 {
		e.PartitionKey, e.RowKey = "p0", "r0"
		from := pick(r, []int{0, 6, 12})
		for i := range 6 {
			e.Properties[fmt.Sprintf("big%02d", from+i)] = api.String(strings.Repeat("x", 30_000))
		}
	}
	if !d.batching && r.IntN(10) == 0 {
		e.PartitionKey, e.RowKey = "p0", "r0"
		from := pick(r, []int{0, 100, 200})
		for i := range 100 {
			e.Properties[fmt.Sprintf("p%03d", from+i)] = api.Int32(int32(i))
		}
	}
	if r.IntN(20) == 0 {
		e.Properties["f"] = api.Double(pick(r, []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)}))
	}
	return e
}

// ifMatch returns "*", a stale ETag, "" (when allowed), a malformed value, or the current
// ETag of the entity as the model has it.
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
	if e, err := d.model.GetEntity(bg, table, pk, rk, nil); err == nil {
		return e.ETag
	}
	return "*"
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// filter returns a $filter over the keys and the properties of every type.
func (d *diff) filter(depth int) string {
	r := d.rng
	if depth < 2 && r.IntN(3) == 0 {
		switch r.IntN(3) {
		case 0:
			return "not (" + d.filter(depth+1) + ")"
		case 1:
			return "(" + d.filter(depth+1) + ") and (" + d.filter(depth+1) + ")"
		default:
			return "(" + d.filter(depth+1) + ") or (" + d.filter(depth+1) + ")"
		}
	}
	op := pick(r, diffOps)
	switch r.IntN(10) {
	case 0, 1:
		return "PartitionKey " + op + " " + quote(pick(r, diffPartitions))
	case 2, 3:
		return "RowKey " + op + " " + quote(pick(r, diffRows))
	case 4:
		return "s " + op + " " + quote(pick(r, []string{"", "x", "héllo"}))
	case 5:
		return "d " + op + " datetime'" + api.FormatDateTime(diffEpoch.Add(time.Duration(r.IntN(1000))*time.Hour)) + "'"
	case 6:
		return fmt.Sprintf("l %s %dL", op, int64(r.IntN(10))<<33)
	case 7:
		return fmt.Sprintf("f %s %g", op, float64(r.IntN(10))/4)
	case 8:
		return "b " + op + " " + pick(r, []string{"true", "false"})
	}
	return fmt.Sprintf("n %s %d", op, r.IntN(10))
}

func (d *diff) randomOp() {
	r := d.rng
	if r.IntN(3) == 0 {
		d.clock.now = d.clock.now.Add(time.Duration(r.IntN(20)) * 100 * time.Nanosecond)
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
	d.sameError("create table", d.engine.CreateTable(bg, name), d.model.CreateTable(bg, name))
}

func (d *diff) deleteTable() {
	name := pick(d.rng, diffTables)
	d.logf("delete table %s", name)
	d.sameError("delete table", d.engine.DeleteTable(bg, name), d.model.DeleteTable(bg, name))
}

func (d *diff) insert() {
	table := pick(d.rng, diffTables)
	e := d.entity(d.key())
	d.logf("insert %s %v", table, e)
	got, err := d.engine.InsertEntity(bg, table, e)
	want, merr := d.model.InsertEntity(bg, table, e)
	if d.sameError("insert", err, merr) && err == nil {
		d.sameEntity("insert", got, want)
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
	got, err := d.engine.UpdateEntity(bg, table, e, mode, ifMatch)
	want, merr := d.model.UpdateEntity(bg, table, e, mode, ifMatch)
	if d.sameError("update", err, merr) && err == nil {
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
	d.sameError("delete", d.engine.DeleteEntity(bg, table, pk, rk, ifMatch), d.model.DeleteEntity(bg, table, pk, rk, ifMatch))
}

func (d *diff) selection() []string {
	if d.rng.IntN(3) > 0 {
		return nil
	}
	all := []string{"n", "s", "PartitionKey", "RowKey", "Timestamp", "zz", "bin", "g", "d"}
	d.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:1+d.rng.IntN(len(all)-1)]
}

func (d *diff) get() {
	table := pick(d.rng, diffTables)
	pk, rk := d.key()
	sel := d.selection()
	d.logf("get %s (%q,%q) select %v", table, pk, rk, sel)
	got, err := d.engine.GetEntity(bg, table, pk, rk, sel)
	want, merr := d.model.GetEntity(bg, table, pk, rk, sel)
	if d.sameError("get", err, merr) && err == nil {
		d.sameEntity("get", got, want)
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
	d.batching = true
	defer func() { d.batching = false }()
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
	got, err := d.engine.SubmitBatch(bg, table, ops)
	want, merr := d.model.SubmitBatch(bg, table, ops)
	if !d.sameError("batch", err, merr) || err != nil {
		return
	}
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
			d.sameEntity("batch retrieve", *got[i].Entity, *want[i].Entity)
		}
		if got[i].ETag != "" {
			d.etags = append(d.etags, got[i].ETag)
		}
	}
}

// query reads a query to its end, page by page, each side with its own continuation, with
// writes between pages.
func (d *diff) query() {
	r := d.rng
	table := pick(r, diffTables)
	q := api.Query{Select: d.selection()}
	if r.IntN(4) > 0 {
		q.Filter = d.filter(0)
	}
	top := pick(r, []int{0, 1, 2, 3, 5, 1000})
	if r.IntN(30) == 0 {
		top = pick(r, []int{-1, 1001})
	}
	q.Top = api.OptionalTop(top)
	if r.IntN(40) == 0 {
		q.Top = api.TopOf(0)
	}
	mq := q
	if r.IntN(40) == 0 {
		q.Continuation = api.Continuation{NextPartitionKey: "not a token"}
		mq.Continuation = q.Continuation
	}
	for page := 0; ; page++ {
		d.logf("query %s %+v page %d", table, q, page)
		got, err := d.engine.QueryEntities(bg, table, q)
		want, merr := d.model.QueryEntities(bg, table, mq)
		if !d.sameError("query", err, merr) || err != nil {
			return
		}
		if len(got.Entities) != len(want.Entities) {
			d.t.Fatalf("query %s %+v page %d: %d entities %v, model %d %v", table, q, page,
				len(got.Entities), keysOf(got.Entities), len(want.Entities), keysOf(want.Entities))
		}
		for i := range got.Entities {
			d.sameEntity("query", got.Entities[i], want.Entities[i])
		}
		if got.Continuation != want.Continuation {
			d.t.Fatalf("query page %d: continuation %+v, model %+v", page, got.Continuation, want.Continuation)
		}
		if r.IntN(2) == 0 {
			d.engine.RecyclePage(got) // later pages decode into its maps
		}
		if got.Continuation.IsZero() || page > 50 {
			return
		}
		q.Continuation, mq.Continuation = got.Continuation, want.Continuation
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
	if r.IntN(3) == 0 {
		q.Filter = "TableName eq " + quote(pick(r, diffTables))
	}
	mq := q
	for page := range 20 {
		d.logf("query tables %+v page %d", q, page)
		got, err := d.engine.QueryTables(bg, q)
		want, merr := d.model.QueryTables(bg, mq)
		if !d.sameError("query tables", err, merr) || err != nil {
			return
		}
		if !slices.Equal(got.Tables, want.Tables) || got.NextTableName != want.NextTableName {
			d.t.Fatalf("query tables page %d: %v next %q, model %v next %q", page, got.Tables, got.NextTableName, want.Tables, want.NextTableName)
		}
		if got.NextTableName == "" {
			return
		}
		q.NextTableName, mq.NextTableName = got.NextTableName, want.NextTableName
	}
}

// ---- comparisons ----

// sameError compares the engine's error with the model's: both nil, or both *spec.Error
// with the same status, code and failed index. It reports whether they agree.
func (d *diff) sameError(what string, got, want error) bool {
	d.t.Helper()
	if got == nil && want == nil {
		return true
	}
	var gse, wse *spec.Error
	if !errors.As(got, &gse) || !errors.As(want, &wse) {
		d.t.Errorf("%s: %v, model %v", what, got, want)
		return false
	}
	if gse.Status != wse.Status || gse.Code != wse.Code || gse.Indexed != wse.Indexed || (gse.Indexed && gse.FailedIndex != wse.FailedIndex) {
		d.t.Errorf("%s: %v, model %v", what, gse, wse)
		return false
	}
	d.refusals[gse.Code]++
	return true
}

func (d *diff) sameEntity(what string, got, want api.Entity) {
	d.t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || !got.Timestamp.Equal(want.Timestamp) ||
		got.ETag != want.ETag || got.Absent != want.Absent || !sameProperties(got.Properties, want.Properties) {
		d.t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

func sameProperties(a, b map[string]api.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func keysOf(page []api.Entity) []string {
	keys := make([]string, len(page))
	for i, e := range page {
		keys[i] = e.PartitionKey + "|" + e.RowKey
	}
	return keys
}
