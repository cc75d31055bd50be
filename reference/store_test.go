package reference

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

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
		if want := api.String(fmt.Sprintf("keep %d", i)); !got.Properties["s"].Equal(want) || !bytes.Equal(got.Properties["b"].Bin(), payload(i+29)) {
			t.Fatalf("entity %d after compaction: %v", i, got)
		}
	}
	if held.Properties["s"].Str != "keep 3" || held.PartitionKey != "p" || held.RowKey != "3" {
		t.Fatalf("an entity read before compaction changed: %v", held)
	}
}

// A slab none of whose entities is the table's any more is let go of at once, without a
// compaction, and entities read from it before stay intact.
func TestWhollyDeadSlabsAreReleased(t *testing.T) {
	s, _ := newTestService(t)
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 60_000) }
	const n = 40 // about 2.4 MB: the first slab (1 MiB) holds the first 17 or so
	for i := range n {
		mustInsert(t, s, ent("p", fmt.Sprintf("%02d", i), "b", api.Binary(payload(i))))
	}
	tbl := s.lookup("Tbl")
	held := mustGet(t, s, "p", "00")
	written := tbl.arena.written
	if len(tbl.arena.slabs) < 3 || tbl.arena.slabs[0] == nil {
		t.Fatalf("%d slabs after loading", len(tbl.arena.slabs))
	}
	for i := range n / 2 {
		if err := s.DeleteEntity(bg, "Tbl", "p", fmt.Sprintf("%02d", i), "*"); err != nil {
			t.Fatal(err)
		}
	}
	if tbl.arena.slabs[0] != nil || tbl.arena.written > written-slabBytes+60_100 {
		t.Fatalf("the first slab is still held: %d of %d bytes written", tbl.arena.written, written)
	}
	if live := tbl.arena.live; live > tbl.arena.written || tbl.arena.slabs[len(tbl.arena.slabs)-1] == nil {
		t.Fatalf("arena accounting: %d live of %d written", live, tbl.arena.written)
	}
	for i := n / 2; i < n; i++ {
		if got := mustGet(t, s, "p", fmt.Sprintf("%02d", i)); !bytes.Equal(got.Properties["b"].Bin(), payload(i)) {
			t.Fatalf("entity %d after the release: %v", i, got)
		}
	}
	if !bytes.Equal(held.Properties["b"].Bin(), payload(0)) {
		t.Fatal("an entity read from the released slab changed")
	}
}

// snapshotTable returns every entity of table Tbl, in order, through paged queries.
func snapshotTable(t *testing.T, s *Service) []api.Entity {
	t.Helper()
	var all []api.Entity
	q := api.Query{Top: api.TopOf(7)}
	for {
		page, err := s.QueryEntities(bg, "Tbl", q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Entities...)
		if page.Continuation.IsZero() {
			return all
		}
		q.Continuation = page.Continuation
	}
}

func sameEntities(a, b []api.Entity) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.PartitionKey != y.PartitionKey || x.RowKey != y.RowKey || x.ETag != y.ETag ||
			!x.Timestamp.Equal(y.Timestamp) || x.Absent != y.Absent || !sameProperties(x.Properties, y.Properties) {
			return false
		}
	}
	return true
}

// A failed transaction leaves nothing behind: not its inserts into a new partition, not
// its deletes of a partition's last entity, not its replacements; and the table works on.
func TestFailedBatchRollsBackEveryWrite(t *testing.T) {
	s, clock := newTestService(t)
	mustInsert(t, s, ent("lone", "only", "v", api.Int32(1)))
	for i := range 5 {
		mustInsert(t, s, ent("p", fmt.Sprint(i), "v", api.Int32(int32(i))))
	}
	before := snapshotTable(t, s)
	batches := [][]api.BatchOp{
		{
			{Kind: api.BatchInsert, Entity: ent("fresh", "a", "v", api.String("x"))},
			{Kind: api.BatchInsertOrMerge, Entity: ent("fresh", "b", "v", api.String("y"))},
			{Kind: api.BatchInsert, Entity: ent("fresh", "a", "v", api.String("dup"))}, // fails: a repeated row
		},
		{
			{Kind: api.BatchDelete, Entity: ent("lone", "only")},
			{Kind: api.BatchInsert, Entity: ent("lone", "new")},
			{Kind: api.BatchDelete, Entity: ent("lone", "missing")}, // 404
		},
		{
			{Kind: api.BatchMerge, Entity: ent("p", "1", "w", api.Bool(true))},
			{Kind: api.BatchReplace, Entity: ent("p", "2")},
			{Kind: api.BatchDelete, Entity: ent("p", "3")},
			{Kind: api.BatchInsert, Entity: ent("p", "9")},
			{Kind: api.BatchInsert, Entity: ent("p", "4")}, // 409
		},
	}
	for i, ops := range batches {
		clock.Advance(time.Second)
		if _, err := s.SubmitBatch(bg, "Tbl", ops); err == nil {
			t.Fatalf("batch %d succeeded", i)
		}
		if after := snapshotTable(t, s); !sameEntities(before, after) {
			t.Fatalf("batch %d left writes behind:\nbefore %v\nafter  %v", i, before, after)
		}
		for _, e := range before {
			if got := mustGet(t, s, e.PartitionKey, e.RowKey); got.ETag != e.ETag {
				t.Fatalf("batch %d: get %v: %v", i, e.Key(), got)
			}
		}
	}
	// The ids and partitions the failed transactions took are usable again.
	mustInsert(t, s, ent("fresh", "a"))
	if err := s.DeleteEntity(bg, "Tbl", "lone", "only", "*"); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, ent("lone", "new"))
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Filter: "PartitionKey eq 'lone'"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != "new" {
		t.Fatalf("partition lone: %v, %v", page.Entities, err)
	}
}

// A query whose filter is exactly a key range takes a shortcut (odata's IsKeyRange), in any
// order and grouping of its comparisons; the same filter under a double negation is
// evaluated entity by entity. Both must answer the same pages.
func TestKeyRangeScanAgreesWithFilterScan(t *testing.T) {
	for _, boundary := range []bool{false, true} {
		s, _ := newTestService(t, WithPartitionBoundaryPages(boundary))
		r := rand.New(rand.NewPCG(5, 6))
		pks := []string{"", "a", "b", "é", "\uff21", "𝄞", "O'Brien"}
		rks := []string{"", "0", "1", "2", "a", "ab", "é", "\ue000", "\uff21", "𝄞"}
		for _, pk := range pks {
			for _, rk := range rks {
				if r.IntN(3) > 0 {
					mustInsert(t, s, ent(pk, rk, "n", api.Int32(int32(r.IntN(9)))))
				}
			}
		}
		quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
		shortcuts := 0
		for range 400 {
			var parts []string
			pk := pks[r.IntN(len(pks))]
			if r.IntN(5) > 0 {
				parts = append(parts, "PartitionKey eq "+quote(pk))
				if r.IntN(2) == 0 {
					parts = append(parts, "RowKey "+[]string{"gt", "ge"}[r.IntN(2)]+" "+quote(rks[r.IntN(len(rks))]))
				}
				if r.IntN(2) == 0 {
					parts = append(parts, "RowKey "+[]string{"lt", "le"}[r.IntN(2)]+" "+quote(rks[r.IntN(len(rks))]))
				}
			} else {
				if r.IntN(2) == 0 {
					parts = append(parts, "PartitionKey "+[]string{"gt", "ge"}[r.IntN(2)]+" "+quote(pk))
				}
				parts = append(parts, "PartitionKey "+[]string{"lt", "le"}[r.IntN(2)]+" "+quote(pks[r.IntN(len(pks))]))
			}
			shortcut := strings.Join(parts, " and ")
			if r.IntN(2) == 0 {
				slices.Reverse(parts)
				shortcut = "(" + strings.Join(parts, ") and (") + ")"
			}
			general := "not (not (" + shortcut + "))"
			for filter, shortcutSpelling := range map[string]bool{shortcut: true, general: false} {
				f, err := compileFilter(filter)
				if err != nil {
					t.Fatal(err)
				}
				kr := f.KeyRange()
				if kr.Empty {
					continue
				}
				switch took := f.IsKeyRange(); {
				case took != shortcutSpelling:
					t.Fatalf("IsKeyRange(%s) is %v", filter, took)
				case took:
					shortcuts++
				}
			}
			top := []int{0, 1, 2, 3}[r.IntN(4)]
			pages := func(filter string) []api.Page {
				var out []api.Page
				q := api.Query{Filter: filter, Top: api.OptionalTop(top)}
				for {
					page, err := s.QueryEntities(bg, "Tbl", q)
					if err != nil {
						t.Fatalf("%s: %v", filter, err)
					}
					out = append(out, page)
					if page.Continuation.IsZero() {
						return out
					}
					q.Continuation = page.Continuation
				}
			}
			a, b := pages(shortcut), pages(general)
			if len(a) != len(b) {
				t.Fatalf("%s: %d pages; %s: %d pages", shortcut, len(a), general, len(b))
			}
			for i := range a {
				if !sameEntities(a[i].Entities, b[i].Entities) || a[i].Continuation != b[i].Continuation {
					t.Fatalf("page %d of %s (top %d):\n%v %v\nof %s:\n%v %v", i, shortcut, top,
						a[i].Entities, a[i].Continuation, general, b[i].Entities, b[i].Continuation)
				}
			}
		}
		if shortcuts < 100 {
			t.Fatalf("only %d of 400 queries took the key-range shortcut", shortcuts)
		}
	}
}

// The sizes encodeEntity and encodeMerge compute are EntitySize of what is stored.
func TestEncodedSizeIsEntitySize(t *testing.T) {
	n := newNameTable()
	r := rand.New(rand.NewPCG(8, 9))
	values := []api.Value{
		api.String(""), api.String("héllo 𝄞"), api.Binary([]byte{1, 2, 3}), api.Bool(true),
		api.DateTime(testEpoch), api.Double(1.5), api.Guid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		api.Int32(-7), api.Int64(1 << 40), api.Null(api.EdmString),
	}
	randomProps := func() map[string]api.Value {
		props := map[string]api.Value{}
		for range r.IntN(6) {
			props[[]string{"a", "bb", "ccé", "Timestamp", "d"}[r.IntN(5)]] = values[r.IntN(len(values))]
		}
		return props
	}
	for range 2000 {
		oldProps, props := randomProps(), randomProps()
		buf, _, size := n.encodeEntity(nil, "pk", "rké", oldProps)
		if want := EntitySize("pk", "rké", oldProps); size != want {
			t.Fatalf("encodeEntity(%v): size %d, EntitySize %d", oldProps, size, want)
		}
		old := string(buf[len("pk")+len("rké"):])
		merged := maps.Clone(oldProps)
		for name, v := range props {
			if storedProperty(name, v) {
				merged[name] = v
			}
		}
		_, count, size := n.encodeMerge(nil, "pk", "rké", props, old)
		if want := EntitySize("pk", "rké", merged); size != want {
			t.Fatalf("encodeMerge(%v into %v): size %d, EntitySize %d", props, oldProps, size, want)
		}
		stored := 0
		for name, v := range merged {
			if storedProperty(name, v) {
				stored++
			}
		}
		if count != stored {
			t.Fatalf("encodeMerge(%v into %v): %d properties, want %d", props, oldProps, count, stored)
		}
	}
}
