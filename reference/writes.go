package reference

import (
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// What each entity write does, once the entity and the If-Match value are valid
// (validate.go) and the table exists. Each write looks up the entity with the same keys,
// then:
//
//	write                        no entity            entity, If-Match allows   entity, If-Match refuses
//	Insert (IE)                  stored               409 EntityAlreadyExists   -
//	Update/Merge, If-Match ""    stored (IOR / IOM)   replaced / merged         -
//	Update/Merge, If-Match "*"   404 ResourceNotFound replaced / merged         -
//	Update/Merge, If-Match ETag  errConditionalMissing replaced / merged        412 UpdateConditionNotSatisfied
//	Delete, If-Match "*" / ETag  404 ResourceNotFound removed                   412 UpdateConditionNotSatisfied
//
// (EVIDENCE.md 2.3; IE, UE, ME, IOR, IOM, DE.) An ETag allows only the version it names.
// Replace stores the properties sent that are stored (storedProperty: nulls and a sent
// Timestamp are not); Merge lays those over the stored properties, keeping the ones the
// request does not name and ignoring nulls. Every stored version gets the next Timestamp of
// the Service's clock and the ETag made from it (etag.go). An entity that would be stored
// with too many properties or too many bytes is refused (checkStoredSize) and nothing
// changes. Delete without If-Match never reaches this file (errDeleteWithoutIfMatch).
//
// The mechanics (where bytes lie, the indexes, the undo log) are the store's
// (reference/internal/store).

const (
	partitionKeyName = "PartitionKey"
	rowKeyName       = "RowKey"
	timestampName    = "Timestamp"
)

// storedProperty reports whether a property sent with an entity is kept: null values are
// not stored (EVIDENCE.md 1.3) and a client-sent Timestamp is ignored (DM).
func storedProperty(name string, v api.Value) bool {
	return !v.Null && name != timestampName
}

// ifMatchAllows says whether ifMatch allows a write to the stored version with ETag etag:
// "" (an upsert) and "*" allow any version, an ETag only its own.
func ifMatchAllows(ifMatch, etag string) bool {
	return ifMatch == "" || ifMatch == api.IfMatchAny || ifMatch == etag
}

// insert stores the validated entity e.
func (s *Service) insert(w *store.Writer, e api.Entity) (store.Record, *spec.Error) {
	return s.insertSent(w, e.PartitionKey, e.RowKey, e.Properties, nil)
}

// insertSent stores the validated entity with keys pk, rk and properties props, or (list not
// nil) the properties listed in name order with what checkListedEntity learnt of them.
func (s *Service) insertSent(w *store.Writer, pk, rk string, props map[string]api.Value, list *store.Listed) (store.Record, *spec.Error) {
	at := w.Find(pk, rk)
	if at.Found() {
		return store.Record{}, spec.ErrEntityAlreadyExists.New()
	}
	return s.store(w, at, props, list, api.Replace)
}

// update replaces or merges the validated entity e.
func (s *Service) update(w *store.Writer, e api.Entity, mode api.UpdateMode, ifMatch string) (store.Record, *spec.Error) {
	return s.updateSent(w, e.PartitionKey, e.RowKey, e.Properties, nil, mode, ifMatch)
}

// updateSent replaces or merges the validated entity with keys pk, rk and properties props
// or list.
func (s *Service) updateSent(w *store.Writer, pk, rk string, props map[string]api.Value, list *store.Listed, mode api.UpdateMode, ifMatch string) (store.Record, *spec.Error) {
	at := w.Find(pk, rk)
	switch {
	case !at.Found() && ifMatch == "":
		return s.store(w, at, props, list, api.Replace)
	case !at.Found() && ifMatch == api.IfMatchAny:
		return store.Record{}, spec.ErrResourceNotFound.New()
	case !at.Found():
		return store.Record{}, errConditionalMissing()
	case !ifMatchAllows(ifMatch, at.Record().ETag()):
		return store.Record{}, spec.ErrUpdateCondition.New()
	}
	return s.store(w, at, props, list, mode)
}

// delete removes the entity with keys pk, rk; ifMatch is "*" or an ETag.
func (s *Service) delete(w *store.Writer, pk, rk, ifMatch string) *spec.Error {
	at := w.Find(pk, rk)
	switch {
	case !at.Found():
		return spec.ErrResourceNotFound.New()
	case !ifMatchAllows(ifMatch, at.Record().ETag()):
		return spec.ErrUpdateCondition.New()
	}
	w.Remove(at)
	return nil
}

// store puts at entry at the entity that props make of it, replacing what is there (or, by
// Merge, laid over it), unless that entity is too large; it gets the next Timestamp.
func (s *Service) store(w *store.Writer, at store.Entry, props map[string]api.Value, list *store.Listed, mode api.UpdateMode) (store.Record, *spec.Error) {
	var enc *store.Encoded
	switch {
	case list != nil && mode == api.Merge:
		enc = w.EncodeMergeListed(at, list)
	case list != nil:
		enc = w.EncodeListed(at, list)
	case mode == api.Merge:
		enc = w.EncodeMerge(at, props, storedProperty)
	default:
		enc = w.Encode(at, props, storedProperty)
	}
	if serr := checkStoredSize(enc.Properties, enc.Size, s.propertyLimits.MaxCustomProperties); serr != nil {
		return store.Record{}, serr
	}
	ticks := s.nextTick()
	var etag [etagLength]byte
	return w.Put(enc, ticks, appendETagOf(etag[:0], ticks, &s.lastETag)), nil
}
