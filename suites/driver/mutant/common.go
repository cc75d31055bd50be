package mutant

import (
	"context"

	"github.com/tableconform/conform/reference/api"
)

// readMapper changes every entity a backend returns: Get Entity, Query Entities, the
// entity an insert returns and the entity of a Retrieve in a transaction.
type readMapper struct {
	api.Backend
	fn func(e *api.Entity)
}

func (m *readMapper) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		m.fn(&got)
	}
	return got, err
}

func (m *readMapper) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	got, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		m.fn(&got)
	}
	return got, err
}

func (m *readMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil {
		mapEntities(p.Entities, m.fn)
	}
	return p, err
}

func (m *readMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	if err == nil {
		mapResults(rs, m.fn)
	}
	return rs, err
}

// writeMapper changes every entity a client writes before the wrapped backend sees it:
// Insert Entity, Update and Merge Entity with their upserts, and transaction operations.
type writeMapper struct {
	api.Backend
	fn func(e api.Entity) api.Entity
}

func (m *writeMapper) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	return m.Backend.InsertEntity(ctx, table, m.fn(e.Clone()))
}

func (m *writeMapper) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.Backend.UpdateEntity(ctx, table, m.fn(e.Clone()), mode, ifMatch)
}

func (m *writeMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	out := make([]api.BatchOp, len(ops))
	for i, op := range ops {
		out[i] = op
		if op.Kind != api.BatchDelete && op.Kind != api.BatchRetrieve {
			out[i].Entity = m.fn(op.Entity.Clone())
		}
	}
	return m.Backend.SubmitBatch(ctx, table, out)
}

// mapValues returns fn applied to every property value of e; fn returning false drops it.
func mapValues(e api.Entity, fn func(v api.Value) (api.Value, bool)) api.Entity {
	for name, v := range e.Properties {
		if nv, keep := fn(v); keep {
			e.Properties[name] = nv
		} else {
			delete(e.Properties, name)
		}
	}
	return e
}

// applyOne runs one transaction operation as the single operation it stands for; a
// non-atomic backend does this. Retrieve returns the entity.
func applyOne(ctx context.Context, b api.Backend, table string, op api.BatchOp) (api.BatchResult, error) {
	ifMatch := op.IfMatch
	if ifMatch == "" {
		ifMatch = api.IfMatchAny
	}
	e := op.Entity
	switch op.Kind {
	case api.BatchInsert:
		got, err := b.InsertEntity(ctx, table, e)
		return api.BatchResult{Status: 201, ETag: got.ETag, Entity: &got}, err
	case api.BatchReplace:
		etag, err := b.UpdateEntity(ctx, table, e, api.Replace, ifMatch)
		return api.BatchResult{Status: 204, ETag: etag}, err
	case api.BatchMerge:
		etag, err := b.UpdateEntity(ctx, table, e, api.Merge, ifMatch)
		return api.BatchResult{Status: 204, ETag: etag}, err
	case api.BatchInsertOrReplace:
		etag, err := b.UpdateEntity(ctx, table, e, api.Replace, "")
		return api.BatchResult{Status: 204, ETag: etag}, err
	case api.BatchInsertOrMerge:
		etag, err := b.UpdateEntity(ctx, table, e, api.Merge, "")
		return api.BatchResult{Status: 204, ETag: etag}, err
	case api.BatchDelete:
		err := b.DeleteEntity(ctx, table, e.PartitionKey, e.RowKey, ifMatch)
		return api.BatchResult{Status: 204}, err
	case api.BatchRetrieve:
		got, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
		return api.BatchResult{Status: 200, ETag: got.ETag, Entity: &got}, err
	}
	return api.BatchResult{}, nil
}
