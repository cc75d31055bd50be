// Package linearizability checks that concurrent use of an api.Backend is linearizable
// (EVIDENCE.md 6: every operation, and every entity group transaction as a whole, takes
// effect atomically at one instant between its call and its answer, and ETag conditions
// are checked atomically with the write they guard).
//
// Run drives a Workload of concurrent clients against a backend (inserts, reads,
// conditional replaces and deletes with the ETags each client last saw, upserts, and
// transactions of several of these in one partition) and records every call and answer
// with its interval in time. Check then searches, with github.com/anishathalye/porcupine,
// for an order of the operations that respects their intervals and the sequential
// Model of a partition of rows with ETags; when there is none (or the search times out)
// it writes porcupine's visualization of the history to a directory.
//
// The model is the Table service's, restricted to what the workload does: an entity is
// absent or holds one Int64 property "v" and an ETag; Insert fails with 409 when the
// entity exists; a conditional Replace or Delete fails with 404 when it is absent and 412
// when its ETag differs; a transaction applies all its operations or, at its first
// failure, none. ETags are opaque: a write's new ETag is whatever its answer says, and
// later reads must show that one.
//
// It may import the standard library, porcupine, reference/api and reference/spec.
package linearizability
