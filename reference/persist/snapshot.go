package persist

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
)

const (
	snapshotFile  = "snapshot"
	snapshotMagic = "conform-snapshot/1"
	// kindSnapshotEntities is a snapshot chunk: a table and its entities, each encoded on
	// its own so that restore can order them without decoding them first.
	kindSnapshotEntities byte = 4
	// snapshotChunkBytes cuts snapshot chunks (an entity is at most 1 MiB).
	snapshotChunkBytes = 4 << 20
)

func walName(gen uint64) string { return "wal-" + strconv.FormatUint(gen, 10) }

// writeSnapshotFile writes every table and entity of the frozen view to
// dir/snapshot.tmp, naming gen as the log that continues it, and fsyncs it; the caller
// puts it in place.
func writeSnapshotFile(s *Store, frozen []reference.FrozenTable, gen uint64) error {
	tmp := filepath.Join(s.dir, snapshotFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(faultWriter{s: s, w: f}, 1<<20)
	head := &encoder{}
	head.string(snapshotMagic)
	head.uvarint(gen)
	if _, err := w.Write(frame(head.b)); err != nil {
		return err
	}
	for _, t := range frozen {
		e := &encoder{}
		if err := e.record(record{Kind: kindCreateTable, Table: t.Name}); err != nil {
			return err
		}
		if _, err := w.Write(frame(e.b)); err != nil {
			return err
		}
		chunk, n := &encoder{}, 0
		flush := func() error {
			if n == 0 {
				return nil
			}
			out := &encoder{}
			out.byte(kindSnapshotEntities)
			out.string(t.Name)
			out.uvarint(uint64(n))
			out.b = append(out.b, chunk.b...)
			chunk.b, n = chunk.b[:0], 0
			_, err := w.Write(frame(out.b))
			return err
		}
		one := &encoder{}
		var failed error
		t.Entities(func(x api.Entity) bool {
			one.b = one.b[:0]
			if failed = one.entity(x); failed != nil {
				return false
			}
			chunk.bytes(one.b)
			n++
			if len(chunk.b) >= snapshotChunkBytes {
				failed = flush()
			}
			return failed == nil
		})
		if failed != nil {
			return fmt.Errorf("table %s: %w", t.Name, failed)
		}
		if err := flush(); err != nil {
			return err
		}
	}
	end := &encoder{}
	if err := end.record(record{Kind: kindSnapshotEnd}); err != nil {
		return err
	}
	if _, err := w.Write(frame(end.b)); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := s.fault(OpSync, snapshotFile+".tmp"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	ok = true
	return f.Close()
}

// faultWriter passes writes of a snapshot through the Store's fault hook.
type faultWriter struct {
	s *Store
	w io.Writer
}

func (fw faultWriter) Write(p []byte) (int, error) {
	if err := fw.s.fault(OpWrite, snapshotFile+".tmp"); err != nil {
		return 0, err
	}
	return fw.w.Write(p)
}

func allTables(ctx context.Context, svc *reference.Service) ([]string, error) {
	var out []string
	q := api.TableQuery{}
	for {
		p, err := svc.QueryTables(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Tables...)
		if p.NextTableName == "" {
			return out, nil
		}
		q.NextTableName = p.NextTableName
	}
}

// snapshotEntity is an entity of a snapshot not yet decoded: its table, its Timestamp and
// its encoding.
type snapshotEntity struct {
	ts    int64 // Unix nanoseconds; entity Timestamps are write times, well inside int64
	table int32
	enc   []byte
}

// loadSnapshot restores dir/snapshot into the empty Service of r and returns the
// generation of the log that continues it. Entities are restored in the order of their
// Timestamps, so that the Service's strictly increasing clock gives each the Timestamp it
// had. Damage is returned as problem (one line naming it), an error reading the file as
// err.
func loadSnapshot(dir string, r *restorer) (gen uint64, entities int, problem string, err error) {
	gen, entities, err = readSnapshot(dir, r)
	var d snapshotDamage
	if errors.As(err, &d) {
		return 0, 0, string(d), nil
	}
	return gen, entities, "", err
}

// snapshotDamage is a damaged snapshot, said in one line.
type snapshotDamage string

func (d snapshotDamage) Error() string { return string(d) }

func readSnapshot(dir string, r *restorer) (gen uint64, entities int, err error) {
	f, err := os.Open(filepath.Join(dir, snapshotFile))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	bad := func(what string) error { return snapshotDamage(snapshotFile + ": " + what) }
	p, err := readFrame(br)
	if err != nil {
		return 0, 0, bad("no header")
	}
	d := &decoder{b: p}
	if d.string() != snapshotMagic {
		return 0, 0, bad("not a conform snapshot")
	}
	gen = d.uvarint()
	if d.err != nil {
		return 0, 0, bad("bad header")
	}
	var tables []string
	var all []snapshotEntity
	complete := false
	for !complete {
		p, err := readFrame(br)
		if err == io.EOF || err == errBadFrame {
			return 0, 0, bad("damaged or incomplete (it was put in place only once complete)")
		}
		if err != nil {
			return 0, 0, err
		}
		if len(p) > 0 && p[0] == kindSnapshotEntities {
			d := &decoder{b: p[1:]}
			table := d.string()
			n := d.count(1)
			if len(tables) == 0 || tables[len(tables)-1] != table {
				return 0, 0, bad("entities before their table")
			}
			for range n {
				enc := d.raw()
				h := &decoder{b: enc}
				_, _ = h.string(), h.string()
				ts := h.time()
				if h.err != nil {
					d.fail()
					break
				}
				all = append(all, snapshotEntity{ts: ts.UnixNano(), table: int32(len(tables) - 1), enc: enc})
			}
			if d.err != nil || len(d.b) != 0 {
				return 0, 0, bad("bad entity chunk")
			}
			continue
		}
		rec, err := decodeRecord(p)
		if err != nil {
			return 0, 0, bad("bad record")
		}
		switch rec.Kind {
		case kindCreateTable:
			tables = append(tables, rec.Table)
			if err := r.createTable(rec.Table, time.Unix(0, 0)); err != nil {
				return 0, 0, bad(fmt.Sprintf("table %s does not restore: %v", rec.Table, err))
			}
		case kindSnapshotEnd:
			complete = true
		default:
			return 0, 0, bad("unexpected record")
		}
	}
	slices.SortFunc(all, func(a, b snapshotEntity) int { return cmpInt64(a.ts, b.ts) })
	for i := range all {
		d := &decoder{b: all[i].enc}
		x := d.entity()
		if d.err != nil {
			return 0, 0, bad("bad entity")
		}
		all[i].enc = nil
		if err := r.put(tables[all[i].table], x); err != nil {
			return 0, 0, bad(err.Error())
		}
	}
	return gen, len(all), nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// startSnapshotLocked starts a snapshot, which goes on without the write lock but for one
// short step: the next log is created (durably), then, under the write lock, writes are
// switched to it and the Service is frozen (a copy-on-write view: no entity is copied);
// the snapshot is then written from the frozen view while writes go on, put in place, and
// the logs before the new one are deleted. Until it is in place the old snapshot and the
// chain of logs after it hold every write. The caller holds the write lock; the returned
// channel yields the snapshot's result (and must be given it back, for other waiters).
func (s *Store) startSnapshotLocked() chan error {
	next := s.gen + 1 // only a snapshot changes gen, and one runs at a time
	done := make(chan error, 1)
	s.snapRunning, s.snapDone = true, done
	go func() {
		err := s.snapshotTo(next)
		s.mu.Lock()
		s.snapRunning = false
		if err != nil {
			s.snapshotFailedLocked(err)
		} else {
			if s.snapFailures > 0 {
				s.logf("a snapshot is in place again after %d failures", s.snapFailures)
			}
			s.snapFailures = 0
		}
		s.mu.Unlock()
		done <- err
	}()
	return done
}

// snapshotTo runs the snapshot that startSnapshotLocked started.
func (s *Store) snapshotTo(next uint64) error {
	wal, err := s.createLog(next)
	if err != nil {
		return fmt.Errorf("snapshot: create %s: %w", walName(next), err)
	}
	s.mu.Lock()
	if s.broken != nil {
		s.mu.Unlock()
		wal.Close()
		_ = os.Remove(filepath.Join(s.dir, walName(next)))
		return fmt.Errorf("snapshot: %w", s.broken)
	}
	start := time.Now()
	frozen := s.svc.Freeze()
	old := s.wal
	s.wal, s.gen, s.walSize, s.sinceSnap = wal, next, 0, 0
	s.snapPause = time.Since(start)
	s.mu.Unlock()
	_ = old.Close()
	return s.writeSnapshot(frozen, next)
}

// snapshotFailedLocked records a failed snapshot: it loses nothing (the logs hold every
// write), and the next periodic one waits for a delay that doubles with each failure.
func (s *Store) snapshotFailedLocked(err error) {
	s.snapFailures++
	wait := backoff(snapshotRetryMin, snapshotRetryMax, s.snapFailures)
	s.snapRetry = s.cfg.clock().Add(wait)
	s.logf("%v (failure %d; the log keeps every write; the next snapshot is tried in %v)", err, s.snapFailures, wait)
}

// writeSnapshot writes the frozen view as the snapshot naming gen, puts it in place and
// deletes the logs before gen.
func (s *Store) writeSnapshot(frozen []reference.FrozenTable, gen uint64) error {
	if err := writeSnapshotFile(s, frozen, gen); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	s.filesMu.Lock()
	defer s.filesMu.Unlock()
	if err := s.fault(OpRename, snapshotFile); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.Rename(filepath.Join(s.dir, snapshotFile+".tmp"), filepath.Join(s.dir, snapshotFile)); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	files, _ := listDir(s.dir)
	for _, g := range files.logs {
		if g < gen {
			_ = os.Remove(filepath.Join(s.dir, walName(g)))
		}
	}
	return nil
}

// writeSnapshotNow writes a snapshot of the Service naming gen and waits for it; the
// caller owns the Store.
func (s *Store) writeSnapshotNow(gen uint64) error {
	return s.writeSnapshot(s.svc.Freeze(), gen)
}

// Snapshot writes a snapshot now, starts a new log, and waits until the snapshot is in
// place (writes go on meanwhile).
func (s *Store) Snapshot() error {
	s.mu.Lock()
	for s.snapRunning {
		done := s.snapDone
		s.mu.Unlock()
		err := <-done
		done <- err // for another waiter
		s.mu.Lock()
	}
	if s.broken != nil || s.closed {
		defer s.mu.Unlock()
		return s.unavailable()
	}
	done := s.startSnapshotLocked()
	s.mu.Unlock()
	err := <-done
	done <- err
	return err
}
