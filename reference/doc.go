// Package reference is the Azure Table data model in memory, modelled on Azure Table Storage
// as observed (EVIDENCE.md sections 1-5): tables with case-insensitive names, entities with
// validated keys, properties and EDM values, the write operations with their ETag
// concurrency, paged queries in PartitionKey/RowKey order with Storage's continuation
// tokens, and atomic entity group transactions.
//
// Service implements api.Backend in process. It is safe for concurrent use and, given a
// clock (WithClock), deterministic.
//
// # The rules, and where to read them
//
// A reader checking the reference against the evidence reads these files; the limits and
// error codes themselves are data in reference/spec.
//
//	what is valid          validate.go: table names, keys, property names, values, sizes, If-Match
//	what each write does   writes.go: insert, update/merge (and upserts), delete, by If-Match
//	the operations         entities.go (Insert, Update, Merge, Delete, Get Entity),
//	                       service.go (Create, Delete, Query Tables)
//	queries                filter.go ($filter, $select, $top, page size), query.go (order,
//	                       key ranges, pages)
//	continuation           continuation.go: the tokens and what they resume
//	batches                batch.go: one partition, at most 100 operations, all or nothing,
//	                       the failed operation's index
//	undecided facts        choices.go: where the evidence leaves a choice open, the choice made
//
// # The storage engine underneath
//
// Each table keeps its entities compactly encoded (codec.go) in an append-only arena under
// stable entity ids, ordered by a google/btree index of pointer-free records in the key
// order of compare.go, with an open-addressing point index for point reads and writes
// (store.go, points.go). Writes change a table in place under its write lock with an undo
// log; a transaction whose operation fails is rolled back before the lock is released. None
// of these files decides a rule. TestDifferential (diff_test.go) checks the whole Service
// against a naive model (a map per table, a sort per query) on random operations; it prints
// its seed and replays with -seed N or CONFORM_SEED=N.
//
// It may import the standard library, google/btree, reference/api, reference/spec and
// reference/odata.
package reference
