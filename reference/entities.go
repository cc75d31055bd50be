package reference

import (
	"context"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// InsertEntity inserts e (EVIDENCE.md 2.3, IE) and returns the entity as stored, with its
// Timestamp and ETag: null properties dropped, a client-sent Timestamp ignored. An entity
// with the same keys fails with 409 EntityAlreadyExists.
func (s *Service) InsertEntity(ctx context.Context, tableName string, e api.Entity) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	var stored api.Entity
	serr := s.writeEntity(tableName, func() *spec.Error { return s.checkEntity(e) },
		func(w *store.Writer) (store.Record, *spec.Error) { return s.insert(w, e) },
		func(rec store.Record) { stored = rec.EntityInto(s.names, recycledProperties()) })
	if serr != nil {
		return api.Entity{}, serr
	}
	return stored, nil
}

// UpdateEntity replaces (Update Entity, UE) or merges (Merge Entity, ME) e and returns the
// new ETag. ifMatch "" is an upsert (Insert Or Replace, IOR / Insert Or Merge, IOM); "*"
// updates any existing entity; an ETag updates only that version (412
// UpdateConditionNotSatisfied otherwise). Without an upsert a missing entity is 404
// ResourceNotFound. Replace drops the properties not sent and nulls; Merge keeps them and
// ignores nulls.
func (s *Service) UpdateEntity(ctx context.Context, tableName string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := checkUpdate(ctx, mode, ifMatch); err != nil {
		return "", err
	}
	var etag string
	serr := s.writeEntity(tableName, func() *spec.Error { return s.checkEntity(e) },
		func(w *store.Writer) (store.Record, *spec.Error) { return s.update(w, e, mode, ifMatch) },
		func(rec store.Record) { etag = rec.ETag() })
	if serr != nil {
		return "", serr
	}
	return etag, nil
}

// InsertEntityListed is InsertEntity of the entity e lists, its properties in name order
// (wire.DecodeRequestEntityListed), with the entity stored listed in props's array (reused,
// grown as needed: the caller's buffer): the same outcome and errors. The Service keeps
// nothing of e once it returns.
func (s *Service) InsertEntityListed(ctx context.Context, tableName string, e *api.ListedEntity, props []api.Property) (api.ListedEntity, error) {
	if err := ctx.Err(); err != nil {
		return api.ListedEntity{}, err
	}
	stored := api.ListedEntity{Properties: props}
	var ids [listedIDs]uint32
	l := store.Listed{Properties: e.Properties}
	serr := s.writeEntity(tableName, func() (serr *spec.Error) { l.Size, l.IDs, serr = s.checkListedEntity(e, ids[:0]); return serr },
		func(w *store.Writer) (store.Record, *spec.Error) {
			return s.insertSent(w, e.PartitionKey, e.RowKey, nil, &l)
		},
		func(rec store.Record) { listStored(e, rec, &stored) })
	if serr != nil {
		return api.ListedEntity{}, serr
	}
	return stored, nil
}

// listedIDs is the number of property name ids a listed write looks up without allocating.
const listedIDs = 16

// listStored lists into stored (its Properties's array reused) the entity rec, just written
// from the valid entity e by an insert, holds: what rec.ListedInto would give, without
// decoding rec. An insert stores exactly the properties of e that storedProperty keeps, each
// as store.StoredValue gives it back, in e's name order.
func listStored(e *api.ListedEntity, rec store.Record, stored *api.ListedEntity) {
	ps := append(stored.Properties[:0], e.Properties...) // then what is not stored taken out
	kept := 0
	for i := range ps {
		if p := &ps[i]; storedProperty(p.Name, p.Value) {
			if p.Value.Type == api.EdmGuid {
				p.Value = store.StoredValue(p.Value)
			}
			if kept != i {
				ps[kept] = *p
			}
			kept++
		}
	}
	clear(ps[kept:]) // only the returned length of the array holds anything
	ps = ps[:kept]
	*stored = api.ListedEntity{
		PartitionKey: e.PartitionKey,
		RowKey:       e.RowKey,
		Timestamp:    api.TimeOfTicks(rec.Ticks()),
		ETag:         rec.ETag(),
		Properties:   ps,
		PlainText:    e.PlainText, // the same names and String values
	}
}

// UpdateEntityListed is UpdateEntity of the entity e lists, its properties in name order:
// the same outcome and errors. The Service keeps nothing of e once it returns.
func (s *Service) UpdateEntityListed(ctx context.Context, tableName string, e *api.ListedEntity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := checkUpdate(ctx, mode, ifMatch); err != nil {
		return "", err
	}
	var etag string
	var ids [listedIDs]uint32
	l := store.Listed{Properties: e.Properties}
	serr := s.writeEntity(tableName, func() (serr *spec.Error) { l.Size, l.IDs, serr = s.checkListedEntity(e, ids[:0]); return serr },
		func(w *store.Writer) (store.Record, *spec.Error) {
			return s.updateSent(w, e.PartitionKey, e.RowKey, nil, &l, mode, ifMatch)
		},
		func(rec store.Record) { etag = rec.ETag() })
	if serr != nil {
		return "", serr
	}
	return etag, nil
}

// DeleteEntity deletes one entity (DE). ifMatch is required: "" fails with
// errDeleteWithoutIfMatch; "*" deletes any version; an ETag deletes only that version (412
// otherwise). A missing entity is 404 ResourceNotFound.
func (s *Service) DeleteEntity(ctx context.Context, tableName, partitionKey, rowKey, ifMatch string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ifMatch == "" {
		return errDeleteWithoutIfMatch()
	}
	if serr := checkIfMatch(ifMatch); serr != nil {
		return serr
	}
	serr := s.writeEntity(tableName, func() *spec.Error { return nil },
		func(w *store.Writer) (store.Record, *spec.Error) {
			return store.Record{}, s.delete(w, partitionKey, rowKey, ifMatch)
		},
		func(store.Record) {})
	if serr != nil {
		return serr
	}
	return nil
}

// GetEntity reads one entity; sel, when non-nil, projects it as $select does (EVIDENCE.md 3.4).
// A missing entity is 404 ResourceNotFound.
func (s *Service) GetEntity(ctx context.Context, tableName, partitionKey, rowKey string, sel []string) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	proj, err := compileSelect(sel)
	if err != nil {
		return api.Entity{}, err
	}
	rec, serr := s.readRecord(tableName, partitionKey, rowKey)
	if serr != nil {
		return api.Entity{}, serr
	}
	e := rec.EntityInto(s.names, recycledProperties())
	proj.apply(&e)
	return e, nil
}

// readRecord returns the record of the entity (partitionKey, rowKey) of the table called
// tableName: 404 TableNotFound for a table that is not there or dropped, 404
// ResourceNotFound for an entity that is not. A record's bytes are never rewritten, so it
// is read after the table's lock is released.
func (s *Service) readRecord(tableName, partitionKey, rowKey string) (store.Record, *spec.Error) {
	t, serr := s.openTable(tableName)
	if serr != nil {
		return store.Record{}, serr
	}
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return store.Record{}, spec.ErrTableNotFound.New()
	}
	rec, found := t.entities.Get(partitionKey, rowKey)
	t.mu.RUnlock()
	if !found {
		return store.Record{}, spec.ErrResourceNotFound.New()
	}
	return rec, nil
}

// GetEntityListed answers as GetEntity does, with the entity's properties listed in name
// order in props's array (reused, grown as needed: the caller's buffer).
func (s *Service) GetEntityListed(ctx context.Context, tableName, partitionKey, rowKey string, sel []string, props []api.Property) (api.ListedEntity, error) {
	if err := ctx.Err(); err != nil {
		return api.ListedEntity{}, err
	}
	proj, err := compileSelect(sel)
	if err != nil {
		return api.ListedEntity{}, err
	}
	if proj != nil {
		e, err := s.GetEntity(ctx, tableName, partitionKey, rowKey, sel)
		if err != nil {
			return api.ListedEntity{}, err
		}
		listed := listEntity(e, props)
		s.RecycleEntity(e)
		return listed, nil
	}
	rec, serr := s.readRecord(tableName, partitionKey, rowKey)
	if serr != nil {
		return api.ListedEntity{}, serr
	}
	listed := api.ListedEntity{Properties: props}
	rec.ListedInto(s.names, &listed)
	return listed, nil
}

// writeEntity writes one entity in a transaction of its own on the table called tableName:
// the table is opened and check run, then, under the table's lock, write is applied; when
// it succeeds, written sees the record before the commit, else the write is rolled back.
// A table dropped meanwhile is 404 TableNotFound.
func (s *Service) writeEntity(tableName string, check func() *spec.Error, write func(*store.Writer) (store.Record, *spec.Error), written func(store.Record)) *spec.Error {
	t, serr := s.openTable(tableName)
	if serr != nil {
		return serr
	}
	if serr := check(); serr != nil {
		return serr
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return spec.ErrTableNotFound.New()
	}
	w := t.entities.Begin()
	rec, serr := write(w)
	if serr != nil {
		w.Rollback()
		return serr
	}
	written(rec)
	w.Commit()
	return nil
}

// checkUpdate refuses an update whose context is done, whose mode is unknown or whose
// If-Match is malformed, before any table is opened.
func checkUpdate(ctx context.Context, mode api.UpdateMode, ifMatch string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if mode != api.Replace && mode != api.Merge {
		return spec.ErrInvalidInput.Newf("Unknown update mode %d.", int(mode))
	}
	if ifMatch != "" {
		if serr := checkIfMatch(ifMatch); serr != nil {
			return serr
		}
	}
	return nil
}
