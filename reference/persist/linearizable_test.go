package persist

import (
	"testing"
	"time"

	"github.com/tableconform/conform/reference/linearizability"
)

// TestStoreIsLinearizable: the Store's lock keeps concurrent conditional writes and
// transactions linearizable, and what it restores after a crash is the state the history
// ends in.
func TestStoreIsLinearizable(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, WithSync(SyncNone))
	c := ctx(t)
	w := linearizability.Workload{Table: "linear", Clients: 16, OpsPerClient: 30, Partitions: 3, Rows: 3, Seed: 3}
	if err := s.CreateTable(c, w.Table); err != nil {
		t.Fatal(err)
	}
	h, err := linearizability.Run(c, s, w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := linearizability.Check(h, 30*time.Second, t.TempDir(), "persist")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Linearizable {
		t.Errorf("the store is not linearizable (%s); see %s", res.Verdict, res.Visualization)
	}
	want := dump(t, s)
	s.abandon()
	s = open(t, dir)
	defer s.Close()
	sameDump(t, want, dump(t, s))
}
