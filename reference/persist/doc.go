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
// durable.
//
// # A disk that cannot be written
//
// A write whose record cannot be written (a full disk) is not acknowledged and is undone:
// the log is cut back to its last whole record and the Service is read back from the
// directory, so no reader sees it (the delete holds of recently deleted table names end,
// as at a restart). It answers 503 ServerBusy, the code Storage gives when
// it cannot serve a request for now and clients retry (EVIDENCE.md 9); further writes are
// refused the same way, without touching the disk, for a delay that doubles with each
// failure (1 s to 30 s), and reads go on. Only when the log cannot even be cut back or read
// does the Store refuse everything (500 InternalError) until it is reopened. A failed
// snapshot loses nothing (the logs hold every write); it is logged and the next periodic
// one waits for a delay that doubles with each failure (10 s to 10 min).
//
// # Torn records and damage
//
// One transaction (entity group transaction) is one record: its puts and deletes are
// replayed together or not at all; a failed transaction changes nothing and writes
// nothing. Records are framed with their length and a CRC-32C. A crash in the middle of a
// write can only tear the last record of the last log, which was never acknowledged: cut
// short by the end of the file, or partly never written (zero bytes to the end of the file,
// a frame header of zero bytes, or a whole zero 512-byte sector inside it). Open cuts it and says so (Stats.Warnings,
// WithLog). Anything else is damage, as in etcd's WAL: a bad frame that intact frames
// follow, a whole last frame of other bytes that fails its checksum, a whole frame that
// does not decode or apply,
// a damaged snapshot, a snapshot naming a log that is absent, logs that no snapshot names,
// a gap between logs. Open refuses it with a *DamageError naming each damaged file and
// changes nothing; with WithRepair it moves the damaged files into damaged-<time> in the
// directory (a damaged log is copied there whole and cut at its last intact record, the cut
// noted in cut.json) and starts from what is intact. Starting from a state with a hole in
// the middle would be wrong, so the intact records after the damage are not applied; the
// repair names them (Stats.Dropped: how many, their tables, some keys) and Salvage reads
// them from damaged-<time>, skipping damaged bytes, so that no acknowledged write is beyond
// reach (`conform data export`).
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
// latest complete snapshot, replaced by an atomic rename after it was fsync'd) and wal-N,
// the logs of the changes after snapshot N, which names wal-N in its header: wal-N,
// wal-N+1, ... form one chain, replayed in order. A snapshot creates the next log (empty,
// durable), then, under the write lock, switches writes to it and freezes the Service
// (reference.Service.Freeze: a copy-on-write clone of each table's index, no entity
// copied; writes wait for it a few milliseconds with 200,000 entities, see
// BenchmarkSnapshotWait), writes the snapshot from the frozen view while writes go on,
// renames it into place and deletes the older logs; a crash at any point leaves a
// snapshot and the chain of logs that continues it. A snapshot is taken every
// WithSnapshotEvery records, on Snapshot and on Close; it holds every table and entity but
// not the delete hold of a recently deleted table name (that hold ends at a restart).
//
// store.go holds the Store, its options and its write path (log, undo, faults);
// operations.go the api.Backend operations over it; log.go and codec.go the log and its
// records; snapshot.go snapshots; restore.go and salvage.go reading a directory back.
//
// It may import the standard library, reference, reference/api and reference/spec.
package persist
