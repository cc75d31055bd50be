// Package reference is the Azure Table data model in memory, modelled on Azure Table Storage
// as observed (EVIDENCE.md sections 1-5): tables with case-insensitive names (case-sensitive
// under WithCaseSensitiveTableNames, as Cosmos DB for Table documents them), entities with
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
//	what each write does   writes.go: insert, update/merge (and upserts), delete, by If-Match;
//	                       which properties are stored; etag.go: the Timestamp and ETag of a
//	                       stored version
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
// Each table's entities are kept by reference/internal/store, which decides no rule: a
// store.Table holds them in key order (api.CompareKeyStrings) with point look-ups, a
// store.Writer changes them in place under the table's write lock with an undo log, so that
// a transaction whose operation fails is rolled back before the lock is released, and
// store.Names interns property names for the whole Service. The reference tells the store
// which properties are kept (storedProperty), judges the size the store reports
// (checkStoredSize) and gives each write its Timestamp and ETag. Whatever reads memory past
// Go's own checks lies in the store.
//
// Two naive models check the two layers on random operations, each printing its seed and
// replaying with -seed N or CONFORM_SEED=N: TestDifferential (diff_test.go) the whole
// Service against reference/model (a map per table, a sort per query) through api.Backend,
// and the store's TestTableAgreesWithModel the engine alone (a map, a sort per scan).
// reference/model calls the pure rules of this package (rules.go: what is valid, the
// answers choices.go settles, the tokens and query options), so the two differ only where
// the engine does.
//
// It may import the standard library, reference/api, reference/spec, reference/odata and
// reference/internal/store.
package reference
