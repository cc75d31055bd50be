package mutant

import (
	"context"
	"slices"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// batchFunc replaces Submit Batch; submit is the wrapped backend's.
type batchFunc struct {
	api.Backend
	fn func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error)
}

func (m *batchFunc) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	return m.fn(ctx, m.Backend, table, ops)
}

func batchMutant(fn func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error)) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend { return &batchFunc{Backend: b, fn: fn} }
}

// submitGroups submits each group of operations (indexes into ops) as its own transaction,
// in order, and returns the results in request order. The first failure stops it, with the
// failing operation's index in the whole request; the groups before it stay applied.
func submitGroups(ctx context.Context, b api.Backend, table string, ops []api.BatchOp, groups [][]int) ([]api.BatchResult, error) {
	results := make([]api.BatchResult, len(ops))
	for _, g := range groups {
		part := make([]api.BatchOp, len(g))
		for i, idx := range g {
			part[i] = ops[idx]
		}
		rs, err := b.SubmitBatch(ctx, table, part)
		if err != nil {
			if e, ok := driver.AsError(err); ok && e.Indexed && e.FailedIndex >= 0 && e.FailedIndex < len(g) {
				return nil, e.AtIndex(g[e.FailedIndex])
			}
			return nil, err
		}
		for i, idx := range g {
			if i < len(rs) {
				results[idx] = rs[i]
			}
		}
	}
	return results, nil
}

// Entity group transactions (EVIDENCE.md 4).
var (
	_ = define(Mutant{
		Name:        "batch-not-atomic",
		Description: "applies the operations before a failing one and keeps them: a failed transaction is not rolled back",
		Breaks:      []string{"batch.atomic"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaRelationships},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		e, ok := driver.AsError(err)
		if !ok || !e.Indexed || e.FailedIndex <= 0 || e.FailedIndex > len(ops) {
			return rs, err
		}
		for _, op := range ops[:e.FailedIndex] {
			_, _ = applyOne(ctx, b, table, op)
		}
		return rs, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-over-100-split",
		Description: "accepts a transaction of more than 100 operations by running it in chunks of 100",
		Breaks:      []string{"batch.limit.operations"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		if len(ops) <= spec.MaxBatchOperations {
			return b.SubmitBatch(ctx, table, ops)
		}
		var groups [][]int
		for start := 0; start < len(ops); start += spec.MaxBatchOperations {
			var g []int
			for i := start; i < min(start+spec.MaxBatchOperations, len(ops)); i++ {
				g = append(g, i)
			}
			groups = append(groups, g)
		}
		return submitGroups(ctx, b, table, ops, groups)
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-cross-partition-split",
		Description: "accepts a transaction over several partitions by running one transaction per partition",
		Breaks:      []string{"batch.partition.single", "rel.move.batch-refused", "rel.one-to-many.cross-partition-batch"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		var order []string
		byPK := map[string][]int{}
		for i, op := range ops {
			pk := op.Entity.PartitionKey
			if _, seen := byPK[pk]; !seen {
				order = append(order, pk)
			}
			byPK[pk] = append(byPK[pk], i)
		}
		if len(order) < 2 {
			return b.SubmitBatch(ctx, table, ops)
		}
		groups := make([][]int, len(order))
		for i, pk := range order {
			groups[i] = byPK[pk]
		}
		return submitGroups(ctx, b, table, ops, groups)
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-results-reversed",
		Description: "returns the results of a transaction in reverse request order",
		Breaks:      []string{"batch.results.order"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		slices.Reverse(rs)
		return rs, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-failure-index-zero",
		Description: "names operation 0 as the failing one of every failed transaction",
		Breaks:      []string{"batch.failure.index"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		if e, ok := driver.AsError(err); ok && e.Indexed {
			return rs, e.AtIndex(0)
		}
		return rs, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-duplicate-row-collapsed",
		Description: "accepts a transaction that names one entity twice by keeping only the last operation on it",
		Breaks:      []string{"batch.duplicate-row"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		if !isCode(err, spec.ErrInvalidDuplicateRow.Code) {
			return rs, err
		}
		last := map[api.Key]int{}
		for i, op := range ops {
			last[op.Entity.Key()] = i
		}
		var kept []api.BatchOp
		for i, op := range ops {
			if last[op.Entity.Key()] == i {
				kept = append(kept, op)
			}
		}
		return b.SubmitBatch(ctx, table, kept)
	}), hooks{})
)

// More transaction mutants.
var (
	_ = define(Mutant{
		Name:        "batch-delete-missing-ignored",
		Description: "treats the delete of a missing entity in a transaction as done (idempotent delete)",
		Breaks:      []string{"batch.delete.missing-alone"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		e, ok := driver.AsError(err)
		if !ok || e.Status != 404 || e.Code == spec.ErrTableNotFound.Code {
			return rs, err
		}
		var kept []api.BatchOp
		var idx []int
		for i, op := range ops {
			if op.Kind == api.BatchDelete && (!e.Indexed || e.FailedIndex == i) {
				continue
			}
			kept, idx = append(kept, op), append(idx, i)
		}
		if len(kept) == len(ops) {
			return rs, err
		}
		results := make([]api.BatchResult, len(ops))
		for i := range results {
			results[i] = api.BatchResult{Status: 204}
		}
		if len(kept) > 0 {
			krs, kerr := b.SubmitBatch(ctx, table, kept)
			if kerr != nil {
				return nil, kerr
			}
			for j, i := range idx {
				if j < len(krs) {
					results[i] = krs[j]
				}
			}
		}
		return results, nil
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-applied-in-steps",
		Description: "applies the operations of a transaction one request at a time: readers see it half done, and a failure leaves the earlier operations applied",
		Breaks:      []string{"batch.isolation", "batch.concurrent"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		if len(ops) < 2 || len(ops) > spec.MaxBatchOperations {
			return b.SubmitBatch(ctx, table, ops)
		}
		results := make([]api.BatchResult, len(ops))
		for i, op := range ops {
			if op.Entity.PartitionKey != ops[0].Entity.PartitionKey || op.Kind == api.BatchRetrieve {
				return b.SubmitBatch(ctx, table, ops)
			}
			r, err := applyOne(ctx, b, table, op)
			if err != nil {
				if e, ok := driver.AsError(err); ok {
					return nil, e.AtIndex(i)
				}
				return nil, err
			}
			if op.Kind == api.BatchInsert {
				r.Entity = nil
				r.Status = 204
			}
			results[i] = r
			sleep(ctx, stepPause)
		}
		return results, nil
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-duplicate-check-ignores-case",
		Description: "refuses a transaction naming two RowKeys that differ only in case as a duplicate row",
		Breaks:      []string{"batch.keys.case-sensitive"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		seen := map[string]bool{}
		for i, op := range ops {
			k := strings.ToLower(op.Entity.PartitionKey) + "\x00" + strings.ToLower(op.Entity.RowKey)
			if seen[k] {
				return nil, spec.ErrInvalidDuplicateRow.New().AtIndex(i)
			}
			seen[k] = true
		}
		return b.SubmitBatch(ctx, table, ops)
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-payload-split",
		Description: "accepts a transaction body over 4 MiB by running it in two halves",
		Breaks:      []string{"batch.limit.payload"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		e, ok := driver.AsError(err)
		tooLarge := ok && (e.Status == 413 || e.Code == spec.ErrRequestBodyTooLarge.Code || e.Message == spec.MsgBatchPayloadTooLarge)
		if !tooLarge || len(ops) < 2 {
			return rs, err
		}
		half := len(ops) / 2
		first, second := make([]int, half), make([]int, len(ops)-half)
		for i := range first {
			first[i] = i
		}
		for i := range second {
			second[i] = half + i
		}
		return submitGroups(ctx, b, table, ops, [][]int{first, second})
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-update-upserts",
		Description: "sends a replace or merge with If-Match * in a transaction without If-Match, so it creates a missing entity (EVIDENCE.md 12 #8)",
		Breaks:      []string{"batch.update.missing"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		out := slices.Clone(ops)
		for i, op := range out {
			if op.IfMatch != "" && op.IfMatch != api.IfMatchAny {
				continue
			}
			switch op.Kind {
			case api.BatchReplace:
				out[i].Kind = api.BatchInsertOrReplace
			case api.BatchMerge:
				out[i].Kind = api.BatchInsertOrMerge
			}
		}
		return b.SubmitBatch(ctx, table, out)
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-retrieve-empty",
		Description: "answers a transaction's retrieve with 200 but without the entity",
		Breaks:      []string{"batch.retrieve.alone"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		for i := range rs {
			if i < len(ops) && ops[i].Kind == api.BatchRetrieve {
				rs[i].Entity = nil
			}
		}
		return rs, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-empty-phantom-result",
		Description: "answers an empty transaction with one 204 result, as if it held an operation",
		Breaks:      []string{"batch.empty"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		if len(ops) == 0 {
			return []api.BatchResult{{Status: 204}}, nil
		}
		return b.SubmitBatch(ctx, table, ops)
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-insert-status-200",
		Description: "answers an insert inside a transaction with 200 OK",
		Breaks:      []string{"batch.results.insert-status"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		for i := range rs {
			if i < len(ops) && ops[i].Kind == api.BatchInsert {
				rs[i].Status = 200
			}
		}
		return rs, err
	}), hooks{})
)
