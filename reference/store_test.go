package reference

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

func TestCompaction(t *testing.T) {
	s, _ := newTestService(t)
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 60_000) }
	for i := range 10 {
		mustInsert(t, s, ent("p", fmt.Sprint(i), "s", api.String(fmt.Sprintf("keep %d", i)), "b", api.Binary(payload(i))))
	}
	held := mustGet(t, s, "p", "3") // strings shared with the arena must survive compaction
	tbl := s.lookup("Tbl")
	compactions := 0
	for round := range 30 {
		written := tbl.arena.written
		for i := range 10 {
			e := ent("p", fmt.Sprint(i), "b", api.Binary(payload(i+round)))
			if _, err := s.UpdateEntity(bg, "Tbl", e, api.Merge, "*"); err != nil {
				t.Fatal(err)
			}
		}
		if tbl.arena.written < written {
			compactions++
		}
		if err := s.DeleteEntity(bg, "Tbl", "p", "9", "*"); err != nil {
			t.Fatal(err)
		}
		mustInsert(t, s, ent("p", "9", "s", api.String("keep 9"), "b", api.Binary(payload(9+round))))
	}
	if compactions == 0 {
		t.Fatalf("no compaction after %d MiB of dead entities", tbl.arena.written>>20)
	}
	if tbl.arena.live > tbl.arena.written || tbl.arena.written-tbl.arena.live > 2*compactMinDeadBytes {
		t.Fatalf("arena accounting: %d live of %d written", tbl.arena.live, tbl.arena.written)
	}
	for i := range 10 {
		got := mustGet(t, s, "p", fmt.Sprint(i))
		if want := api.String(fmt.Sprintf("keep %d", i)); !got.Properties["s"].Equal(want) || !bytes.Equal(got.Properties["b"].Bin, payload(i+29)) {
			t.Fatalf("entity %d after compaction: %v", i, got)
		}
	}
	if held.Properties["s"].Str != "keep 3" || held.PartitionKey != "p" || held.RowKey != "3" {
		t.Fatalf("an entity read before compaction changed: %v", held)
	}
}
