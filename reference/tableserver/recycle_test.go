package tableserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// TestConcurrentQueriesKeepTheirEntities queries, from many clients at once, partitions whose
// entities each carry their own RowKey as a property, while other clients rewrite them: the
// server has the reference list each page into buffers it reuses once the answer is
// written (listed.go; property maps handed back by RecyclePage on the general path), and
// no answer may show another entity's properties. Run it with -race.
func TestConcurrentQueriesKeepTheirEntities(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	ctx := context.Background()
	const table, partitions, rows = "recycled", 4, 30
	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	entity := func(p, r, gen int) api.Entity {
		rk := fmt.Sprintf("r%02d", r)
		props := map[string]api.Value{"self": api.String(rk), "gen": api.Int32(int32(gen))}
		for k := range r % 5 { // entities of different sizes, so that maps change hands
			props[fmt.Sprintf("extra%d", k)] = api.Int64(int64(r))
		}
		return api.NewEntity(fmt.Sprintf("p%d", p), rk, props)
	}
	for p := range partitions {
		for r := range rows {
			if _, err := b.InsertEntity(ctx, table, entity(p, r, 0)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				p := (w + i) % partitions
				q := api.Query{Filter: fmt.Sprintf("PartitionKey eq 'p%d'", p), Top: api.TopOf(7)}
				switch i % 3 {
				case 1: // a filter that is not a key range: unmatched entities are decoded too
					q.Filter = fmt.Sprintf("PartitionKey eq 'p%d' and gen ge 0", p)
				case 2: // a projection, listed after the general path
					q.Select = []string{"self", "gen", "extra0", "extra1", "extra2", "extra3", "RowKey"}
				}
				for pages := 0; pages < rows; pages++ {
					page, err := b.QueryEntities(ctx, table, q)
					if err != nil {
						t.Error(err)
						return
					}
					for _, e := range page.Entities {
						want := 2 + rowExtras(e.RowKey)
						if q.Select != nil {
							want = 6 // the selected properties, a missing one as null
						}
						if got := e.Properties["self"]; got.Str != e.RowKey || len(e.Properties) != want {
							t.Errorf("entity (%s,%s) came back with properties %v", e.PartitionKey, e.RowKey, e.Properties)
							return
						}
					}
					if page.Continuation.IsZero() {
						break
					}
					q.Continuation = page.Continuation
				}
			}
		}()
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p, r := (w+i)%partitions, (i*7)%rows
				if _, err := b.UpdateEntity(ctx, table, entity(p, r, i), api.Replace, api.IfMatchAny); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// rowExtras is how many extra properties the entity of RowKey "rNN" carries.
func rowExtras(rk string) int {
	var r int
	fmt.Sscanf(rk, "r%d", &r)
	return r % 5
}

// TestConcurrentGetsAndInsertsKeepTheirEntities reads and inserts entities from many clients
// at once: the server has a read entity, and the entity an insert sends and the one it
// stores, listed into buffers it reuses (listed.go), and no answer may show another entity's
// properties. Run it with -race.
func TestConcurrentGetsAndInsertsKeepTheirEntities(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	ctx := context.Background()
	const table, rows = "recycledone", 30
	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	entity := func(pk string, r int) api.Entity {
		rk := fmt.Sprintf("r%02d", r)
		props := map[string]api.Value{"self": api.String(pk + rk), "gen": api.Int32(0)}
		for k := range r % 5 {
			props[fmt.Sprintf("extra%d", k)] = api.Int64(int64(r))
		}
		return api.NewEntity(pk, rk, props)
	}
	check := func(e api.Entity) bool {
		if got := e.Properties["self"]; got.Str != e.PartitionKey+e.RowKey || len(e.Properties) != 2+rowExtras(e.RowKey) {
			t.Errorf("entity (%s,%s) came back with properties %v", e.PartitionKey, e.RowKey, e.Properties)
			return false
		}
		return true
	}
	for r := range rows {
		if _, err := b.InsertEntity(ctx, table, entity("read", r)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 60 {
				if w%2 == 0 {
					e, err := b.GetEntity(ctx, table, "read", fmt.Sprintf("r%02d", (w+i*7)%rows), nil)
					if err != nil {
						t.Error(err)
						return
					}
					if !check(e) {
						return
					}
					continue
				}
				stored, err := b.InsertEntity(ctx, table, entity(fmt.Sprintf("w%d-%d", w, i), i%rows))
				if err != nil {
					t.Error(err)
					return
				}
				if !check(stored) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestConcurrentWritesStoreTheirOwnProperties inserts, replaces and merges entities of
// different sizes from many clients at once: the server decodes each write's properties
// into a map it reuses once the reference has stored them, and every entity must come back
// with exactly the properties written to it. Run it with -race.
func TestConcurrentWritesStoreTheirOwnProperties(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	ctx := context.Background()
	const table, writes = "recycledwrites", 40
	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	entity := func(w, i int) api.Entity {
		pk, rk := fmt.Sprintf("w%d", w), fmt.Sprintf("r%02d", i)
		props := map[string]api.Value{"self": api.String(pk + rk)}
		for k := range (w + i) % 7 {
			props[fmt.Sprintf("%s_%d", pk, k)] = api.Int64(int64(i))
		}
		return api.NewEntity(pk, rk, props)
	}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				e := entity(w, i)
				var err error
				switch w % 3 {
				case 0:
					_, err = b.InsertEntity(ctx, table, e)
				case 1:
					_, err = b.UpdateEntity(ctx, table, e, api.Replace, "")
				default:
					_, err = b.UpdateEntity(ctx, table, e, api.Merge, "")
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for w := range 6 {
		for i := range writes {
			want := entity(w, i)
			got, err := b.GetEntity(ctx, table, want.PartitionKey, want.RowKey, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Properties) != len(want.Properties) {
				t.Fatalf("entity (%s,%s) was stored with properties %v, want %v", want.PartitionKey, want.RowKey, got.Properties, want.Properties)
			}
			for name, v := range want.Properties {
				if g, ok := got.Properties[name]; !ok || !g.Equal(v) {
					t.Fatalf("entity (%s,%s): property %s = %v, want %v", want.PartitionKey, want.RowKey, name, g, v)
				}
			}
		}
	}
}
