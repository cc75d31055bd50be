package bench

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Data set sizes of the single-operation cases. The defaults keep a run of every case under
// a few minutes per backend on a 2-core machine; large runs load more and wider data.
const (
	defaultRecords    = 2048
	defaultPartitions = 16
	largeRecords      = 65536
	largePartitions   = 256
	defaultPayload    = 1 << 10
	// pagingEntities is the size of the paging case (EVIDENCE.md 3.5: at most 1,000 per page).
	pagingEntities = 10_000
	// rangeRows is how many rows a range query returns.
	rangeRows = 20
	// deletePool is how many entities a duration-bounded delete run may delete.
	deletePool      = 4000
	largeDeletePool = 40000
)

func (e *Env) dataset(payload int) dataset {
	if e.Quick {
		return dataset{records: 160, partitions: 4, payload: payload}
	}
	if e.Large {
		return dataset{records: largeRecords, partitions: largePartitions, payload: payload}
	}
	return dataset{records: defaultRecords, partitions: defaultPartitions, payload: payload}
}

func datasetParams(d dataset) []Param {
	return []Param{{"partitions", fmt.Sprint(d.partitions)}, {"payload", sizeName(d.payload)}}
}

// OperationCases returns the single-operation cases: point get, insert, merge, replace,
// upsert, delete, a 100-operation batch, range query, partition scan, table scan, paging
// through 10,000 entities and parallel partition queries. large selects the larger data sets.
func OperationCases(large bool) []Case {
	env := &Env{Large: large}
	d := env.dataset(defaultPayload)
	ps := datasetParams(d)
	op := func(family string, setup func(ctx context.Context, env *Env, table string) (*workload, error)) Case {
		return Case{Family: family, Params: ps, Tags: []string{"ops"}, setup: setup}
	}
	return []Case{
		op("PointGet", setupPointGet),
		op("Insert", setupInsert),
		op("Merge", setupMerge),
		op("Replace", setupReplace),
		op("Upsert", setupUpsert),
		op("Delete", setupDelete),
		{Family: "Batch", Params: []Param{{"ops", fmt.Sprint(spec.MaxBatchOperations)}, {"payload", sizeName(defaultPayload)}}, Tags: []string{"ops"}, setup: setupBatch},
		{Family: "RangeQuery", Params: append(ps[:len(ps):len(ps)], Param{"rows", fmt.Sprint(rangeRows)}), Tags: []string{"ops"}, setup: setupRangeQuery},
		op("PartitionScan", setupPartitionScan),
		op("TableScan", setupTableScan),
		{Family: "Paging", Params: []Param{{"entities", fmt.Sprint(pagingEntities)}, {"top", fmt.Sprint(spec.MaxPageSize)}}, Tags: []string{"ops"}, Workers: 2, setup: setupPaging},
		{Family: "ParallelQueries", Params: []Param{{"partitions", "64"}, {"workers", "16"}}, Workers: 16, FixedWorkers: true, Tags: []string{"ops"}, setup: setupParallelQueries},
	}
}

func loaded(ctx context.Context, env *Env, table string, payload int) (dataset, error) {
	d := env.dataset(payload)
	return d, d.load(ctx, env.Backend, table)
}

func setupPointGet(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: d.pointGetStep}, nil
}

// pointGetStep reads a random record of d by its keys and checks it.
func (d dataset) pointGetStep(w *Worker) error {
	i := w.Rand.IntN(d.records)
	pk, rk := d.key(i)
	e, err := w.B.GetEntity(w.Ctx, w.Table, pk, rk, nil)
	if err != nil {
		return err
	}
	return d.checkRecord(e, i, w.deep())
}

// readBack returns a check that reads (pk, rk) and applies want to it.
func readBack(table, pk, rk string, want func(e api.Entity) error) func(context.Context, api.Backend) error {
	return func(ctx context.Context, b api.Backend) error {
		e, err := b.GetEntity(ctx, table, pk, rk, nil)
		if err != nil {
			if statusOf(err) == 404 {
				return wrong("(%s, %s) was written but is not found", pk, rk)
			}
			return fmt.Errorf("read back (%s, %s): %w", pk, rk, err)
		}
		return want(e)
	}
}

func hasBool(e api.Entity, name string, want bool) bool {
	v, ok := e.Properties[name]
	return ok && v.Type == api.EdmBoolean && v.Bool == want
}

func setupInsert(ctx context.Context, env *Env, table string) (*workload, error) {
	d := env.dataset(defaultPayload)
	var seq atomic.Int64
	return &workload{step: func(w *Worker) error {
		n := seq.Add(1)
		pk := d.pk(w.Rand.IntN(d.partitions))
		rk := fmt.Sprintf("i%010d", n)
		data := payload(pk, rk, d.payload)
		out, err := w.B.InsertEntity(w.Ctx, w.Table, api.NewEntity(pk, rk, map[string]api.Value{propData: api.String(data), propSeq: api.Int64(n)}))
		if err != nil {
			return err
		}
		if out.PartitionKey != pk || out.RowKey != rk || out.ETag == "" {
			return wrong("insert of (%s, %s) returned (%s, %s) with ETag %q", pk, rk, out.PartitionKey, out.RowKey, out.ETag)
		}
		w.later(readBack(w.Table, pk, rk, func(e api.Entity) error {
			if e.Properties[propData].Str != data || e.Properties[propSeq].Int() != n {
				return wrong("inserted (%s, %s) reads back with other properties: %s", pk, rk, e)
			}
			return nil
		}))
		return nil
	}}, nil
}

func setupMerge(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		i := w.Rand.IntN(d.records)
		pk, rk := d.key(i)
		etag, err := w.B.UpdateEntity(w.Ctx, w.Table, api.NewEntity(pk, rk, map[string]api.Value{propTouched: api.Bool(true)}), api.Merge, api.IfMatchAny)
		if err != nil {
			return err
		}
		if etag == "" {
			return wrong("merge of (%s, %s) returned no ETag", pk, rk)
		}
		w.later(readBack(w.Table, pk, rk, func(e api.Entity) error {
			if !hasBool(e, propTouched, true) || !hasBool(e, propBase, true) {
				return wrong("merged (%s, %s) lost or missed properties (a merge keeps what it does not send): %s", pk, rk, e)
			}
			return d.checkRecord(e, i, true)
		}))
		return nil
	}}, nil
}

func setupReplace(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		i := w.Rand.IntN(d.records)
		pk, rk := d.key(i)
		e := api.NewEntity(pk, rk, map[string]api.Value{
			propData: api.String(payload(pk, rk, d.payload)), propSeq: api.Int64(int64(i)), propReplaced: api.Bool(true)})
		etag, err := w.B.UpdateEntity(w.Ctx, w.Table, e, api.Replace, api.IfMatchAny)
		if err != nil {
			return err
		}
		if etag == "" {
			return wrong("replace of (%s, %s) returned no ETag", pk, rk)
		}
		w.later(readBack(w.Table, pk, rk, func(e api.Entity) error {
			if _, kept := e.Properties[propBase]; kept || !hasBool(e, propReplaced, true) {
				return wrong("replaced (%s, %s) still has properties not sent (a replace removes them): %s", pk, rk, e)
			}
			return d.checkRecord(e, i, true)
		}))
		return nil
	}}, nil
}

func setupUpsert(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: func(w *Worker) error {
		// Half the keys exist, half are new: Insert Or Merge both inserts and merges.
		i := w.Rand.IntN(2 * d.records)
		pk, rk := d.key(i)
		e := api.NewEntity(pk, rk, map[string]api.Value{
			propData: api.String(payload(pk, rk, d.payload)), propSeq: api.Int64(int64(i)), propTouched: api.Bool(true)})
		etag, err := w.B.UpdateEntity(w.Ctx, w.Table, e, api.Merge, "")
		if err != nil {
			return err
		}
		if etag == "" {
			return wrong("upsert of (%s, %s) returned no ETag", pk, rk)
		}
		w.later(readBack(w.Table, pk, rk, func(e api.Entity) error {
			if !hasBool(e, propTouched, true) || (i < d.records && !hasBool(e, propBase, true)) {
				return wrong("upserted (%s, %s) has the wrong properties: %s", pk, rk, e)
			}
			return d.checkRecord(e, i, true)
		}))
		return nil
	}}, nil
}

func setupDelete(ctx context.Context, env *Env, table string) (*workload, error) {
	d := env.dataset(defaultPayload)
	var (
		keys []api.Key
		next atomic.Int64
		run  int
	)
	before := func(ctx context.Context, n int) (int, error) {
		if n <= 0 {
			switch {
			case env.Quick:
				n = deletePool / 10
			case env.Large:
				n = largeDeletePool
			default:
				n = deletePool
			}
		}
		run++
		keys = make([]api.Key, n)
		parts := (n + spec.MaxBatchOperations - 1) / spec.MaxBatchOperations
		for i := range keys {
			keys[i] = api.Key{PartitionKey: fmt.Sprintf("d%04d-%05d", run, i/spec.MaxBatchOperations), RowKey: d.rk(i)}
		}
		next.Store(0)
		err := loadPartitions(ctx, env.Backend, table, parts, func(p int) []api.Entity {
			chunk := keys[p*spec.MaxBatchOperations : min((p+1)*spec.MaxBatchOperations, len(keys))]
			es := make([]api.Entity, len(chunk))
			for i, k := range chunk {
				es[i] = api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{propData: api.String(payload(k.PartitionKey, k.RowKey, d.payload))})
			}
			return es
		})
		return n, err
	}
	return &workload{before: before, step: func(w *Worker) error {
		i := next.Add(1) - 1
		if i >= int64(len(keys)) {
			return fmt.Errorf("delete: the pool of %d entities is exhausted", len(keys))
		}
		k := keys[i]
		if err := w.B.DeleteEntity(w.Ctx, w.Table, k.PartitionKey, k.RowKey, api.IfMatchAny); err != nil {
			return err
		}
		w.later(func(ctx context.Context, b api.Backend) error {
			_, err := b.GetEntity(ctx, table, k.PartitionKey, k.RowKey, nil)
			if err == nil {
				return wrong("deleted (%s, %s) is still there", k.PartitionKey, k.RowKey)
			}
			if statusOf(err) == 404 {
				return nil
			}
			return fmt.Errorf("read deleted (%s, %s): %w", k.PartitionKey, k.RowKey, err)
		})
		return nil
	}}, nil
}

func setupBatch(ctx context.Context, env *Env, table string) (*workload, error) {
	var seq atomic.Int64
	size := defaultPayload
	return &workload{step: func(w *Worker) error {
		pk := fmt.Sprintf("b%010d", seq.Add(1))
		ops := make([]api.BatchOp, spec.MaxBatchOperations)
		for i := range ops {
			rk := fmt.Sprintf("r%08d", i)
			ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: api.NewEntity(pk, rk, map[string]api.Value{
				propData: api.String(payload(pk, rk, size)), propSeq: api.Int64(int64(i))})}
		}
		res, err := w.B.SubmitBatch(w.Ctx, w.Table, ops)
		if err != nil {
			return err
		}
		if len(res) != len(ops) {
			return wrong("a batch of %d inserts returned %d results", len(ops), len(res))
		}
		for i, r := range res {
			if r.Status < 200 || r.Status > 299 {
				return wrong("batch insert %d of partition %s has status %d", i, pk, r.Status)
			}
		}
		w.later(func(ctx context.Context, b api.Backend) error {
			es, _, err := scanAll(ctx, b, table, api.Query{Filter: "PartitionKey eq " + quote(pk)}, 10)
			if err != nil {
				return err
			}
			if len(es) != len(ops) {
				return wrong("partition %s holds %d entities after a batch of %d inserts", pk, len(es), len(ops))
			}
			if err := checkKeyOrder(es, nil); err != nil {
				return err
			}
			for i, e := range es {
				rk := fmt.Sprintf("r%08d", i)
				if e.RowKey != rk || e.Properties[propData].Str != payload(pk, rk, size) {
					return wrong("batch entity %d of partition %s reads back as %s", i, pk, e)
				}
			}
			return nil
		})
		return nil
	}}, nil
}

func setupRangeQuery(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: d.rangeQueryStep}, nil
}

// rangeQueryStep queries rangeRows consecutive rows of a random partition of d (PartitionKey
// eq, RowKey ge and lt) and checks that exactly those come back, in order and intact.
func (d dataset) rangeQueryStep(w *Worker) error {
	p := w.Rand.IntN(d.partitions)
	row := w.Rand.IntN(d.rowsIn(p) - rangeRows + 1)
	q := api.Query{Filter: fmt.Sprintf("PartitionKey eq %s and RowKey ge %s and RowKey lt %s", quote(d.pk(p)), quote(d.rk(row)), quote(d.rk(row+rangeRows)))}
	es, _, err := scanAll(w.Ctx, w.B, w.Table, q, 5)
	if err != nil {
		return err
	}
	if len(es) != rangeRows {
		return wrong("range query %q returned %d entities, want %d", q.Filter, len(es), rangeRows)
	}
	return d.checkRun(es, p, row, w.deep())
}

// partitionScanStep scans one random partition of d and checks it is complete and in order.
func partitionScanStep(d dataset) func(w *Worker) error {
	return func(w *Worker) error {
		p := w.Rand.IntN(d.partitions)
		q := api.Query{Filter: "PartitionKey eq " + quote(d.pk(p))}
		es, _, err := scanAll(w.Ctx, w.B, w.Table, q, 20)
		if err != nil {
			return err
		}
		if len(es) != d.rowsIn(p) {
			return wrong("partition scan %q returned %d entities, want %d", q.Filter, len(es), d.rowsIn(p))
		}
		return d.checkRun(es, p, 0, w.deep())
	}
}

func setupPartitionScan(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: partitionScanStep(d)}, nil
}

// tableScanStep reads the whole table page by page (pages of top, 0 for the service's
// default) and checks the count, the order and a sample of the records.
func tableScanStep(d dataset, top int) func(w *Worker) error {
	maxPages := d.records/max(top, 1) + d.partitions + 10
	if top == 0 {
		maxPages = d.records + 10
	}
	return func(w *Worker) error {
		es, _, err := scanAll(w.Ctx, w.B, w.Table, api.Query{Top: api.OptionalTop(top)}, maxPages)
		if err != nil {
			return err
		}
		if len(es) != d.records {
			return wrong("table scan returned %d entities, want %d", len(es), d.records)
		}
		if err := checkKeyOrder(es, nil); err != nil {
			return err
		}
		if w.deep() {
			for k := 0; k < len(es); k += sampleEvery {
				i, ok := d.index(es[k].PartitionKey, es[k].RowKey)
				if !ok {
					return wrong("table scan returned a key that was never written: (%s, %s)", es[k].PartitionKey, es[k].RowKey)
				}
				if err := d.checkRecord(es[k], i, true); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func setupTableScan(ctx context.Context, env *Env, table string) (*workload, error) {
	d, err := loaded(ctx, env, table, defaultPayload)
	if err != nil {
		return nil, err
	}
	return &workload{step: tableScanStep(d, 0)}, nil
}

func setupPaging(ctx context.Context, env *Env, table string) (*workload, error) {
	d := dataset{records: pagingEntities, partitions: 10, payload: 128}
	if env.Quick {
		d.records, d.partitions = 1500, 3
	}
	if err := d.load(ctx, env.Backend, table); err != nil {
		return nil, err
	}
	return &workload{step: tableScanStep(d, spec.MaxPageSize)}, nil
}

func setupParallelQueries(ctx context.Context, env *Env, table string) (*workload, error) {
	d := dataset{records: 64 * 32, partitions: 64, payload: 256}
	if env.Quick {
		d.records, d.partitions = 64, 8
	}
	if err := d.load(ctx, env.Backend, table); err != nil {
		return nil, err
	}
	return &workload{step: partitionScanStep(d)}, nil
}
