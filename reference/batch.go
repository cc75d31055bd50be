package reference

import (
	"context"
	"net/http"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// SubmitBatch runs an entity group transaction (EVIDENCE.md 4, EGT): at most 100 operations on
// one PartitionKey, each entity at most once, or a lone Retrieve. The operations run in
// order under the table's write lock, and the first failure rolls back every write before
// it (the store's undo log) before the lock is released: nothing of a failed transaction is
// visible, to readers before or after. The failure is a *spec.Error naming the failed
// operation as choices.go describes.
//
// Results are in request order: Insert 201 (batchInsertStatus), Replace, Merge and the
// upserts 204 with the new ETag, Delete 204 without an ETag, Retrieve 200 with the entity.
// Replace, Merge and Delete with an empty IfMatch mean "*"; the upserts ignore IfMatch.
func (s *Service) SubmitBatch(ctx context.Context, tableName string, ops []api.BatchOp) ([]api.BatchResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, errEmptyBatch()
	}
	if len(ops) > spec.MaxBatchOperations {
		// Storage names operation 99, the last one allowed (CONFIRMED-TRAFFIC).
		return nil, spec.ErrInvalidInput.Newf(spec.MsgBatchTooManyOps).AtIndex(spec.MaxBatchOperations - 1)
	}
	if len(ops) > 1 {
		for i, op := range ops {
			if op.Kind == api.BatchRetrieve {
				return nil, errBatchMixedRetrieve(i)
			}
		}
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return nil, serr.AtIndex(0)
	}
	if ops[0].Kind == api.BatchRetrieve {
		return s.batchRetrieve(t, ops[0].Entity)
	}
	if serr := s.checkBatch(ops); serr != nil {
		return nil, serr
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return nil, spec.ErrTableNotFound.New().AtIndex(0)
	}
	w := t.entities.Begin()
	results := make([]api.BatchResult, len(ops))
	for i, op := range ops {
		var rec store.Record
		var serr *spec.Error
		status := http.StatusNoContent
		switch op.Kind {
		case api.BatchInsert:
			rec, serr = s.insert(w, op.Entity)
			status = batchInsertStatus
		case api.BatchReplace:
			rec, serr = s.update(w, op.Entity, api.Replace, batchIfMatch(op.IfMatch))
		case api.BatchMerge:
			rec, serr = s.update(w, op.Entity, api.Merge, batchIfMatch(op.IfMatch))
		case api.BatchInsertOrReplace:
			rec, serr = s.update(w, op.Entity, api.Replace, "")
		case api.BatchInsertOrMerge:
			rec, serr = s.update(w, op.Entity, api.Merge, "")
		case api.BatchDelete:
			serr = s.delete(w, op.Entity.PartitionKey, op.Entity.RowKey, batchIfMatch(op.IfMatch))
		}
		if serr != nil {
			w.Rollback()
			return nil, batchExecutionError(serr, i)
		}
		results[i].Status = status
		if op.Kind != api.BatchDelete {
			results[i].ETag = rec.ETag()
		}
	}
	w.Commit()
	return results, nil
}

// batchIfMatch returns the If-Match of a conditional batch operation: empty means "*"
// (api.BatchOp).
func batchIfMatch(ifMatch string) string {
	if ifMatch == "" {
		return api.IfMatchAny
	}
	return ifMatch
}

// checkBatch validates every operation of a write transaction in order, before any runs.
func (s *Service) checkBatch(ops []api.BatchOp) *spec.Error {
	pk := ops[0].Entity.PartitionKey
	seen := make(map[string]struct{}, len(ops))
	payload := 0
	for i, op := range ops {
		if op.Kind < api.BatchInsert || op.Kind > api.BatchDelete {
			return spec.ErrInvalidInput.Newf("Unknown batch operation %d.", int(op.Kind)).AtIndex(i)
		}
		e := op.Entity
		if e.PartitionKey != pk {
			return errDifferentPartitions(i)
		}
		if _, dup := seen[e.RowKey]; dup {
			return spec.ErrInvalidDuplicateRow.New().AtIndex(i)
		}
		seen[e.RowKey] = struct{}{}
		if op.Kind != api.BatchDelete {
			if serr := s.checkEntity(e); serr != nil {
				return serr.AtIndex(i)
			}
		}
		switch op.Kind {
		case api.BatchReplace, api.BatchMerge, api.BatchDelete:
			if serr := checkIfMatch(batchIfMatch(op.IfMatch)); serr != nil {
				return serr.AtIndex(i)
			}
		}
		payload += jsonSizeLowerBound(e)
	}
	if payload > spec.MaxBatchBytes {
		return errBatchPayloadTooLarge()
	}
	return nil
}

// batchRetrieve runs a transaction of one Retrieve.
func (s *Service) batchRetrieve(t *table, key api.Entity) ([]api.BatchResult, error) {
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return nil, spec.ErrTableNotFound.New().AtIndex(0)
	}
	rec, found := t.entities.Get(key.PartitionKey, key.RowKey)
	var e api.Entity
	if found {
		e = rec.Entity(s.names)
	}
	t.mu.RUnlock()
	if !found {
		return nil, batchExecutionError(spec.ErrResourceNotFound.New(), 0)
	}
	return []api.BatchResult{{Status: http.StatusOK, ETag: e.ETag, Entity: &e}}, nil
}
