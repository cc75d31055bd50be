package store

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// A frozen view keeps the table as it was through every later kind of change: replaces,
// merges, removes, inserts, compactions and a Reset.
func TestFrozenIsUnchangedByLaterWrites(t *testing.T) {
	names := NewNames()
	tbl := NewTable(names, Config{CompactMinDeadBytes: 1 << 20})
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 30_000) }
	ticks := int64(0)
	for i := range 50 {
		ticks++
		commitWrite(tbl, fmt.Sprint(i%3), fmt.Sprint(i), map[string]api.Value{"b": api.Binary(payload(i))}, false, ticks)
	}
	want := map[string]string{}
	tbl.Ascend(api.Key{}, func(r Record) bool { want[r.PartitionKey()+"/"+r.RowKey()] = r.ETag(); return true })
	frozen := tbl.Freeze()
	compactedBefore := tbl.arena.written
	for round := range 20 {
		for i := range 50 {
			ticks++
			switch i % 4 {
			case 0:
				commitRemove(tbl, fmt.Sprint(i%3), fmt.Sprint(i))
			default:
				commitWrite(tbl, fmt.Sprint(i%3), fmt.Sprint(i), map[string]api.Value{"b": api.Binary(payload(i + round + 1))}, i%2 == 0, ticks)
			}
		}
		ticks++
		commitWrite(tbl, "new", fmt.Sprint(round), map[string]api.Value{"n": api.Int32(int32(round))}, false, ticks)
	}
	if tbl.arena.written >= compactedBefore+20*50*30_000 {
		t.Fatalf("no compaction happened (%d bytes written)", tbl.arena.written)
	}
	check := func(when string) {
		t.Helper()
		seen := 0
		frozen.Ascend(func(r Record) bool {
			k := r.PartitionKey() + "/" + r.RowKey()
			etag, ok := want[k]
			if !ok || etag != r.ETag() {
				t.Fatalf("%s: frozen view holds %s with %s; it held %q", when, k, r.ETag(), etag)
			}
			var i int
			fmt.Sscan(r.RowKey(), &i)
			if got := r.Entity(names).Properties["b"].Bin(); !bytes.Equal(got, payload(i)) {
				t.Fatalf("%s: the bytes of %s changed", when, k)
			}
			seen++
			return true
		})
		if seen != len(want) || frozen.Len() != len(want) {
			t.Fatalf("%s: frozen view holds %d (Len %d) entities, want %d", when, seen, frozen.Len(), len(want))
		}
	}
	check("after writes")
	tbl.Reset()
	check("after Reset")
}
