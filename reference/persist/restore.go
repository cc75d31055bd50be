package persist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// DamageError is what Open returns when the directory holds damaged data: a log with a bad
// record that intact records follow, a record that does not apply, a damaged snapshot, a
// snapshot naming a log that is absent, or logs that no snapshot names. Open then changes
// nothing in the directory. Opening it WithRepair sets the damaged files aside and starts
// from what is intact.
type DamageError struct {
	Dir      string
	Problems []string // one line each, naming the file
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("%s is damaged: %s", e.Dir, strings.Join(e.Problems, "; "))
}

// restorer applies restored changes to a Service with the Store's clock at each change's
// time.
type restorer struct {
	s   *Store
	svc *reference.Service
}

func (r *restorer) ctx() context.Context { return context.Background() }

func (r *restorer) createTable(name string, at time.Time) error {
	r.s.at.Store(at.UnixNano())
	return r.svc.CreateTable(r.ctx(), name)
}

func (r *restorer) deleteTable(name string, at time.Time) error {
	r.s.at.Store(at.UnixNano())
	return r.svc.DeleteTable(r.ctx(), name)
}

func (r *restorer) put(table string, x api.Entity) error {
	r.s.at.Store(x.Timestamp.UnixNano())
	if _, err := r.svc.UpdateEntity(r.ctx(), table, x, api.Replace, ""); err != nil {
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
			err := r.svc.DeleteEntity(r.ctx(), rec.Table, k.PartitionKey, k.RowKey, api.IfMatchAny)
			var se *spec.Error
			if err != nil && !(errors.As(err, &se) && se.Code == spec.ErrResourceNotFound.Code) {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unexpected record kind %d", rec.Kind)
}

// dirFiles is what a data directory holds.
type dirFiles struct {
	snapshot bool
	logs     []uint64 // generations of the wal-N files, ascending
}

func listDir(dir string) (dirFiles, error) {
	var d dirFiles
	entries, err := os.ReadDir(dir)
	if err != nil {
		return d, err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == snapshotFile:
			d.snapshot = true
		case strings.HasPrefix(name, "wal-"):
			if g, err := strconv.ParseUint(strings.TrimPrefix(name, "wal-"), 10, 64); err == nil && walName(g) == name {
				d.logs = append(d.logs, g)
			}
		}
	}
	slices.Sort(d.logs)
	return d, nil
}

// restored is what loading a directory found.
type restored struct {
	svc      *reference.Service
	base     uint64   // the generation of the log the snapshot names (0 without one)
	entities int      // from the snapshot
	records  int      // from the logs
	chain    []uint64 // the logs that continue the snapshot, in order (may be empty)
	last     logScan  // the scan of the last log of chain
	stale    []uint64 // logs older than the snapshot: already in it
	problems []string // damage; the Service holds what came before the first
	// repair says how to set the damage aside: the files to move, and the log to cut at
	// its last good record (the whole file is kept aside first).
	aside   []string
	cutLog  string
	cutAt   int64
	warning string // a torn last record: what was dropped
}

// load reads the snapshot and the logs that continue it into a new Service, reading only.
// It stops at the first damage, which it describes with what repairing it takes.
func (s *Store) load(files dirFiles) (*restored, error) {
	res := &restored{svc: s.newService()}
	r := &restorer{s: s, svc: res.svc}
	base := uint64(0)
	damaged := func(problem string, aside ...uint64) {
		res.problems = append(res.problems, problem)
		for _, g := range aside {
			res.aside = append(res.aside, walName(g))
		}
	}
	if files.snapshot {
		gen, n, problem, err := loadSnapshot(s.dir, r)
		if err != nil {
			return nil, err
		}
		if problem != "" {
			res.svc = s.newService()
			res.problems = append(res.problems, problem)
			res.aside = append(res.aside, snapshotFile)
			for _, g := range files.logs {
				res.aside = append(res.aside, walName(g))
			}
			return res, nil
		}
		base, res.entities = gen, n
		res.base = base
	}
	var chain []uint64
	for _, g := range files.logs {
		if g < base {
			res.stale = append(res.stale, g)
		} else {
			chain = append(chain, g)
		}
	}
	switch {
	case len(chain) == 0:
		if files.snapshot {
			damaged(fmt.Sprintf("the snapshot names the log %s, which is missing", walName(base)))
		}
		return res, nil
	case chain[0] != base && !files.snapshot:
		damaged(fmt.Sprintf("there is no snapshot, but the log %s continues snapshot %d: the snapshot is missing", walName(chain[0]), chain[0]), chain...)
		return res, nil
	case chain[0] != base:
		damaged(fmt.Sprintf("the snapshot names the log %s, which is missing (%s follows it)", walName(base), walName(chain[0])), chain...)
		return res, nil
	}
	for i, g := range chain {
		if i > 0 && g != chain[i-1]+1 {
			damaged(fmt.Sprintf("the log %s is missing between %s and %s", walName(chain[i-1]+1), walName(chain[i-1]), walName(g)), chain[i:]...)
			return res, nil
		}
		sc, err := scanLog(filepath.Join(s.dir, walName(g)), r.apply)
		if err != nil {
			return nil, err
		}
		res.records += sc.records
		res.chain = append(res.chain, g)
		res.last = sc
		if sc.damage == "" {
			continue
		}
		lastLog := i == len(chain)-1
		if sc.torn && lastLog {
			res.warning = fmt.Sprintf("%s: %s was cut; it was never acknowledged", walName(g), sc.damage)
			return res, nil
		}
		damaged(fmt.Sprintf("%s: %s (%d records before it are intact)", walName(g), sc.damage, sc.records), chain[i+1:]...)
		res.cutLog, res.cutAt = walName(g), sc.valid
		return res, nil
	}
	return res, nil
}

// restore opens the directory: it loads it (load), refuses damage unless repairing,
// cuts a torn last record, and opens the last log for appending.
func (s *Store) restore() error {
	files, err := listDir(s.dir)
	if err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(s.dir, snapshotFile+".tmp")) // an unfinished snapshot
	res, err := s.load(files)
	if err != nil {
		return err
	}
	if len(res.problems) > 0 {
		if !s.cfg.repair {
			return &DamageError{Dir: s.dir, Problems: res.problems}
		}
		if err := s.setAside(res); err != nil {
			return err
		}
	}
	s.svc = res.svc
	s.stats.SnapshotEntities, s.stats.LogRecords = res.entities, res.records
	gen := res.base
	valid := int64(0)
	if n := len(res.chain); n > 0 {
		gen = res.chain[n-1]
		valid = res.last.valid
	} else if len(res.aside) > 0 {
		// Everything after the snapshot was set aside: a new log continues it, with a
		// generation no file set aside has.
		for _, g := range files.logs {
			gen = max(gen, g+1)
		}
		if err := s.writeSnapshotNow(gen); err != nil {
			return err
		}
	}
	if res.warning != "" {
		s.warn(res.warning)
		s.stats.TruncatedBytes = res.last.size - res.last.valid
	}
	wal, err := os.OpenFile(filepath.Join(s.dir, walName(gen)), os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := wal.Truncate(valid); err != nil {
		wal.Close()
		return err
	}
	if _, err := wal.Seek(valid, io.SeekStart); err != nil {
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
	s.wal, s.gen, s.walSize, s.sinceSnap = wal, gen, valid, res.records
	for _, g := range res.stale {
		_ = os.Remove(filepath.Join(s.dir, walName(g)))
	}
	tables, err := allTables(context.Background(), s.svc)
	if err != nil {
		return err
	}
	s.stats.Tables = len(tables)
	return nil
}

// setAside moves the damaged files into a new directory damaged-<time> inside the data
// directory; a damaged log's intact records stay in place (the whole file is copied aside
// first).
func (s *Store) setAside(res *restored) error {
	aside := filepath.Join(s.dir, "damaged-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Mkdir(aside, 0o755); err != nil {
		return err
	}
	if res.cutLog != "" {
		// The log is cut only once its whole copy is durable (the copy's data, its name in
		// the new directory, and that directory's name), and the cut is made durable too.
		src := filepath.Join(s.dir, res.cutLog)
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := s.writeDurably(aside, res.cutLog, data); err != nil {
			return err
		}
		if err := syncDir(s.dir); err != nil {
			return err
		}
		cut, err := json.Marshal(map[string]int64{res.cutLog: res.cutAt})
		if err != nil {
			return err
		}
		if err := s.writeDurably(aside, cutFile, cut); err != nil {
			return err
		}
		if err := cutDurably(src, res.cutAt); err != nil {
			return err
		}
	}
	for _, name := range res.aside {
		if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(aside, name)); err != nil {
			return err
		}
	}
	if err := syncDir(aside); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	s.stats.SetAside = aside
	for _, p := range res.problems {
		s.warn("repaired: " + p)
	}
	s.warn(fmt.Sprintf("the damaged files are kept in %s", aside))
	dropped, err := summarizeDropped(aside)
	if err != nil {
		s.warn(fmt.Sprintf("the intact changes in %s could not be read: %v", aside, err))
		return nil
	}
	s.stats.Dropped = dropped
	if dropped.Changes > 0 {
		s.warn("dropped: " + dropped.String())
	}
	return nil
}

// writeDurably writes data to the new file name in dir and fsyncs it and dir.
func (s *Store) writeDurably(dir, name string, data []byte) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := s.fault(OpSync, filepath.Join(filepath.Base(dir), name)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(dir)
}

// cutDurably truncates the file at path to size and fsyncs it.
func cutDurably(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
