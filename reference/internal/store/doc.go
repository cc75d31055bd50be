// Package store is the storage engine underneath the reference: each table's entities,
// compactly encoded, in an arena of append-only slabs (arena.go, codec.go), ordered by a
// tidwall/btree index of pointer-free records in the key order of api.CompareKeyStrings
// (order.go, table.go), with an open-addressing point index for point reads and writes
// (points.go), and written in place under an undo log (writer.go). All of the reference's
// unsafe code is here.
//
// The surface is small: Table (Get, Ascend, AscendPartition, Len, Reset), Writer (Find,
// Encode, EncodeMerge and their listed forms EncodeListed, EncodeMergeListed, Put, Remove,
// Commit, Rollback), Record (a stored entity's keys, Timestamp, ETag, and the entity decoded
// into a map or listed in name order), StoredValue (a value as a record gives it back), Names
// (the property names interned for a whole service, with their ids and UTF-16 lengths) and
// CompareKeys (api's key order, faster).
//
// It decides no rule. Which entities are valid, which properties are stored (Keep, or the
// Skip marks of a Listed's ids), what each operation does, whether an entity is too large
// (Encoded.Size is api.EntitySize's accounting, for the caller to judge; a listed encoding
// takes the size the caller reckoned as it checked the entity, and the reference's TestCheckListedEntitySize
// holds the two equal), the Timestamp and the ETag a write gets (the caller passes both to
// Put), If-Match, page sizes and continuations are the reference's. The store keeps what it is
// given and gives it back, in key order.
//
// Its contract is executable: TestTableAgreesWithModel (model_test.go) drives a Table and a
// naive model (a map, a sort per scan) with the same random writes, merges, removes,
// commits, rollbacks and compactions, and compares every record and scan; it prints its seed
// and replays with -seed N or CONFORM_SEED=N (internal/testseed).
//
// It may import the standard library, github.com/tidwall/btree and reference/api (and
// reference/spec only through api); only package reference imports it.
package store
