// Package persist keeps the reference's data in a directory across restarts: Store is an
// api.Backend over a reference.Service that writes every acknowledged change to a
// write-ahead log and takes periodic snapshots. `conform serve --data DIR` uses it; the
// reference stays in memory only by default.
//
// # Durability contract
//
// A write is acknowledged (its method returns nil) only after the change is in the log
// file and, under SyncAlways (the default), fsync'd: an acknowledged write survives a
// killed process (SIGKILL) and, with SyncAlways, a crash of the machine. Under SyncNone the
// record is handed to the operating system (write(2)) before the answer, which survives a
// killed process but not a power loss.
//
// Writes are serialized by one lock, and each write is applied to the Service and logged
// inside it: the Service applies the change, the Store reads back the resulting state of
// every entity the write touched (its properties and the Timestamp the Service gave it),
// appends one record holding that state, syncs, and only then releases the lock and
// answers. Reads take the same lock shared, so no reader ever sees a change before it is
// durable; a write whose record could not be written is not acknowledged, and the Store
// then refuses every further request (the Service holds a change the log lacks) until it
// is reopened from the directory, which restores the durable state.
//
// One transaction (entity group transaction) is one record: its puts and deletes are
// replayed together or, when the record was torn by a crash, not at all; a failed
// transaction changes nothing and writes nothing. Records are framed with their length
// and a CRC-32C; replay stops at the first record that is incomplete or fails its check,
// and the log is truncated there (only an unacknowledged write can be lost that way).
//
// Records hold resulting states, not requests: an entity is replayed with the Timestamp it
// was stored with, so its ETag (derived from the Timestamp) is the one the client was
// given, and conditional requests made with it after a restart still match. The Store
// owns the Service's clock to make that possible: during a write the clock stands at the
// write's start, and during replay at each record's time; the Service's rule that
// Timestamps strictly increase then reproduces each logged Timestamp exactly, because
// records are logged in the order they were applied.
//
// # Files
//
// The directory holds LOCK (an exclusive flock: one process per directory), snapshot (the
// latest complete snapshot, replaced by an atomic rename after it was fsync'd) and
// wal-N, the log of the changes after snapshot N. A snapshot starts wal-N+1 and
// names it in its header; the old log is deleted only after the new snapshot is in place,
// so a crash at any point leaves one snapshot and the log that continues it. A snapshot is
// taken every WithSnapshotEvery records and on Close; it holds every table and entity but
// not the delete hold of a recently deleted table name (that hold ends at a restart).
// Taking a snapshot holds the write lock: writes wait while it is written.
//
// It may import the standard library, reference, reference/api and reference/spec.
package persist
