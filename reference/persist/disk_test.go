package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// diskFull fails every log write and snapshot write with ENOSPC while it is on.
type diskFull struct{ on atomic.Bool }

func (d *diskFull) fault(op FileOp, file string) error {
	if d.on.Load() && (op == OpWrite || op == OpCreate) {
		return &pathErr{op: string(op), file: file}
	}
	return nil
}

type pathErr struct{ op, file string }

func (e *pathErr) Error() string { return e.op + " " + e.file + ": " + syscall.ENOSPC.Error() }
func (e *pathErr) Unwrap() error { return syscall.ENOSPC }

// manualClock is a clock a test moves.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func isServerBusy(err error) bool {
	var se *spec.Error
	return errors.As(err, &se) && se.Code == spec.ErrServerBusy.Code && se.Status == 503
}

// TestFullDiskRefusesWritesAndServesReads: a write that cannot be logged is not applied
// and answers 503 ServerBusy, reads go on and never see it, later writes are refused
// without touching the disk until a delay has passed, and once the disk has room writes
// are logged again; nothing acknowledged is lost across a restart. Before, the first failed
// write made every request, reads too, answer 500 until restart.
func TestFullDiskRefusesWritesAndServesReads(t *testing.T) {
	dir := t.TempDir()
	disk := &diskFull{}
	clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var log bytes.Buffer
	s := open(t, dir, WithFaults(disk.fault), WithClock(clock.Now), WithLog(&log))
	c := ctx(t)
	if err := s.CreateTable(c, "tab"); err != nil {
		t.Fatal(err)
	}
	stored, err := s.InsertEntity(c, "tab", api.NewEntity("p", "counter", map[string]api.Value{"n": api.Int32(1)}))
	if err != nil {
		t.Fatal(err)
	}
	disk.on.Store(true)
	_, err = s.UpdateEntity(c, "tab", api.NewEntity("p", "counter", map[string]api.Value{"n": api.Int32(2)}), api.Replace, stored.ETag)
	if !isServerBusy(err) {
		t.Fatalf("a write on a full disk: %v, want 503 ServerBusy", err)
	}
	got, err := s.GetEntity(c, "tab", "p", "counter", nil)
	if err != nil {
		t.Fatalf("a read on a full disk: %v", err)
	}
	if got.ETag != stored.ETag || got.Properties["n"].Int() != 1 {
		t.Fatalf("the refused write is visible: %v", got)
	}
	if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "other", nil)); !isServerBusy(err) {
		t.Fatalf("a write during the delay: %v, want 503 ServerBusy", err)
	}
	if !strings.Contains(log.String(), "could not be logged") {
		t.Errorf("the failure is not logged: %q", log.String())
	}
	clock.Advance(time.Minute)
	if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "other", nil)); !isServerBusy(err) {
		t.Fatalf("a write on a still full disk after the delay: %v, want 503 ServerBusy", err)
	}
	disk.on.Store(false)
	clock.Advance(time.Minute)
	if _, err := s.UpdateEntity(c, "tab", api.NewEntity("p", "counter", map[string]api.Value{"n": api.Int32(3)}), api.Replace, stored.ETag); err != nil {
		t.Fatalf("a write once the disk has room: %v", err)
	}
	want := dump(t, s)
	s.abandon()
	s = open(t, dir)
	defer s.abandon()
	sameDump(t, want, dump(t, s))
}

// TestFailedSnapshotWaitsBeforeTheNext: a periodic snapshot that fails is logged and tried
// again only after a delay, not on every later write. Before, it was retried on every
// write, under the write lock, without a word.
func TestFailedSnapshotWaitsBeforeTheNext(t *testing.T) {
	dir := t.TempDir()
	var attempts atomic.Int64
	fault := func(op FileOp, file string) error {
		if op == OpWrite && file == snapshotFile+".tmp" {
			attempts.Add(1)
			return &pathErr{op: string(op), file: file}
		}
		return nil
	}
	clock := &manualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var log lockedBuffer
	s := open(t, dir, WithFaults(fault), WithClock(clock.Now), WithLog(&log), WithSnapshotEvery(5), WithSync(SyncNone))
	c := ctx(t)
	if err := s.CreateTable(c, "tab"); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", fmt.Sprint(i), nil)); err != nil {
			t.Fatal(err)
		}
		s.waitSnapshot()
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d snapshot attempts in 200 writes within the delay, want 1", n)
	}
	if !strings.Contains(log.String(), "the next snapshot is tried in") {
		t.Errorf("the failure is not logged: %q", log.String())
	}
	clock.Advance(time.Hour)
	if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "late", nil)); err != nil {
		t.Fatal(err)
	}
	s.waitSnapshot()
	if n := attempts.Load(); n != 2 {
		t.Errorf("%d snapshot attempts after the delay, want 2", n)
	}
	want := dump(t, s)
	s.abandon()
	s = open(t, dir)
	defer s.abandon()
	sameDump(t, want, dump(t, s))
}

// waitSnapshot waits for a snapshot being written.
func (s *Store) waitSnapshot() {
	s.mu.Lock()
	running, done := s.snapRunning, s.snapDone
	s.mu.Unlock()
	if running {
		err := <-done
		done <- err
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSnapshotDoesNotStopRequests: while a snapshot is being written (held here in the
// middle of writing its file), reads and writes are answered; a crash then restores every
// acknowledged write from the old snapshot and the logs. Before, a snapshot held the write
// lock while it wrote every entity.
func TestSnapshotDoesNotStopRequests(t *testing.T) {
	dir := t.TempDir()
	hold, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fault := func(op FileOp, file string) error {
		if op == OpWrite && file == snapshotFile+".tmp" {
			once.Do(func() { close(hold); <-release })
		}
		return nil
	}
	s := open(t, dir, WithFaults(fault), WithSync(SyncNone), WithSnapshotEvery(0))
	c := ctx(t)
	if err := s.CreateTable(c, "tab"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", fmt.Sprint(i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	snapped := make(chan error, 1)
	go func() { snapped <- s.Snapshot() }()
	<-hold
	served := make(chan error, 1)
	go func() {
		if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "during", nil)); err != nil {
			served <- err
			return
		}
		_, err := s.GetEntity(c, "tab", "p", "10", nil)
		served <- err
	}()
	select {
	case err := <-served:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		close(release)
		t.Fatal("a write and a read waited for the snapshot being written")
	}
	want := dump(t, s)
	// A crash now: the snapshot is not in place; the old state and both logs are.
	s.mu.Lock()
	_ = s.wal.Close()
	_ = s.lock.Close()
	s.closed = true
	s.mu.Unlock()
	copyDir := t.TempDir()
	copyFiles(t, dir, copyDir)
	close(release)
	if err := <-snapped; err != nil {
		t.Fatal(err)
	}
	r := open(t, copyDir)
	defer r.abandon()
	sameDump(t, want, dump(t, r))
}

func copyFiles(t *testing.T, from, to string) {
	t.Helper()
	for name, b := range snapshotOfDir(t, from) {
		if err := writeFile(to+name, b); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }
