package reference

import (
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// The rules of the Service that decide no storage question, exported for reference/model:
// what is valid (validate.go), the answers choices.go settles, the continuation tokens
// (continuation.go) and the query options (filter.go). A second implementation that calls
// these answers every invalid request as the Service does, so that a comparison of the two
// compares what they store and return.

// noNames is an empty interning table: with it, every property name is checked.
var noNames = store.NewNames()

// rulesService is a Service that holds nothing, for the checks that read only its limits.
func rulesService(l PropertyLimits) *Service {
	return &Service{propertyLimits: l, names: noNames}
}

// DefaultPropertyLimits are Storage's property limits (spec.MaxCustomProperties,
// spec.MaxPropertyNameLength), the Service's default.
func DefaultPropertyLimits() PropertyLimits {
	return PropertyLimits{MaxCustomProperties: spec.MaxCustomProperties, MaxPropertyNameLength: spec.MaxPropertyNameLength}
}

// CheckTableName validates a name for Create Table as the Service does.
func CheckTableName(name string) *spec.Error { return checkTableName(name) }

// CheckEntity validates an entity to be written as the Service does under limits l: its keys,
// the number of properties that will be stored, each property in ordinal name order.
func CheckEntity(e api.Entity, l PropertyLimits) *spec.Error { return rulesService(l).checkEntity(e) }

// CheckStoredSize validates the entity that would be stored (after a merge): its number
// of stored properties against l and its size (api.EntitySize) against spec.MaxEntityBytes.
func CheckStoredSize(e api.Entity, l PropertyLimits) *spec.Error {
	return checkStoredSize(len(e.Properties), api.EntitySize(e), l.MaxCustomProperties)
}

// CheckUpdate refuses an unknown update mode or a malformed If-Match ("" is an upsert).
func CheckUpdate(mode api.UpdateMode, ifMatch string) *spec.Error {
	if mode != api.Replace && mode != api.Merge {
		return spec.ErrInvalidInput.Newf("Unknown update mode %d.", int(mode))
	}
	if ifMatch == "" {
		return nil
	}
	return checkIfMatch(ifMatch)
}

// CheckDeleteIfMatch refuses the If-Match of Delete Entity that the Service refuses: none,
// or a malformed one.
func CheckDeleteIfMatch(ifMatch string) *spec.Error {
	if ifMatch == "" {
		return errDeleteWithoutIfMatch()
	}
	return checkIfMatch(ifMatch)
}

// StoredProperty reports whether a property sent with an entity is kept (not null, not a
// client-sent Timestamp).
func StoredProperty(name string, v api.Value) bool { return storedProperty(name, v) }

// ErrConditionalMissing is the answer to Update or Merge with a specific ETag of an entity
// that does not exist.
func ErrConditionalMissing() *spec.Error { return errConditionalMissing() }

// ErrBadContinuation is the answer to a continuation token the service did not issue.
func ErrBadContinuation() *spec.Error { return errBadContinuation() }

// EntityPageLimit returns the page size of Query Entities for a $top, or its refusal.
func EntityPageLimit(top api.Top) (int, error) { return entityPageLimit(top) }

// TablePageLimit returns the page size of Query Tables for a $top (0: none), or its refusal.
func TablePageLimit(top int) (int, error) { return pageLimit(top) }

// Projection is a parsed $select; nil selects everything.
type Projection struct{ p projection }

// ParseSelect parses a $select list as the Service does.
func ParseSelect(sel []string) (Projection, error) {
	p, err := compileSelect(sel)
	return Projection{p}, err
}

// Apply projects e in place as $select does (EVIDENCE.md 3.4).
func (p Projection) Apply(e *api.Entity) { p.p.apply(e) }

// EncodeContinuation returns the continuation that resumes at key k.
func EncodeContinuation(k api.Key) api.Continuation { return encodeContinuation(k) }

// DecodeContinuation returns the position a continuation resumes at; resume is false for
// the zero continuation.
func DecodeContinuation(c api.Continuation) (pos api.Key, resume bool, err error) {
	return decodeContinuation(c)
}

// EncodeTableToken returns the NextTableName token of the table whose key (lower-case
// name) is key; DecodeTableToken reverses it.
func EncodeTableToken(key string) string { return encodeTableToken(key) }

// DecodeTableToken returns the table key a NextTableName token carries.
func DecodeTableToken(token string) (string, error) { return decodeTableToken(token) }

// CheckBatch validates a transaction as the Service does before it opens the table: the
// number of operations and a Retrieve mixed with others.
func CheckBatch(ops []api.BatchOp) *spec.Error {
	if len(ops) == 0 {
		return errEmptyBatch()
	}
	if len(ops) > spec.MaxBatchOperations {
		return spec.ErrInvalidInput.Newf(spec.MsgBatchTooManyOps).AtIndex(spec.MaxBatchOperations - 1)
	}
	if len(ops) > 1 {
		for i, op := range ops {
			if op.Kind == api.BatchRetrieve {
				return errBatchMixedRetrieve(i)
			}
		}
	}
	return nil
}

// CheckBatchOperations validates every operation of a write transaction in order, as the
// Service does once the table is found and before any operation runs.
func CheckBatchOperations(ops []api.BatchOp, l PropertyLimits) *spec.Error {
	return rulesService(l).checkBatch(ops)
}

// BatchExecutionError marks the failure err of operation index of a transaction.
func BatchExecutionError(err *spec.Error, index int) *spec.Error {
	return batchExecutionError(err, index)
}

// BatchInsertStatus is the status of a successful Insert inside a transaction.
const BatchInsertStatus = batchInsertStatus

// BatchIfMatch returns the If-Match of a conditional batch operation: empty means "*".
func BatchIfMatch(ifMatch string) string { return batchIfMatch(ifMatch) }
