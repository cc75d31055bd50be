// Package reference is the Azure Table data model in memory, modelled on Azure Table Storage
// as observed (SPEC.md sections 1-5): tables with case-insensitive names, entities with
// validated keys, properties and EDM values, the write operations with their ETag
// concurrency, paged queries in PartitionKey/RowKey order with Storage's continuation
// tokens, and atomic entity group transactions.
//
// Service implements api.Backend in process. It is safe for concurrent use and, given a
// clock (WithClock), deterministic. Each table keeps its entities compactly encoded
// (codec.go) in an append-only arena under stable entity ids, ordered by a google/btree
// index of pointer-free records, with an open-addressing point index for point reads and
// writes (store.go, points.go). Writes change a table in place under its write lock with an
// undo log; a transaction whose operation fails is rolled back before the lock is released.
//
// Where SPEC.md marks a fact UNCERTAIN and reference/spec does not settle it, the choice
// is made once, in choices.go.
//
// It may import the standard library, google/btree, reference/api, reference/spec and
// reference/odata.
package reference
