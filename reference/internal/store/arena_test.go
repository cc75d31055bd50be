package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

func TestCompaction(t *testing.T) {
	names := NewNames()
	tbl := NewTable(names, Config{})
	ticks := int64(0)
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 60_000) }
	for i := range 10 {
		ticks++
		commitWrite(tbl, "p", fmt.Sprint(i), map[string]api.Value{"s": api.String(fmt.Sprintf("keep %d", i)), "b": api.Binary(payload(i))}, false, ticks)
	}
	held, _ := tbl.Get("p", "3") // a record must survive compaction
	heldEntity := held.Entity(names)
	compactions := 0
	for round := range 30 {
		written := tbl.arena.written
		for i := range 10 {
			ticks++
			commitWrite(tbl, "p", fmt.Sprint(i), map[string]api.Value{"b": api.Binary(payload(i + round))}, true, ticks)
		}
		if tbl.arena.written < written {
			compactions++
		}
		commitRemove(tbl, "p", "9")
		ticks++
		commitWrite(tbl, "p", "9", map[string]api.Value{"s": api.String("keep 9"), "b": api.Binary(payload(9 + round))}, false, ticks)
	}
	if compactions == 0 {
		t.Fatalf("no compaction after %d MiB of dead entities", tbl.arena.written>>20)
	}
	if tbl.arena.live > tbl.arena.written || tbl.arena.written-tbl.arena.live > 2*defaultCompactMinDeadBytes {
		t.Fatalf("arena accounting: %d live of %d written", tbl.arena.live, tbl.arena.written)
	}
	for i := range 10 {
		r, ok := tbl.Get("p", fmt.Sprint(i))
		if !ok {
			t.Fatalf("entity %d lost", i)
		}
		got := r.Entity(names)
		if want := api.String(fmt.Sprintf("keep %d", i)); !got.Properties["s"].Equal(want) || !bytes.Equal(got.Properties["b"].Bin(), payload(i+29)) {
			t.Fatalf("entity %d after compaction: %v", i, got)
		}
	}
	if again := held.Entity(names); held.RowKey() != "3" || !again.Properties["s"].Equal(heldEntity.Properties["s"]) ||
		!bytes.Equal(again.Properties["b"].Bin(), payload(3)) || again.ETag != heldEntity.ETag {
		t.Fatalf("a record read before compaction changed: %v", again)
	}
}

// A slab none of whose entities is the table's any more is let go of at once, without a
// compaction, and records read from it before stay intact.
func TestWhollyDeadSlabsAreReleased(t *testing.T) {
	names := NewNames()
	tbl := NewTable(names, Config{})
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 60_000) }
	const n = 40 // about 2.4 MB: the first slab (1 MiB) holds the first 17 or so
	for i := range n {
		commitWrite(tbl, "p", fmt.Sprintf("%02d", i), map[string]api.Value{"b": api.Binary(payload(i))}, false, int64(i+1))
	}
	held, _ := tbl.Get("p", "00")
	written := tbl.arena.written
	if len(tbl.arena.slabs) < 3 || tbl.arena.slabs[0] == nil {
		t.Fatalf("%d slabs after loading", len(tbl.arena.slabs))
	}
	for i := range n / 2 {
		if !commitRemove(tbl, "p", fmt.Sprintf("%02d", i)) {
			t.Fatalf("entity %d missing", i)
		}
	}
	if tbl.arena.slabs[0] != nil || tbl.arena.written > written-slabBytes+60_100 {
		t.Fatalf("the first slab is still held: %d of %d bytes written", tbl.arena.written, written)
	}
	if live := tbl.arena.live; live > tbl.arena.written || tbl.arena.slabs[len(tbl.arena.slabs)-1] == nil {
		t.Fatalf("arena accounting: %d live of %d written", live, tbl.arena.written)
	}
	for i := n / 2; i < n; i++ {
		r, ok := tbl.Get("p", fmt.Sprintf("%02d", i))
		if !ok || !bytes.Equal(r.Entity(names).Properties["b"].Bin(), payload(i)) {
			t.Fatalf("entity %d after the release: %v", i, ok)
		}
	}
	if !bytes.Equal(held.Entity(names).Properties["b"].Bin(), payload(0)) {
		t.Fatal("a record read from the released slab changed")
	}
}
