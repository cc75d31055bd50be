package reference

import (
	"github.com/tableconform/conform/reference/api"
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
// Replace stores the properties sent, nulls dropped; Merge keeps the stored properties the
// request does not name and ignores nulls (codec.go, encodeMerge). Every stored version gets
// the next Timestamp of the Service's clock and the ETag made from it. An entity that would
// be stored with too many properties or too many bytes is refused (checkStoredSize) and
// nothing changes. Delete without If-Match never reaches this file (errDeleteWithoutIfMatch).
//
// The mechanics (where bytes lie, the indexes, the undo log) are store.go's.

// ifMatchAllows says whether ifMatch allows a write to the stored version with ETag etag:
// "" (an upsert) and "*" allow any version, an ETag only its own.
func ifMatchAllows(ifMatch, etag string) bool {
	return ifMatch == "" || ifMatch == api.IfMatchAny || ifMatch == etag
}

// insert stores the validated entity e.
func (w *writer) insert(e api.Entity) (loc, *spec.Error) {
	h := w.t.pointHash(e.PartitionKey, e.RowKey)
	if _, found := w.t.lookupHashed(h, e.PartitionKey, e.RowKey); found {
		return loc{}, spec.ErrEntityAlreadyExists.New()
	}
	return w.store(h, e.PartitionKey, e.RowKey, e.Properties, loc{}, false)
}

// update replaces or merges the validated entity e.
func (w *writer) update(e api.Entity, mode api.UpdateMode, ifMatch string) (loc, *spec.Error) {
	h := w.t.pointHash(e.PartitionKey, e.RowKey)
	old, found := w.t.lookupHashed(h, e.PartitionKey, e.RowKey)
	switch {
	case !found && ifMatch == "":
		return w.store(h, e.PartitionKey, e.RowKey, e.Properties, loc{}, false)
	case !found && ifMatch == api.IfMatchAny:
		return loc{}, spec.ErrResourceNotFound.New()
	case !found:
		return loc{}, errConditionalMissing()
	case !ifMatchAllows(ifMatch, bodyETagOf(w.t.arena.body(old))):
		return loc{}, spec.ErrUpdateCondition.New()
	case mode == api.Merge:
		return w.merge(h, e.PartitionKey, e.RowKey, e.Properties, old)
	}
	return w.store(h, e.PartitionKey, e.RowKey, e.Properties, old, true)
}

// delete removes the entity with keys pk, rk; ifMatch is "*" or an ETag.
func (w *writer) delete(pk, rk, ifMatch string) *spec.Error {
	h := w.t.pointHash(pk, rk)
	old, found := w.t.lookupHashed(h, pk, rk)
	switch {
	case !found:
		return spec.ErrResourceNotFound.New()
	case !ifMatchAllows(ifMatch, bodyETagOf(w.t.arena.body(old))):
		return spec.ErrUpdateCondition.New()
	}
	w.remove(h, pk, rk, old)
	return nil
}
