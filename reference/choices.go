package reference

import (
	"net/http"

	"github.com/tableconform/conform/reference/spec"
)

// This file is the one place where the reference chooses a behaviour that EVIDENCE.md marks
// UNCERTAIN (or leaves open) and reference/spec does not already settle. Every other file
// calls these names; a suite that wants to know what the reference chose reads them here.
//
// Order of checks. A request is checked in this order, and the first failure is the
// answer: its query options and headers ($top, $filter, $select, continuation, If-Match),
// then the table's existence, then the entity it carries (keys, then the property count,
// then each property in ordinal name order, then the entity's size), then the stored
// state (exists, ETag). Storage's own order is not documented.
//
// Look-ups never validate keys. Get, Delete, Update, Merge and a batch's Delete or
// Retrieve with a key that could never have been stored (a forbidden character, too long)
// answer 404 ResourceNotFound like any other missing entity; only writes that would store
// a key validate it.
//
// Deleted tables (EVIDENCE.md 2.2, DT). For the hold period after Delete Table, Create Table of
// the same name (in any case) fails with 409 TableBeingDeleted; the table is gone for every
// other purpose: entity operations answer 404 TableNotFound, Delete Table 404
// ResourceNotFound, and Query Tables does not list it.
//
// Query Tables order. Tables are listed in the ordinal order of their lower-cased names
// (names are case-insensitive and ASCII), with the original case; NextTableName names
// the next table to list. With WithCaseSensitiveTableNames (Cosmos DB for Table,
// E-cosmos-documented) a table is keyed, found, held after deletion and listed by its name
// as created, in the ordinal order of those names.
//
// Pages. A page ends when it holds $top (or 1000) entities and at least one more entity
// matches; the continuation then names that next matching entity, so no page is empty and
// the last page carries no continuation. With WithPartitionBoundaryPages a page also ends
// where the PartitionKey changes (a MAY behaviour of Storage, EVIDENCE.md 3.5).
//
// Timestamps. Every write, including each operation of a transaction, takes the next tick
// of one service clock: max(now, last + 100 ns). Storage gave the operations of one batch
// equal timestamps (EVIDENCE.md 1.2), a detail no client can rely on.
//
// Guids. A Guid value reads back in lower case whatever case it was sent in: the store keeps
// its 16 bytes, not its text. The evidence does not say which case Storage answers.

// selectMissingAsNull: a $select naming a property the entity lacks returns that property
// as a null value (api.Value{Null: true}), following DM's "included ... marked with a null
// attribute"; the JSON form on Storage is UNCERTAIN (EVIDENCE.md 3.4, 11.7).
const selectMissingAsNull = true

// batchInsertStatus is the status of a successful Insert inside a transaction. Without a
// Prefer header an Insert answers 201 (EVIDENCE.md 2.3, 2.5); the SDKs send
// return-no-content and get 204, which the HTTP layer applies.
const batchInsertStatus = http.StatusCreated

// errInvalidKey answers a PartitionKey or RowKey with a forbidden character (EVIDENCE.md 1.2:
// '/', '\', '#', '?', U+0000-U+001F, U+007F-U+009F), one longer than spec.MaxKeyBytes, or
// one that is not valid UTF-8. Storage's code is likely OutOfRangeInput (a '?' in a batch
// gave it); the status outside a batch is UNCERTAIN (EVIDENCE.md 11.1, 11.10). Azurite answers
// InvalidInput.
func errInvalidKey() *spec.Error { return spec.ErrOutOfRangeInput.New() }

// errTableNameLength answers a table name of the right characters but outside 3..63
// characters; only Azurite's answer is known (EVIDENCE.md 1.1).
func errTableNameLength() *spec.Error {
	return spec.ErrOutOfRangeInput.Newf("The specified resource name length is not within the permissible limits.")
}

// errDeleteWithoutIfMatch answers Delete Entity without If-Match: 400 is CONFIRMED-DOC
// (DE: the header is required), the code is not documented.
func errDeleteWithoutIfMatch() *spec.Error { return spec.ErrMissingRequiredHeader.New() }

// errMalformedETag answers an If-Match that is neither "*" nor a quoted entity tag
// ("..." or W/"..."), with TERR's message (EVIDENCE.md 2.3). A well-formed tag that matches
// no version is a 412.
func errMalformedETag(etag string) *spec.Error {
	return spec.ErrInvalidInput.Newf(spec.MsgInvalidETagFormat, etag)
}

// errConditionalMissing answers Update or Merge with a specific ETag of an entity that does
// not exist: 404 rather than 412 (UNCERTAIN, EVIDENCE.md 2.3), as with If-Match: *.
func errConditionalMissing() *spec.Error { return spec.ErrResourceNotFound.New() }

// errBadContinuation answers a NextPartitionKey, NextRowKey or NextTableName that this
// service did not issue (a malformed token, a NextRowKey without NextPartitionKey).
func errBadContinuation() *spec.Error { return spec.ErrInvalidInput.New() }

// errInvalidValue answers a value that is not valid for its type: an unknown EDM type, an
// Int32 outside 32 bits, a Guid not in 8-4-4-4-12 form, a string that is not UTF-8.
func errInvalidValue() *spec.Error { return spec.ErrInvalidValueType.New() }

// errDateTimeRange answers an Edm.DateTime outside 1601-01-01..9999-12-31 (users report
// OutOfRangeInput for dates before 1601; UNCERTAIN, EVIDENCE.md 1.5).
func errDateTimeRange() *spec.Error { return spec.ErrOutOfRangeInput.New() }

// errSystemPropertyName answers a custom property named PartitionKey or RowKey (a
// system name, DM). A custom "Timestamp" is ignored instead, as the service ignores a
// client-sent Timestamp (DM).
func errSystemPropertyName() *spec.Error { return spec.ErrPropertyNameInvalid.New() }

// Entity group transactions (EVIDENCE.md 4).
//
// Checks run in this order: the number of operations, a Retrieve mixed with others, the
// table, then each operation in order (its PartitionKey against the first operation's, a
// repeated row, its entity, its If-Match), then the payload estimate, then execution in
// order.
//
// The failed index. Every 400 names its operation (FailedIndex, Indexed), as traffic shows
// for 101 operations ("99:") and a repeated row ("1:"); a missing table names operation 0
// ("0:", UNCERTAIN). An execution failure (404 ResourceNotFound, 409 EntityAlreadyExists,
// 412 UpdateConditionNotSatisfied) carries the operation's own status; it names its
// operation when that is not the first, and carries no index when it is the first, as
// Storage answered a lone Delete of a missing entity (404, no prefix; CONFIRMED-TRAFFIC)
// and as Azurite's service-validated test expects an index for a later operation.

// errDifferentPartitions answers an operation whose PartitionKey differs from the first
// operation's (UNCERTAIN code, EVIDENCE.md 4, 5.2).
func errDifferentPartitions(index int) *spec.Error {
	return spec.ErrDifferentPartitions.New().AtIndex(index)
}

// errEmptyBatch answers a transaction without operations (clients refuse to send one).
func errEmptyBatch() *spec.Error {
	return spec.ErrInvalidInput.Newf("The batch request contains no operations.")
}

// errBatchPayloadTooLarge answers a transaction whose JSON bodies alone, estimated from
// below, exceed spec.MaxBatchBytes (the HTTP layer checks the real payload): 413
// RequestBodyTooLarge, as for any body over 4 MiB (EVIDENCE.md 13, E-body-too-large).
func errBatchPayloadTooLarge() *spec.Error {
	return spec.ErrRequestBodyTooLarge.Newf(spec.MsgBatchPayloadTooLarge)
}

// errBatchMixedRetrieve answers a Retrieve that is not alone in its transaction; it names
// the first Retrieve.
func errBatchMixedRetrieve(index int) *spec.Error {
	return spec.ErrInvalidInput.Newf(spec.MsgBatchMixedRetrieve).AtIndex(index)
}

// batchExecutionError marks the execution failure err of operation index (see above).
func batchExecutionError(err *spec.Error, index int) *spec.Error {
	if err.Status == http.StatusBadRequest || index > 0 {
		return err.AtIndex(index)
	}
	return err
}
