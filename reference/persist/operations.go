package persist

import (
	"context"
	"fmt"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

// CreateTable creates a table and logs it.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	return s.write(func(svc *reference.Service) (record, bool, error) {
		if err := svc.CreateTable(ctx, name); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindCreateTable, Table: name}, true, nil
	})
}

// DeleteTable deletes a table and logs it.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	return s.write(func(svc *reference.Service) (record, bool, error) {
		if err := svc.DeleteTable(ctx, name); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindDeleteTable, Table: name}, true, nil
	})
}

// QueryTables lists tables.
func (s *Store) QueryTables(ctx context.Context, q api.TableQuery) (p api.TablePage, err error) {
	err = s.read(func(svc *reference.Service) error { p, err = svc.QueryTables(ctx, q); return err })
	return p, err
}

// InsertEntity inserts an entity and logs it as stored.
func (s *Store) InsertEntity(ctx context.Context, table string, e api.Entity) (stored api.Entity, err error) {
	err = s.write(func(svc *reference.Service) (record, bool, error) {
		stored, err = svc.InsertEntity(ctx, table, e)
		if err != nil {
			return record{}, false, err
		}
		return record{Kind: kindEntities, Table: table, Puts: []api.Entity{stored}}, true, nil
	})
	return stored, err
}

// UpdateEntity replaces or merges an entity and logs its resulting state.
func (s *Store) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (etag string, err error) {
	err = s.write(func(svc *reference.Service) (record, bool, error) {
		etag, err = svc.UpdateEntity(ctx, table, e, mode, ifMatch)
		if err != nil {
			return record{}, false, err
		}
		stored, err := readBack(svc, table, e.PartitionKey, e.RowKey)
		if err != nil {
			return record{}, true, err
		}
		return record{Kind: kindEntities, Table: table, Puts: []api.Entity{stored}}, true, nil
	})
	return etag, err
}

// readBack reads the state a write just gave an entity. It runs under the write lock,
// without the caller's context: once applied, the change must be logged.
func readBack(svc *reference.Service, table, pk, rk string) (api.Entity, error) {
	x, err := svc.GetEntity(context.Background(), table, pk, rk, nil)
	if err != nil {
		return api.Entity{}, fmt.Errorf("persist: read back (%q, %q) of %s: %w", pk, rk, table, err)
	}
	return x, nil
}

// DeleteEntity deletes an entity and logs the delete.
func (s *Store) DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) error {
	return s.write(func(svc *reference.Service) (record, bool, error) {
		if err := svc.DeleteEntity(ctx, table, partitionKey, rowKey, ifMatch); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindEntities, Table: table, Deletes: []api.Key{{PartitionKey: partitionKey, RowKey: rowKey}}}, true, nil
	})
}

// GetEntity reads one entity.
func (s *Store) GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (x api.Entity, err error) {
	err = s.read(func(svc *reference.Service) error {
		x, err = svc.GetEntity(ctx, table, partitionKey, rowKey, sel)
		return err
	})
	return x, err
}

// QueryEntities returns one page of a query.
func (s *Store) QueryEntities(ctx context.Context, table string, q api.Query) (p api.Page, err error) {
	err = s.read(func(svc *reference.Service) error { p, err = svc.QueryEntities(ctx, table, q); return err })
	return p, err
}

// QueryEntitiesListed is QueryEntities with each entity's properties listed in name order
// in the caller's buffer (reference.Service.QueryEntitiesListed).
func (s *Store) QueryEntitiesListed(ctx context.Context, table string, q api.Query, into []api.ListedEntity) (p api.ListedPage, err error) {
	err = s.read(func(svc *reference.Service) error { p, err = svc.QueryEntitiesListed(ctx, table, q, into); return err })
	return p, err
}

// GetEntityListed is GetEntity with the entity's properties listed in name order in the
// caller's buffer (reference.Service.GetEntityListed). Unlike an entity GetEntity returns,
// the listed one holds nothing a log may still hold: it is decoded afresh.
func (s *Store) GetEntityListed(ctx context.Context, table, partitionKey, rowKey string, sel []string, props []api.Property) (x api.ListedEntity, err error) {
	err = s.read(func(svc *reference.Service) error {
		x, err = svc.GetEntityListed(ctx, table, partitionKey, rowKey, sel, props)
		return err
	})
	return x, err
}

// RecyclePage hands a page QueryEntities returned back to the Service
// (reference.Service.RecyclePage).
func (s *Store) RecyclePage(p api.Page) {
	s.mu.RLock()
	svc := s.svc
	s.mu.RUnlock()
	svc.RecyclePage(p)
}

// SubmitBatch runs a transaction and logs its resulting states as one record. A lone
// Retrieve is a read.
func (s *Store) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) (res []api.BatchResult, err error) {
	if len(ops) == 1 && ops[0].Kind == api.BatchRetrieve {
		err = s.read(func(svc *reference.Service) error { res, err = svc.SubmitBatch(ctx, table, ops); return err })
		return res, err
	}
	err = s.write(func(svc *reference.Service) (record, bool, error) {
		res, err = svc.SubmitBatch(ctx, table, ops)
		if err != nil {
			return record{}, false, err
		}
		rec := record{Kind: kindEntities, Table: table}
		for _, op := range ops {
			if op.Kind == api.BatchDelete {
				rec.Deletes = append(rec.Deletes, op.Entity.Key())
				continue
			}
			stored, err := readBack(svc, table, op.Entity.PartitionKey, op.Entity.RowKey)
			if err != nil {
				return record{}, true, err
			}
			rec.Puts = append(rec.Puts, stored)
		}
		return rec, true, nil
	})
	return res, err
}
