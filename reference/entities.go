package reference

import (
	"context"

	"github.com/google/btree"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// InsertEntity inserts e (SPEC.md 2.3, IE) and returns the entity as stored, with its
// Timestamp and ETag: null properties dropped, a client-sent Timestamp ignored. An entity
// with the same keys fails with 409 EntityAlreadyExists.
func (s *Service) InsertEntity(ctx context.Context, tableName string, e api.Entity) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return api.Entity{}, serr
	}
	if serr := checkEntity(e); serr != nil {
		return api.Entity{}, serr
	}
	t.mu.Lock()
	if t.dropped {
		t.mu.Unlock()
		return api.Entity{}, spec.ErrTableNotFound.New()
	}
	r, serr := s.insert(t, t.tree, e)
	t.mu.Unlock()
	if serr != nil {
		return api.Entity{}, serr
	}
	return s.names.decode(r), nil
}

// UpdateEntity replaces (Update Entity, UE) or merges (Merge Entity, ME) e and returns the
// new ETag. ifMatch "" is an upsert (Insert Or Replace, IOR / Insert Or Merge, IOM); "*"
// updates any existing entity; an ETag updates only that version (412
// UpdateConditionNotSatisfied otherwise). Without an upsert a missing entity is 404
// ResourceNotFound. Replace drops the properties not sent and nulls; Merge keeps them and
// ignores nulls.
func (s *Service) UpdateEntity(ctx context.Context, tableName string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if mode != api.Replace && mode != api.Merge {
		return "", spec.ErrInvalidInput.Newf("Unknown update mode %d.", int(mode))
	}
	if ifMatch != "" {
		if serr := checkIfMatch(ifMatch); serr != nil {
			return "", serr
		}
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return "", serr
	}
	if serr := checkEntity(e); serr != nil {
		return "", serr
	}
	t.mu.Lock()
	if t.dropped {
		t.mu.Unlock()
		return "", spec.ErrTableNotFound.New()
	}
	r, serr := s.update(t, t.tree, e, mode, ifMatch)
	t.mu.Unlock()
	if serr != nil {
		return "", serr
	}
	return formatETag(recordTicks(r)), nil
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
	t, serr := s.openTable(tableName)
	if serr != nil {
		return serr
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return spec.ErrTableNotFound.New()
	}
	if serr := deleteRecord(t.tree, partitionKey, rowKey, ifMatch); serr != nil {
		return serr
	}
	return nil
}

// GetEntity reads one entity; sel, when non-nil, projects it as $select does (SPEC.md 3.4).
// A missing entity is 404 ResourceNotFound.
func (s *Service) GetEntity(ctx context.Context, tableName, partitionKey, rowKey string, sel []string) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	proj, err := compileSelect(sel)
	if err != nil {
		return api.Entity{}, err
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return api.Entity{}, serr
	}
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return api.Entity{}, spec.ErrTableNotFound.New()
	}
	r, found := t.tree.Get(probe(partitionKey, rowKey))
	t.mu.RUnlock()
	if !found {
		return api.Entity{}, spec.ErrResourceNotFound.New()
	}
	e := s.names.decode(r)
	proj.apply(&e)
	return e, nil
}

// insert stores the validated entity e in tree, which belongs to t (write-locked).
func (s *Service) insert(t *table, tree *btree.BTreeG[record], e api.Entity) (record, *spec.Error) {
	if tree.Has(probe(e.PartitionKey, e.RowKey)) {
		return record{}, spec.ErrEntityAlreadyExists.New()
	}
	return s.store(t, tree, e.PartitionKey, e.RowKey, e.Properties)
}

// update replaces or merges the validated entity e into tree (t write-locked); ifMatch ""
// is an upsert.
func (s *Service) update(t *table, tree *btree.BTreeG[record], e api.Entity, mode api.UpdateMode, ifMatch string) (record, *spec.Error) {
	old, found := tree.Get(probe(e.PartitionKey, e.RowKey))
	switch {
	case !found && ifMatch == "":
		return s.store(t, tree, e.PartitionKey, e.RowKey, e.Properties)
	case !found && ifMatch == api.IfMatchAny:
		return record{}, spec.ErrResourceNotFound.New()
	case !found:
		return record{}, errConditionalMissing()
	case ifMatch != "" && ifMatch != api.IfMatchAny && ifMatch != formatETag(recordTicks(old)):
		return record{}, spec.ErrUpdateCondition.New()
	}
	props := e.Properties
	if mode == api.Merge {
		props = s.names.decodeProperties(old)
		for name, v := range e.Properties {
			if storedProperty(name, v) {
				props[name] = v
			}
		}
	}
	return s.store(t, tree, e.PartitionKey, e.RowKey, props)
}

// store checks the entity that would be stored, stamps it with the next tick and puts it
// in tree (t write-locked).
func (s *Service) store(t *table, tree *btree.BTreeG[record], pk, rk string, props map[string]api.Value) (record, *spec.Error) {
	if serr := checkStored(pk, rk, props); serr != nil {
		return record{}, serr
	}
	var r record
	r, t.scratch = s.names.encodeRecord(t.scratch, pk, rk, s.nextTick(), props)
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil // do not keep a buffer sized for a rare large entity
	}
	tree.ReplaceOrInsert(r)
	return r, nil
}

// deleteRecord removes an entity from tree (write-locked) when ifMatch ("*" or an ETag)
// allows.
func deleteRecord(tree *btree.BTreeG[record], pk, rk, ifMatch string) *spec.Error {
	old, found := tree.Get(probe(pk, rk))
	if !found {
		return spec.ErrResourceNotFound.New()
	}
	if ifMatch != api.IfMatchAny && ifMatch != formatETag(recordTicks(old)) {
		return spec.ErrUpdateCondition.New()
	}
	tree.Delete(old)
	return nil
}
