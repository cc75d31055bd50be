package persist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// fillLog writes a table and n single inserts into a new Store in dir, taking a snapshot
// after the first snapshotAt inserts when snapshotAt > 0, and abandons it. It returns the
// keys of every acknowledged insert.
func fillLog(t *testing.T, dir string, n, snapshotAt int) []string {
	t.Helper()
	s := open(t, dir, WithSync(SyncNone), WithSnapshotEvery(0))
	c := ctx(t)
	if err := s.CreateTable(c, "tab"); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range n {
		k := fmt.Sprintf("r%05d", i)
		if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", k, map[string]api.Value{"n": api.Int32(int32(i))})); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		if i+1 == snapshotAt {
			if err := s.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.abandon()
	return keys
}

// snapshotOfDir reads every file of dir (and below), so that a test can assert that a
// refused Open changed nothing.
func snapshotOfDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, want, got map[string][]byte) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("the directory changed: %d files, then %d", len(want), len(got))
	}
	for name, b := range want {
		if !bytes.Equal(b, got[name]) {
			t.Fatalf("the refused Open changed %s", name)
		}
	}
}

// TestDamageIsRefusedAndRepairedOnlyWhenAsked: a byte flipped anywhere but in the last
// record, a missing snapshot, a missing log, a gap between logs, or a whole record that
// does not decode makes Open refuse the directory with a DamageError naming the damage, and
// change nothing; WithRepair then starts from what is intact and keeps the damaged files in
// a damaged-* directory. Before, the log was cut at the flipped byte, silently dropping
// every later acknowledged write.
func TestDamageIsRefusedAndRepairedOnlyWhenAsked(t *testing.T) {
	const n = 300
	cases := []struct {
		name       string
		snapshotAt int
		damage     func(t *testing.T, dir string)
		says       string // in the DamageError
		survivors  int    // inserts present after the repair
		aside      []string
	}{
		{"byte flipped at 1% of the log", 0, flipAt(0.01), "followed by intact records", 1, []string{"wal-0"}},
		{"byte flipped at 50% of the log", 0, flipAt(0.5), "followed by intact records", n / 2, []string{"wal-0"}},
		{"byte flipped at 90% of the log", 0, flipAt(0.9), "followed by intact records", n * 9 / 10, []string{"wal-0"}},
		{"snapshot deleted", 100, remove("snapshot"), "the snapshot is missing", 0, []string{"wal-1"}},
		{"log named by the snapshot deleted", 100, remove("wal-1"), "which is missing", 100, nil},
		{"whole record that does not decode", 0, replaceLastRecord, "does not decode", n - 1, []string{"wal-0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keys := fillLog(t, dir, n, tc.snapshotAt)
			tc.damage(t, dir)
			before := snapshotOfDir(t, dir)
			_, err := Open(dir)
			var de *DamageError
			if !errors.As(err, &de) {
				t.Fatalf("Open of a damaged directory: %v, want a DamageError", err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Open says %q, want it to say %q", err, tc.says)
			}
			sameFiles(t, before, snapshotOfDir(t, dir))

			var log bytes.Buffer
			s := open(t, dir, WithRepair(), WithLog(&log))
			st := s.Stats()
			if st.SetAside == "" || !strings.Contains(log.String(), "repaired: ") {
				t.Fatalf("repair: set aside %q, log %q", st.SetAside, log.String())
			}
			for _, name := range tc.aside {
				if _, err := os.Stat(filepath.Join(st.SetAside, name)); err != nil {
					t.Errorf("%s is not kept aside: %v", name, err)
				}
			}
			got := 0
			for _, k := range keys {
				if _, err := s.GetEntity(ctx(t), "tab", "p", k, nil); err == nil {
					got++
				}
			}
			if tc.survivors > 0 && (got < tc.survivors-2 || got > tc.survivors+2) || tc.survivors == 0 && got != 0 {
				t.Errorf("after the repair %d inserts are present, want about %d", got, tc.survivors)
			}
			// The repaired directory takes writes and opens again without complaint.
			if tc.survivors > 0 {
				if _, err := s.InsertEntity(ctx(t), "tab", api.NewEntity("p", "after-repair", nil)); err != nil {
					t.Fatal(err)
				}
			}
			want := dump(t, s)
			s.abandon()
			s = open(t, dir)
			sameDump(t, want, dump(t, s))
			s.abandon()
		})
	}
}

// flipAt flips a byte at the fraction at of the log wal-0.
func flipAt(at float64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, walName(0))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[int(float64(len(b))*at)] ^= 0x5a
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// replaceLastRecord replaces the last record of wal-0 by a frame whose checksum holds but
// whose content is no record: written whole, so not torn.
func replaceLastRecord(t *testing.T, dir string) {
	p := filepath.Join(dir, walName(0))
	var offsets []int64
	if _, err := scanLog(p, func(record) error { return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < int64(len(b)); {
		offsets = append(offsets, off)
		off += frameHeader + int64(uint32(b[off])|uint32(b[off+1])<<8|uint32(b[off+2])<<16|uint32(b[off+3])<<24)
	}
	last := offsets[len(offsets)-1]
	b = append(b[:last], frame([]byte{kindEntities, 0xff, 0xff, 0xff})...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTornLastRecordIsCutWithAWarning: only a record cut short at the very end of the last
// log, which a crash in the middle of a write leaves and which was never acknowledged, is
// repaired without asking, and the warning names what was dropped.
func TestTornLastRecordIsCutWithAWarning(t *testing.T) {
	dir := t.TempDir()
	keys := fillLog(t, dir, 50, 0)
	p := filepath.Join(dir, walName(0))
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s := open(t, dir, WithLog(&log))
	defer s.abandon()
	st := s.Stats()
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "wal-0: a torn last record at offset") || !strings.Contains(log.String(), st.Warnings[0]) {
		t.Fatalf("warnings %q, log %q", st.Warnings, log.String())
	}
	if _, err := s.GetEntity(ctx(t), "tab", "p", keys[48], nil); err != nil {
		t.Errorf("the record before the torn one is lost: %v", err)
	}
	if _, err := s.GetEntity(ctx(t), "tab", "p", keys[49], nil); err == nil {
		t.Errorf("the torn record was restored")
	}
}

// TestGapBetweenLogsIsRefused: a log missing between two others is damage.
func TestGapBetweenLogsIsRefused(t *testing.T) {
	dir := t.TempDir()
	fillLog(t, dir, 20, 10)
	// wal-1 continues the snapshot; a wal-3 after it means wal-2 went missing.
	if err := os.WriteFile(filepath.Join(dir, walName(3)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "wal-2 is missing between wal-1 and wal-3") {
		t.Fatalf("Open: %v", err)
	}
}

// TestRepairCutsALogOnlyAfterItsCopyIsDurable: a repair cuts a damaged log at its last
// intact record only once the whole log's copy kept aside is fsync'd; when that copy cannot
// be made durable (here its fsync fails), Open fails and the log keeps every record, the
// intact ones after the damage among them. Before, the cut could reach the disk before the
// copy did, and a crash then lost those records.
func TestRepairCutsALogOnlyAfterItsCopyIsDurable(t *testing.T) {
	dir := t.TempDir()
	fillLog(t, dir, 300, 0)
	flipAt(0.5)(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, walName(0)))
	if err != nil {
		t.Fatal(err)
	}
	syncs := 0
	failCopySync := func(op FileOp, file string) error {
		if op == OpSync && strings.HasPrefix(file, "damaged-") {
			syncs++
			return errors.New("sync failed")
		}
		return nil
	}
	if s, err := Open(dir, WithRepair(), WithFaults(failCopySync)); err == nil {
		s.abandon()
		t.Fatalf("the repair went on though the copy of the damaged log was never made durable (%d syncs of it)", syncs)
	}
	after, err := os.ReadFile(filepath.Join(dir, walName(0)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("the damaged log was cut to %d of its %d bytes though its copy is not durable", len(after), len(before))
	}
}

// TestTornRecordWithItsFirstSectorUnwrittenIsCut: a crash may leave the sectors of the last
// write partly on the disk in any order. When the sector holding the start of the last
// record was never written, its frame header reads as zero bytes (no length, no checksum)
// while later sectors hold its payload: that is a torn last record, cut with a warning
// (etcd's WAL reads a zero length as the end of the log), not damage that stops a restart.
func TestTornRecordWithItsFirstSectorUnwrittenIsCut(t *testing.T) {
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
	at := s.walSize
	// The last write spans several sectors.
	big := map[string]api.Value{"s": api.String(strings.Repeat("x", 4000))}
	if _, err := s.InsertEntity(c, "tab", api.NewEntity("p", "big", big)); err != nil {
		t.Fatal(err)
	}
	s.abandon()
	p := filepath.Join(dir, walName(0))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	unwritten := (at/sectorBytes + 1) * sectorBytes // the end of the sector the record starts in
	if unwritten-at < frameHeader {
		unwritten += sectorBytes
	}
	clear(data[at:unwritten])
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after a crash that left the last record's first sector unwritten: %v", err)
	}
	defer s2.abandon()
	if st := s2.Stats(); st.TruncatedBytes != int64(len(data))-at || len(st.Warnings) != 1 {
		t.Errorf("stats %+v, want the last %d bytes cut with a warning", st, int64(len(data))-at)
	}
	sameDump(t, before, dump(t, s2))
}
