package persist

import (
	"errors"
	"fmt"
	"io"
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
	repair        bool
	log           io.Writer
	faults        func(op FileOp, file string) error
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

// WithRepair lets Open start from a damaged directory: the damaged files are moved into a
// new directory damaged-<time> inside it (a damaged log is copied there whole and cut at
// its last intact record), and the Store starts from what is intact. Without it Open refuses
// damage with a *DamageError and changes nothing.
func WithRepair() Option { return func(c *config) { c.repair = true } }

// WithLog sets where the Store writes what it repaired and what failed (one line each);
// default: nowhere.
func WithLog(w io.Writer) Option { return func(c *config) { c.log = w } }

// WithClock sets the clock of record times and of the delays between retries (default
// time.Now).
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// FileOp is a file operation a fault hook (WithFaults) can fail.
type FileOp string

// The file operations a fault hook sees.
const (
	OpCreate FileOp = "create" // creating a log
	OpWrite  FileOp = "write"  // writing a log record or a part of a snapshot
	OpSync   FileOp = "sync"   // fsync of a log or a snapshot
	OpRename FileOp = "rename" // putting a snapshot in place
)

// WithFaults calls fault before each file operation on the directory with the operation and
// the file's name; an error it returns is that operation's error (a failed log write
// first writes half the record, as a full disk may). It is for tests that simulate a full
// or failing disk.
func WithFaults(fault func(op FileOp, file string) error) Option {
	return func(c *config) { c.faults = fault }
}

// Stats describes what Open restored.
type Stats struct {
	Tables           int           // tables after restore
	SnapshotEntities int           // entities restored from the snapshot
	LogRecords       int           // log records replayed after it
	TruncatedBytes   int64         // bytes of a torn last record cut from the end of the log
	Restore          time.Duration // how long Open took to restore
	Warnings         []string      // what Open repaired, one line each (also written to WithLog)
	SetAside         string        // WithRepair: the directory the damaged files were moved to
	// Dropped is what a repair set aside that was intact: the changes after the damage,
	// which Salvage reads from SetAside.
	Dropped Dropped
}

// Delays between retries after a failure to write the directory: writes are refused for
// writeRetryMin, doubling to writeRetryMax, before one is tried again; a failed snapshot is
// tried again after snapshotRetryMin, doubling to snapshotRetryMax.
const (
	writeRetryMin    = time.Second
	writeRetryMax    = 30 * time.Second
	snapshotRetryMin = 10 * time.Second
	snapshotRetryMax = 10 * time.Minute
)

// Store is an api.Backend over a reference.Service whose every acknowledged change is in
// the directory it was opened on (see the package documentation for the contract).
type Store struct {
	dir   string
	cfg   config
	at    atomic.Int64 // the Service's clock: Unix nanoseconds of the current write
	lock  *os.File
	stats Stats

	mu        sync.RWMutex       // writers exclusive, readers shared
	svc       *reference.Service // replaced when a failed write is undone; guarded by mu
	wal       *os.File           // guarded by mu
	walSize   int64              // the end of the last whole record in wal; guarded by mu
	gen       uint64             // generation of wal; guarded by mu
	sinceSnap int                // records since the last snapshot started; guarded by mu
	broken    error              // set when the durable state is uncertain; guarded by mu
	closed    bool               // guarded by mu
	encodeBuf encoder            // guarded by mu (write lock)

	writeErr      error     // the last failure to log a write; guarded by mu
	writeFailures int       // consecutive failures to log a write; guarded by mu
	writeRetry    time.Time // writes are refused until then after writeErr; guarded by mu

	snapRunning  bool          // a snapshot is being written; guarded by mu
	snapDone     chan error    // its result; guarded by mu
	snapFailures int           // consecutive failed snapshots; guarded by mu
	snapRetry    time.Time     // no periodic snapshot before then; guarded by mu
	snapPause    time.Duration // how long the last snapshot held the write lock; guarded by mu

	filesMu sync.Mutex // held while a snapshot is put in place and while the directory is read back
}

var _ api.Backend = (*Store)(nil)

// Open restores the Store kept in dir (creating dir when it does not exist): the latest
// snapshot, then the logs that continue it. A torn last record (a write a crash cut short,
// never acknowledged) is cut, with a warning; any other damage is refused with a
// *DamageError unless WithRepair is given. Only one process may have a directory open.
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := config{sync: SyncAlways, snapshotEvery: DefaultSnapshotEvery, clock: time.Now, log: io.Discard}
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
	if err := s.restore(); err != nil {
		_ = lock.Close()
		var de *DamageError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, fmt.Errorf("persist: restore %s: %w", dir, err)
	}
	s.stats.Restore = time.Since(start)
	return s, nil
}

func (s *Store) newService() *reference.Service {
	opts := append(slices.Clone(s.cfg.service), reference.WithClock(func() time.Time { return time.Unix(0, s.at.Load()).UTC() }))
	return reference.New(opts...)
}

// warn writes one line to the log and keeps it in Stats.Warnings.
func (s *Store) warn(line string) {
	s.stats.Warnings = append(s.stats.Warnings, line)
	s.logf("%s", line)
}

func (s *Store) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.log, "persist: "+format+"\n", args...)
}

func (s *Store) fault(op FileOp, file string) error {
	if s.cfg.faults == nil {
		return nil
	}
	return s.cfg.faults(op, file)
}

// Stats returns what Open restored.
func (s *Store) Stats() Stats { return s.stats }

// unavailable answers every request once the durable state is uncertain (a failed log
// write could not be undone), or after Close.
func (s *Store) unavailable() error {
	if s.closed {
		return fmt.Errorf("persist: the store is closed")
	}
	e := spec.ErrInternalError.New()
	e.Message += "\nThe data directory could not be written; restart the server to recover the durable state."
	return e
}

// refuseWrite answers a write while writes are refused after a failure to write the log:
// 503 ServerBusy, which Storage answers when it cannot serve a request for now and clients
// retry (EVIDENCE.md 9); reads go on.
func (s *Store) refuseWrite() error {
	e := spec.ErrServerBusy.New()
	e.Message += "\nWrites are refused for now: the data directory could not be written (is the disk full?). Reads are served."
	return e
}

// read runs fn with the read lock: it sees only durable changes.
func (s *Store) read(fn func(svc *reference.Service) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.broken != nil || s.closed {
		return s.unavailable()
	}
	return fn(s.svc)
}

// write runs apply with the write lock and the Service's clock at now; when apply
// succeeds it logs what apply returns before the write is acknowledged. A write that
// cannot be logged is undone (the Service is read back from the directory) and refused;
// further writes are refused until a delay has passed, and reads go on.
func (s *Store) write(apply func(svc *reference.Service) (record, bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil || s.closed {
		return s.unavailable()
	}
	now := s.cfg.clock()
	if s.writeErr != nil && now.Before(s.writeRetry) {
		return s.refuseWrite()
	}
	s.at.Store(now.UnixNano())
	rec, changed, err := apply(s.svc)
	if !changed {
		return err
	}
	if err == nil {
		rec.At = now
		err = s.append(rec)
	}
	if err != nil {
		return s.undoLocked(err)
	}
	if s.writeErr != nil {
		s.logf("writes are logged again after %d failures", s.writeFailures)
		s.writeErr, s.writeFailures = nil, 0
	}
	s.sinceSnap++
	if s.cfg.snapshotEvery > 0 && s.sinceSnap >= s.cfg.snapshotEvery && !s.snapRunning && !now.Before(s.snapRetry) {
		s.startSnapshotLocked()
	}
	return nil
}

// undoLocked handles a change the Service holds but the log does not: the log is cut back
// to its last whole record and the Service is read back from the directory, so that
// nothing unacknowledged is ever read; writes are then refused for a while. When either
// fails the durable state is uncertain and the Store refuses everything until reopened.
func (s *Store) undoLocked(cause error) error {
	if err := s.wal.Truncate(s.walSize); err != nil {
		s.broken = fmt.Errorf("%v; cutting the log back: %w", cause, err)
		s.logf("a write could not be logged (%v) nor undone (%v): every request is refused until restart", cause, err)
		return s.unavailable()
	}
	if _, err := s.wal.Seek(s.walSize, io.SeekStart); err != nil {
		s.broken = err
		return s.unavailable()
	}
	s.filesMu.Lock()
	res, err := s.load(dirFiles{snapshot: s.hasSnapshot(), logs: s.liveLogs()})
	s.filesMu.Unlock()
	if err == nil && len(res.problems) > 0 {
		err = errors.New(strings.Join(res.problems, "; "))
	}
	if err != nil {
		s.broken = fmt.Errorf("%v; reading the directory back: %w", cause, err)
		s.logf("a write could not be logged (%v) nor undone (%v): every request is refused until restart", cause, err)
		return s.unavailable()
	}
	s.svc = res.svc
	s.writeErr = cause
	s.writeFailures++
	wait := backoff(writeRetryMin, writeRetryMax, s.writeFailures)
	s.writeRetry = s.cfg.clock().Add(wait)
	s.logf("a write could not be logged (%v): it was not applied; writes are refused with 503 ServerBusy for %v, reads go on", cause, wait)
	return s.refuseWrite()
}

func (s *Store) hasSnapshot() bool {
	_, err := os.Stat(filepath.Join(s.dir, snapshotFile))
	return err == nil
}

// liveLogs lists the logs in the directory up to the one being written.
func (s *Store) liveLogs() []uint64 {
	files, _ := listDir(s.dir)
	var out []uint64
	for _, g := range files.logs {
		if g <= s.gen {
			out = append(out, g)
		}
	}
	return out
}

// backoff is first doubled for each failure after the first, at most limit.
func backoff(first, limit time.Duration, failures int) time.Duration {
	d := first
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
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
	f := frame(s.encodeBuf.b)
	if cap(s.encodeBuf.b) > 8<<20 {
		s.encodeBuf.b = nil
	}
	name := walName(s.gen)
	if err := s.fault(OpWrite, name); err != nil {
		_, _ = s.wal.Write(f[:len(f)/2])
		return err
	}
	if _, err := s.wal.Write(f); err != nil {
		return err
	}
	if s.cfg.sync == SyncAlways {
		if err := s.fault(OpSync, name); err != nil {
			return err
		}
		if err := s.wal.Sync(); err != nil {
			return err
		}
	}
	s.walSize += int64(len(f))
	return nil
}

// createLog creates the empty log of generation gen, durably.
func (s *Store) createLog(gen uint64) (*os.File, error) {
	name := walName(gen)
	if err := s.fault(OpCreate, name); err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, name)
	wal, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := wal.Sync(); err != nil {
		wal.Close()
		_ = os.Remove(path)
		return nil, err
	}
	if err := syncDir(s.dir); err != nil {
		wal.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return wal, nil
}

// Close waits for a snapshot being written, takes a final one (so that the next Open need
// not replay the log), closes the log and releases the directory.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true // every request is refused from here on
	running := s.snapDone
	s.mu.Unlock()
	if running != nil {
		err := <-running
		running <- err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.broken == nil && s.writeErr == nil && s.sinceSnap > 0 {
		done := s.startSnapshotLocked()
		s.mu.Unlock()
		err = <-done
		s.mu.Lock()
	}
	if cerr := s.wal.Close(); err == nil {
		err = cerr
	}
	_ = s.lock.Close()
	return err
}
