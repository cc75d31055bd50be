package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepairNamesAndSalvagesWhatItDropped: a repair keeps only what comes before the first
// damage, but it names what it dropped (the count, the tables, keys) and Salvage reads every
// intact change after the damage from the damaged-<time> directory, so that no
// acknowledged write is beyond reach: with a byte flipped in the middle of a log, what is
// served and what is salvaged together hold every insert but the damaged one; with a
// damaged snapshot followed by an intact log, every insert of the log is salvaged.
func TestRepairNamesAndSalvagesWhatItDropped(t *testing.T) {
	const n = 300
	cases := []struct {
		name       string
		snapshotAt int
		damage     func(t *testing.T, dir string)
		lost       int // inserts neither served nor salvaged, at most
	}{
		{"byte flipped in the middle of the log", 0, flipAt(0.5), 1},
		{"damaged snapshot followed by an intact log", 100, flipSnapshot, 100},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			keys := fillLog(t, dir, n, tc.snapshotAt)
			tc.damage(t, dir)
			var log bytes.Buffer
			s := open(t, dir, WithRepair(), WithLog(&log))
			defer s.abandon()
			st := s.Stats()
			served := map[string]bool{}
			for _, k := range keys {
				if _, err := s.GetEntity(ctx(t), "tab", "p", k, nil); err == nil {
					served[k] = true
				}
			}
			salvaged := map[string]bool{}
			err := Salvage(st.SetAside, func(c Change) error {
				if c.Table != "tab" {
					t.Errorf("a change of table %q", c.Table)
				}
				for _, e := range c.Puts {
					salvaged[e.RowKey] = true
					if served[e.RowKey] && c.File != snapshotFile {
						t.Errorf("%s is salvaged from %s at %d though it is still served", e.RowKey, c.File, c.Offset)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for _, k := range keys[tc.snapshotAt:] {
				if !served[k] && !salvaged[k] {
					lost++
				}
			}
			if lost > tc.lost {
				t.Errorf("%d of %d acknowledged inserts are neither served nor salvaged, want at most %d", lost, n, tc.lost)
			}
			d := st.Dropped
			if d.Changes < len(salvaged)-tc.snapshotAt || d.Tables["tab"] != d.Changes || d.Keys < len(salvaged) || len(d.Sample) == 0 {
				t.Errorf("Stats.Dropped = %+v, want the %d salvaged inserts counted in table tab", d, len(salvaged))
			}
			t.Logf("served %d, salvaged %d; the repair said:\n%s", len(served), len(salvaged), log.String())
			if !strings.Contains(log.String(), "dropped: ") || !strings.Contains(log.String(), "tab (") || !strings.Contains(log.String(), `"p"`) {
				t.Errorf("the repair does not name what it dropped:\n%s", log.String())
			}
		})
	}
}

// flipSnapshot flips a byte in the middle of the snapshot.
func flipSnapshot(t *testing.T, dir string) {
	p := filepath.Join(dir, snapshotFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
