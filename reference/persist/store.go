package persist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// SyncPolicy says when the log is fsync'd.
type SyncPolicy int

const (
	// SyncAlways fsyncs the log after every record, before the write is acknowledged.
	SyncAlways SyncPolicy = iota
	// SyncNone writes each record to the operating system before the write is
	// acknowledged and never fsyncs it: it survives a killed process, not a power loss.
	SyncNone
)

// DefaultSnapshotEvery is how many log records trigger a snapshot by default.
const DefaultSnapshotEvery = 100_000

type config struct {
	sync          SyncPolicy
	snapshotEvery int
	clock         func() time.Time
	service       []reference.Option
}

// Option configures Open.
type Option func(*config)

// WithSync sets the fsync policy (default SyncAlways).
func WithSync(p SyncPolicy) Option { return func(c *config) { c.sync = p } }

// WithSnapshotEvery takes a snapshot after every n log records (default
// DefaultSnapshotEvery; 0 or less: only on Close and Snapshot).
func WithSnapshotEvery(n int) Option { return func(c *config) { c.snapshotEvery = n } }

// WithServiceOptions passes options to reference.New (a reference.WithClock among them is
// overridden: the Store owns the Service's clock).
func WithServiceOptions(opts ...reference.Option) Option {
	return func(c *config) { c.service = append(c.service, opts...) }
}

// Stats describes what Open restored.
type Stats struct {
	Tables           int           // tables after restore
	SnapshotEntities int           // entities restored from the snapshot
	LogRecords       int           // log records replayed after it
	TruncatedBytes   int64         // bytes of torn records cut from the end of the log
	Restore          time.Duration // how long Open took to restore
}

// Store is an api.Backend over a reference.Service whose every acknowledged change is in
// the directory it was opened on (see the package documentation for the contract).
type Store struct {
	dir   string
	cfg   config
	svc   *reference.Service
	at    atomic.Int64 // the Service's clock: Unix nanoseconds of the current write
	lock  *os.File
	stats Stats

	mu          sync.RWMutex // writers exclusive, readers shared
	wal         *os.File     // guarded by mu
	gen         uint64       // generation of wal; guarded by mu
	sinceSnap   int          // records since the last snapshot; guarded by mu
	broken      error        // set when a record could not be written; guarded by mu
	closed      bool         // guarded by mu
	encodeBuf   encoder      // guarded by mu (write lock)
	snapshotErr error        // the last failure of a periodic snapshot; guarded by mu
}

var _ api.Backend = (*Store)(nil)

// Open restores the Store kept in dir (creating dir when it does not exist): the latest
// snapshot, then the log after it, cut at its first torn record. Only one process may
// have a directory open.
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := config{sync: SyncAlways, snapshotEvery: DefaultSnapshotEvery, clock: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("persist: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("persist: %w", err)
	}
	s := &Store{dir: dir, cfg: cfg, lock: lock}
	svcOpts := append(slices.Clone(cfg.service), reference.WithClock(func() time.Time { return time.Unix(0, s.at.Load()).UTC() }))
	s.svc = reference.New(svcOpts...)
	if err := s.restore(); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("persist: restore %s: %w", dir, err)
	}
	s.stats.Restore = time.Since(start)
	return s, nil
}

// Stats returns what Open restored.
func (s *Store) Stats() Stats { return s.stats }

// restorer applies restored changes to the Service with its clock at each change's time.
type restorer struct{ s *Store }

func (r *restorer) ctx() context.Context { return context.Background() }

func (r *restorer) createTable(name string, at time.Time) error {
	r.s.at.Store(at.UnixNano())
	return r.s.svc.CreateTable(r.ctx(), name)
}

func (r *restorer) deleteTable(name string, at time.Time) error {
	r.s.at.Store(at.UnixNano())
	return r.s.svc.DeleteTable(r.ctx(), name)
}

func (r *restorer) put(table string, x api.Entity) error {
	r.s.at.Store(x.Timestamp.UnixNano())
	if _, err := r.s.svc.UpdateEntity(r.ctx(), table, x, api.Replace, ""); err != nil {
		return fmt.Errorf("restore %s (%q, %q): %w", table, x.PartitionKey, x.RowKey, err)
	}
	return nil
}

func (r *restorer) apply(rec record) error {
	switch rec.Kind {
	case kindCreateTable:
		return r.createTable(rec.Table, rec.At)
	case kindDeleteTable:
		return r.deleteTable(rec.Table, rec.At)
	case kindEntities:
		puts := slices.Clone(rec.Puts)
		slices.SortFunc(puts, func(a, b api.Entity) int { return a.Timestamp.Compare(b.Timestamp) })
		for _, x := range puts {
			if err := r.put(rec.Table, x); err != nil {
				return err
			}
		}
		for _, k := range rec.Deletes {
			err := r.s.svc.DeleteEntity(r.ctx(), rec.Table, k.PartitionKey, k.RowKey, api.IfMatchAny)
			var se *spec.Error
			if err != nil && !(errors.As(err, &se) && se.Code == spec.ErrResourceNotFound.Code) {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected record kind %d", rec.Kind)
}

func (s *Store) restore() error {
	r := &restorer{s: s}
	gen, n, err := loadSnapshot(s.dir, r)
	if err != nil {
		return err
	}
	s.stats.SnapshotEntities = n
	path := filepath.Join(s.dir, walName(gen))
	valid, records, err := replayLog(path, r.apply)
	if err != nil {
		return err
	}
	s.stats.LogRecords = records
	wal, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if fi, err := wal.Stat(); err == nil && fi.Size() > valid {
		s.stats.TruncatedBytes = fi.Size() - valid
	}
	if err := wal.Truncate(valid); err != nil {
		wal.Close()
		return err
	}
	if _, err := wal.Seek(valid, 0); err != nil {
		wal.Close()
		return err
	}
	if err := wal.Sync(); err != nil {
		wal.Close()
		return err
	}
	if err := syncDir(s.dir); err != nil {
		wal.Close()
		return err
	}
	s.wal, s.gen, s.sinceSnap = wal, gen, records
	removeStaleLogs(s.dir, gen)
	tables, err := allTables(context.Background(), s.svc)
	if err != nil {
		return err
	}
	s.stats.Tables = len(tables)
	return nil
}

// removeStaleLogs deletes the logs of other generations: older ones are in the snapshot,
// a newer one belongs to a snapshot that was never put in place and holds nothing.
func removeStaleLogs(dir string, gen uint64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "wal-") && e.Name() != walName(gen) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// errUnavailable answers every request after a record could not be written, or after
// Close.
func (s *Store) unavailable() error {
	if s.closed {
		return fmt.Errorf("persist: the store is closed")
	}
	e := spec.ErrInternalError.New()
	e.Message += "\nThe data directory could not be written; restart the server to recover the durable state."
	return e
}

// read runs fn with the read lock: it sees only durable changes.
func (s *Store) read(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.broken != nil || s.closed {
		return s.unavailable()
	}
	return fn()
}

// write runs apply with the write lock and the Service's clock at now; when apply
// succeeds it logs what apply returns before the write is acknowledged.
func (s *Store) write(apply func() (record, bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil || s.closed {
		return s.unavailable()
	}
	now := s.cfg.clock()
	s.at.Store(now.UnixNano())
	rec, changed, err := apply()
	if !changed {
		return err
	}
	if err != nil {
		// Applied but not loggable: the Service holds a change the log lacks.
		s.broken = err
		return s.unavailable()
	}
	rec.At = now
	if err := s.append(rec); err != nil {
		s.broken = err
		return s.unavailable()
	}
	s.sinceSnap++
	if s.cfg.snapshotEvery > 0 && s.sinceSnap >= s.cfg.snapshotEvery {
		// A failed periodic snapshot loses nothing (the log still holds every record);
		// it is kept for Snapshot and Close to report.
		s.snapshotErr = s.snapshotLocked()
	}
	return nil
}

// append writes one framed record to the log and, under SyncAlways, fsyncs it.
func (s *Store) append(rec record) error {
	s.encodeBuf.b = s.encodeBuf.b[:0]
	if err := s.encodeBuf.record(rec); err != nil {
		return err
	}
	if len(s.encodeBuf.b) > maxPayload {
		return fmt.Errorf("record of %d bytes exceeds %d", len(s.encodeBuf.b), maxPayload)
	}
	if _, err := s.wal.Write(frame(s.encodeBuf.b)); err != nil {
		return err
	}
	if cap(s.encodeBuf.b) > 8<<20 {
		s.encodeBuf.b = nil
	}
	if s.cfg.sync == SyncAlways {
		return s.wal.Sync()
	}
	return nil
}

// Snapshot writes a snapshot now and starts a new log.
func (s *Store) Snapshot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil || s.closed {
		return s.unavailable()
	}
	return s.snapshotLocked()
}

// snapshotLocked: the new log is created (empty, durable) first, then the snapshot that
// names it is renamed into place, then the old log is deleted.
func (s *Store) snapshotLocked() error {
	next := s.gen + 1
	path := filepath.Join(s.dir, walName(next))
	wal, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := wal.Sync(); err != nil {
		wal.Close()
		return err
	}
	if err := writeSnapshot(context.Background(), s.dir, s.svc, next); err != nil {
		wal.Close()
		_ = os.Remove(path)
		return fmt.Errorf("persist: snapshot: %w", err)
	}
	old := s.wal
	s.wal, s.gen, s.sinceSnap = wal, next, 0
	_ = old.Close()
	removeStaleLogs(s.dir, next)
	return nil
}

// Close takes a final snapshot (so that the next Open need not replay the log), closes the
// log and releases the directory.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	var err error
	if s.broken == nil && s.sinceSnap > 0 {
		err = s.snapshotLocked()
	}
	if cerr := s.wal.Close(); err == nil {
		err = cerr
	}
	s.closed = true
	_ = s.lock.Close()
	return err
}

// CreateTable creates a table and logs it.
func (s *Store) CreateTable(ctx context.Context, name string) error {
	return s.write(func() (record, bool, error) {
		if err := s.svc.CreateTable(ctx, name); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindCreateTable, Table: name}, true, nil
	})
}

// DeleteTable deletes a table and logs it.
func (s *Store) DeleteTable(ctx context.Context, name string) error {
	return s.write(func() (record, bool, error) {
		if err := s.svc.DeleteTable(ctx, name); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindDeleteTable, Table: name}, true, nil
	})
}

// QueryTables lists tables.
func (s *Store) QueryTables(ctx context.Context, q api.TableQuery) (p api.TablePage, err error) {
	err = s.read(func() error { p, err = s.svc.QueryTables(ctx, q); return err })
	return p, err
}

// InsertEntity inserts an entity and logs it as stored.
func (s *Store) InsertEntity(ctx context.Context, table string, e api.Entity) (stored api.Entity, err error) {
	err = s.write(func() (record, bool, error) {
		stored, err = s.svc.InsertEntity(ctx, table, e)
		if err != nil {
			return record{}, false, err
		}
		return record{Kind: kindEntities, Table: table, Puts: []api.Entity{stored}}, true, nil
	})
	return stored, err
}

// UpdateEntity replaces or merges an entity and logs its resulting state.
func (s *Store) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (etag string, err error) {
	err = s.write(func() (record, bool, error) {
		etag, err = s.svc.UpdateEntity(ctx, table, e, mode, ifMatch)
		if err != nil {
			return record{}, false, err
		}
		stored, err := s.readBack(table, e.PartitionKey, e.RowKey)
		if err != nil {
			return record{}, true, err
		}
		return record{Kind: kindEntities, Table: table, Puts: []api.Entity{stored}}, true, nil
	})
	return etag, err
}

// readBack reads the state a write just gave an entity. It runs under the write lock,
// without the caller's context: once applied, the change must be logged.
func (s *Store) readBack(table, pk, rk string) (api.Entity, error) {
	x, err := s.svc.GetEntity(context.Background(), table, pk, rk, nil)
	if err != nil {
		return api.Entity{}, fmt.Errorf("persist: read back (%q, %q) of %s: %w", pk, rk, table, err)
	}
	return x, nil
}

// DeleteEntity deletes an entity and logs the delete.
func (s *Store) DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) error {
	return s.write(func() (record, bool, error) {
		if err := s.svc.DeleteEntity(ctx, table, partitionKey, rowKey, ifMatch); err != nil {
			return record{}, false, err
		}
		return record{Kind: kindEntities, Table: table, Deletes: []api.Key{{PartitionKey: partitionKey, RowKey: rowKey}}}, true, nil
	})
}

// GetEntity reads one entity.
func (s *Store) GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (x api.Entity, err error) {
	err = s.read(func() error { x, err = s.svc.GetEntity(ctx, table, partitionKey, rowKey, sel); return err })
	return x, err
}

// QueryEntities returns one page of a query.
func (s *Store) QueryEntities(ctx context.Context, table string, q api.Query) (p api.Page, err error) {
	err = s.read(func() error { p, err = s.svc.QueryEntities(ctx, table, q); return err })
	return p, err
}

// RecyclePage hands a page QueryEntities returned back to the Service
// (reference.Service.RecyclePage).
func (s *Store) RecyclePage(p api.Page) { s.svc.RecyclePage(p) }

// SubmitBatch runs a transaction and logs its resulting states as one record. A lone
// Retrieve is a read.
func (s *Store) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) (res []api.BatchResult, err error) {
	if len(ops) == 1 && ops[0].Kind == api.BatchRetrieve {
		err = s.read(func() error { res, err = s.svc.SubmitBatch(ctx, table, ops); return err })
		return res, err
	}
	err = s.write(func() (record, bool, error) {
		res, err = s.svc.SubmitBatch(ctx, table, ops)
		if err != nil {
			return record{}, false, err
		}
		rec := record{Kind: kindEntities, Table: table}
		for _, op := range ops {
			if op.Kind == api.BatchDelete {
				rec.Deletes = append(rec.Deletes, op.Entity.Key())
				continue
			}
			stored, err := s.readBack(table, op.Entity.PartitionKey, op.Entity.RowKey)
			if err != nil {
				return record{}, true, err
			}
			rec.Puts = append(rec.Puts, stored)
		}
		return rec, true, nil
	})
	return res, err
}
