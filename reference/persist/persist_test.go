package persist

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func open(t testing.TB, dir string, opts ...Option) *Store {
	t.Helper()
	s, err := Open(dir, append([]Option{WithServiceOptions(reference.WithDeleteHold(0))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dump lists every table and entity of b, with ETags and Timestamps, in a stable form.
func dump(t testing.TB, b api.Backend) []string {
	t.Helper()
	c := ctx(t)
	var out []string
	tq := api.TableQuery{}
	for {
		tp, err := b.QueryTables(c, tq)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range tp.Tables {
			out = append(out, "table "+name)
			q := api.Query{}
			for {
				p, err := b.QueryEntities(c, name, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Entities {
					out = append(out, fmt.Sprintf("%s %s %s %s", name, e.ETag, e.Timestamp.Format(time.RFC3339Nano), e))
				}
				if p.Continuation.IsZero() {
					break
				}
				q.Continuation = p.Continuation
			}
		}
		if tp.NextTableName == "" {
			break
		}
		tq.NextTableName = tp.NextTableName
	}
	sort.Strings(out)
	return out
}

func sameDump(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d lines, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func allTypes(i int) map[string]api.Value {
	return map[string]api.Value{
		"s": api.String(fmt.Sprintf("O'Brien %d ✓", i)), "b": api.Binary([]byte{0, 1, byte(i)}), "t": api.Bool(i%2 == 0),
		"dt": api.DateTime(time.Date(1601, 1, 1, 0, 0, 0, 100*i, time.UTC)), "d": api.Double(math.Inf(-1)), "nan": api.Double(math.NaN()),
		"g": api.Guid("a455c695-df98-5678-aaaa-81d3367e5a34"), "i": api.Int32(-7), "l": api.Int64(math.MinInt64 + int64(i)),
		"e": api.String(""),
	}
}

// workload runs every kind of write against b and returns the ETag of entity (t1, p, r0).
func workload(t *testing.T, b api.Backend) string {
	t.Helper()
	c := ctx(t)
	for _, name := range []string{"tab1", "Tab2", "gone"} {
		if err := b.CreateTable(c, name); err != nil {
			t.Fatal(err)
		}
	}
	var etag string
	for i := range 20 {
		e, err := b.InsertEntity(c, "tab1", api.NewEntity("p", fmt.Sprintf("r%d", i), allTypes(i)))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			etag = e.ETag
		}
	}
	if _, err := b.UpdateEntity(c, "tab1", api.NewEntity("p", "r1", map[string]api.Value{"x": api.Int32(1)}), api.Replace, "*"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateEntity(c, "tab1", api.NewEntity("p", "r2", map[string]api.Value{"y": api.Int32(2), "s": api.Null(api.EdmString)}), api.Merge, ""); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteEntity(c, "tab1", "p", "r3", "*"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SubmitBatch(c, "Tab2", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("q", "a", allTypes(1))},
		{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity("q", "b", nil)},
		{Kind: api.BatchInsertOrReplace, Entity: api.NewEntity("q", "c", map[string]api.Value{"z": api.Bool(true)})},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SubmitBatch(c, "Tab2", []api.BatchOp{
		{Kind: api.BatchMerge, Entity: api.NewEntity("q", "a", map[string]api.Value{"m": api.Int64(5)})},
		{Kind: api.BatchDelete, Entity: api.NewEntity("q", "b", nil)},
		{Kind: api.BatchReplace, Entity: api.NewEntity("q", "c", nil)},
	}); err != nil {
		t.Fatal(err)
	}
	// A failed transaction changes nothing and logs nothing.
	_, err := b.SubmitBatch(c, "Tab2", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("q", "new", nil)},
		{Kind: api.BatchInsert, Entity: api.NewEntity("q", "a", nil)},
	})
	var se *spec.Error
	if !errors.As(err, &se) || se.Code != spec.ErrEntityAlreadyExists.Code {
		t.Fatalf("conflicting batch: %v", err)
	}
	if err := b.DeleteTable(c, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteTable(c, "Tab2"); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTable(c, "Tab2"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InsertEntity(c, "Tab2", api.NewEntity("again", "1", nil)); err != nil {
		t.Fatal(err)
	}
	return etag
}

// TestRestoreReproducesStateAndETags: the same state, ETags and Timestamps after a clean
// close (from the snapshot) and after a crash (from the log alone), and the ETags a client
// was given still work for conditional writes.
func TestRestoreReproducesStateAndETags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close func(*Store) error
	}{
		{"after Close, from the snapshot", func(s *Store) error { return s.Close() }},
		{"after a crash, from the log", func(s *Store) error { s.abandon(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			etag := workload(t, s)
			want := dump(t, s)
			if err := tc.close(s); err != nil {
				t.Fatal(err)
			}
			s = open(t, dir)
			defer s.Close()
			sameDump(t, want, dump(t, s))
			st := s.Stats()
			if st.Tables != 2 || st.SnapshotEntities+st.LogRecords == 0 {
				t.Errorf("stats %+v", st)
			}
			c := ctx(t)
			if _, err := s.UpdateEntity(c, "tab1", api.NewEntity("p", "r0", nil), api.Merge, etag); err != nil {
				t.Errorf("conditional update with the ETag of before the restart: %v", err)
			}
			if _, err := s.InsertEntity(c, "Tab2", api.NewEntity("again", "2", nil)); err != nil {
				t.Errorf("write after restore: %v", err)
			}
		})
	}
}

// TestTornRecordIsCutAndNothingElseLost writes records, then damages the log's last
// record. Cut short (as a crash in the middle of a write leaves it) or never written (zero
// bytes, as a power loss may leave it), it is torn: the restore keeps every whole record,
// says what it cut, and the log goes on after the cut. Whole but failing its checksum
// (a flipped byte) or followed by garbage, it was damaged: Open refuses it, and WithRepair
// cuts it.
func TestTornRecordIsCutAndNothingElseLost(t *testing.T) {
	for _, damage := range []string{"cut", "unwritten", "garbage", "flipped"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, WithSync(SyncNone))
			c := ctx(t)
			if err := s.CreateTable(c, "tab"); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", fmt.Sprint(i), allTypes(i))); err != nil {
					t.Fatal(err)
				}
			}
			before := dump(t, s)
			size := s.walSize
			// The last write, a transaction of three entities, is then damaged.
			if _, err := s.SubmitBatch(c, "tab", []api.BatchOp{
				{Kind: api.BatchInsert, Entity: api.NewEntity("p", "x1", nil)},
				{Kind: api.BatchInsert, Entity: api.NewEntity("p", "x2", nil)},
				{Kind: api.BatchInsert, Entity: api.NewEntity("p", "x3", nil)},
			}); err != nil {
				t.Fatal(err)
			}
			s.abandon()
			wal := filepath.Join(dir, walName(0))
			data, err := os.ReadFile(wal)
			if err != nil {
				t.Fatal(err)
			}
			torn := true
			switch damage {
			case "cut":
				data = data[:len(data)-7]
			case "unwritten":
				clear(data[size:])
			case "garbage":
				data = append(data, []byte("\x10\x00\x00\x00garbage that is not a frame")...)
				before = nil
				torn = false
			case "flipped":
				data[len(data)-3] ^= 0xff
				torn = false
			}
			if err := os.WriteFile(wal, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var opts []Option
			if !torn {
				var de *DamageError
				if _, err := Open(dir); !errors.As(err, &de) || !strings.Contains(err.Error(), "fails its checksum though it is whole") {
					t.Fatalf("Open of a log whose last record is whole but fails its checksum: %v", err)
				}
				opts = append(opts, WithRepair())
			}
			s = open(t, dir, opts...)
			got := dump(t, s)
			if before == nil { // only the garbage after the last record is cut
				if len(got) != 14 {
					t.Fatalf("after garbage: %d lines, want 14", len(got))
				}
			} else {
				sameDump(t, before, got) // the damaged transaction is gone as a whole
			}
			if st := s.Stats(); torn && (st.TruncatedBytes == 0 || len(st.Warnings) != 1) || !torn && st.SetAside == "" {
				t.Errorf("stats %+v", st)
			}
			if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "after", nil)); err != nil {
				t.Fatal(err)
			}
			want := dump(t, s)
			s.abandon()
			s = open(t, dir)
			defer s.abandon()
			sameDump(t, want, dump(t, s))
		})
	}
}

// TestSnapshotsRotateTheLog: snapshots replace the log; a crash after a snapshot restores
// from it plus the new log; a crash after the next log was started but before its
// snapshot was in place restores from the old snapshot and both logs.
func TestSnapshotsRotateTheLog(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, WithSnapshotEvery(0), WithSync(SyncNone))
	c := ctx(t)
	if err := s.CreateTable(c, "tab"); err != nil {
		t.Fatal(err)
	}
	for i := range 35 {
		if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", fmt.Sprint(i), allTypes(i))); err != nil {
			t.Fatal(err)
		}
		if i%10 == 8 {
			if err := s.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := dump(t, s)
	s.abandon()
	logs, _ := filepath.Glob(filepath.Join(dir, "wal-*"))
	if len(logs) != 1 || filepath.Base(logs[0]) != walName(3) {
		t.Fatalf("logs %v, want only %s", logs, walName(3))
	}
	// A crash after the next log was created, while its snapshot was being written, in the
	// middle of the first write to the new log.
	if err := os.WriteFile(filepath.Join(dir, walName(4)), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	sameDump(t, want, dump(t, s))
	if st := s.Stats(); st.SnapshotEntities != 29 || st.LogRecords != 6 || st.TruncatedBytes != 7 || len(st.Warnings) != 1 {
		t.Errorf("stats %+v, want 29 entities from the snapshot (the table was the first of 30 records), 6 records, the 7 torn bytes cut with a warning", st)
	}
	if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "after", nil)); err != nil {
		t.Fatal(err)
	}
	want = dump(t, s)
	s.abandon()
	s = open(t, dir)
	sameDump(t, want, dump(t, s))
}

func TestOneProcessPerDirectory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	if _, err := Open(dir); err == nil {
		t.Fatal("a second Open of the same directory succeeded")
	}
}

// TestConcurrentWritersRestoreExactly: concurrent writers on several tables; the
// restored state equals the state the writers left, ETags included.
func TestConcurrentWritersRestoreExactly(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, WithSync(SyncNone), WithSnapshotEvery(150))
	c := ctx(t)
	for _, n := range []string{"taba", "tabb"} {
		if err := s.CreateTable(c, n); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			table := []string{"taba", "tabb"}[w%2]
			for i := range 60 {
				pk := fmt.Sprint(i % 4)
				switch i % 3 {
				case 0:
					_, _ = s.UpdateEntity(c, table, api.NewEntity(pk, fmt.Sprint(w), map[string]api.Value{"i": api.Int32(int32(i))}), api.Merge, "")
				case 1:
					_, _ = s.SubmitBatch(c, table, []api.BatchOp{
						{Kind: api.BatchInsertOrReplace, Entity: api.NewEntity(pk, fmt.Sprint(w, "x"), nil)},
						{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity(pk, fmt.Sprint(w, "y"), map[string]api.Value{"w": api.Int32(int32(w))})},
					})
				default:
					_ = s.DeleteEntity(c, table, pk, fmt.Sprint(w, "x"), "*")
				}
			}
		}()
	}
	wg.Wait()
	want := dump(t, s)
	s.abandon()
	s = open(t, dir)
	defer s.Close()
	sameDump(t, want, dump(t, s))
}

// TestCodecRoundTrip: every value type, nulls and edge values survive the record codec,
// and no prefix of a record decodes.
func TestCodecRoundTrip(t *testing.T) {
	x := api.NewEntity("pk", "rk", allTypes(3))
	x.Timestamp = time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	x.Properties["null"] = api.Value{Null: true}
	rec := record{Kind: kindEntities, Table: "t", At: time.Unix(5, 7).UTC(), Puts: []api.Entity{x}, Deletes: []api.Key{{PartitionKey: "a", RowKey: "b"}}}
	e := &encoder{}
	if err := e.record(rec); err != nil {
		t.Fatal(err)
	}
	got, err := decodeRecord(e.b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Table != "t" || !got.At.Equal(rec.At) || len(got.Puts) != 1 || got.Deletes[0] != rec.Deletes[0] || !got.Puts[0].Timestamp.Equal(x.Timestamp) {
		t.Fatalf("round trip: %+v", got)
	}
	for n, v := range x.Properties {
		if !got.Puts[0].Properties[n].Equal(v) {
			t.Errorf("%s: %v, want %v", n, got.Puts[0].Properties[n], v)
		}
	}
	for i := range len(e.b) {
		if _, err := decodeRecord(e.b[:i]); err == nil {
			t.Fatalf("a prefix of %d bytes decodes", i)
		}
	}
}

// FuzzDecodeRecord: no input makes the record decoder panic or allocate without bound.
func FuzzDecodeRecord(f *testing.F) {
	e := &encoder{}
	x := api.NewEntity("pk", "rk", allTypes(1))
	_ = e.record(record{Kind: kindEntities, Table: "t", Puts: []api.Entity{x}, Deletes: []api.Key{{PartitionKey: "a"}}})
	f.Add(e.b)
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := decodeRecord(p)
		if err != nil {
			return
		}
		again := &encoder{}
		if err := again.record(r); err != nil {
			t.Fatalf("decoded record does not encode: %v", err)
		}
	})
}

// With case-sensitive table names (Cosmos DB for Table, reference.CosmosOptions) two tables
// whose names differ only in case survive a restart, from the log and from a snapshot, each
// with its own entities; a deletion logged under one name leaves the other.
func TestCaseSensitiveTableNamesRestore(t *testing.T) {
	dir := t.TempDir()
	sensitive := WithServiceOptions(reference.WithCaseSensitiveTableNames(true))
	s := open(t, dir, sensitive, WithSnapshotEvery(0), WithSync(SyncNone))
	c := ctx(t)
	for _, name := range []string{"Cased", "cased", "CASED"} {
		if err := s.CreateTable(c, name); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if _, err := s.InsertEntity(c, name, api.NewEntity("p", "r", map[string]api.Value{"Table": api.String(name)})); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(c, "CASED"); err != nil {
		t.Fatal(err)
	}
	want := dump(t, s)
	if len(want) != 4 {
		t.Fatalf("dump %v, want two tables of one entity each", want)
	}
	s.abandon()
	s = open(t, dir, sensitive)
	defer s.Close()
	sameDump(t, want, dump(t, s))
	if got, err := s.GetEntity(c, "cased", "p", "r", nil); err != nil || got.Properties["Table"].Str != "cased" {
		t.Errorf("cased after the restart: %v %v", got, err)
	}
}
