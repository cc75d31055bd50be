package mutant

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/inproc"
)

// TestCompositesBreakTheirFaultsRules: a composite declares the union of its faults' rules
// and runs on the base they need.
func TestCompositesBreakTheirFaultsRules(t *testing.T) {
	for _, c := range Composites {
		m := mustLookup(t, c.Name)
		var want []string
		for _, name := range c.Faults {
			f := mustLookup(t, name)
			for _, id := range f.Breaks {
				if !slices.Contains(want, id) {
					want = append(want, id)
				}
			}
			if f.Base != "" && m.BaseOrDefault() != f.Base {
				t.Errorf("%s runs on %s; its fault %s needs %s", c.Name, m.BaseOrDefault(), name, f.Base)
			}
			for id := range f.AlsoFails {
				if _, ok := m.AlsoFails[id]; !ok {
					t.Errorf("%s does not declare %s, which its fault %s breaks too", c.Name, id, name)
				}
			}
		}
		if !slices.Equal(m.Breaks, want) {
			t.Errorf("%s breaks %v, want its faults' %v", c.Name, m.Breaks, want)
		}
		if !slices.Equal(m.Faults, c.Faults) || !strings.Contains(m.Description, strings.Join(c.Faults, ", ")) {
			t.Errorf("%s: faults %v, description %q; want %v named", c.Name, m.Faults, m.Description, c.Faults)
		}
	}
}

// TestCompositeCarriesEveryFault: a composite of a read fault and a query fault shows both.
func TestCompositeCarriesEveryFault(t *testing.T) {
	ctx := context.Background()
	b := compose(Composite{Name: "test-composite", Faults: []string{"reverse-page-order", "stray-etag-member"}}).Wrap(inproc.New())
	defer func() {
		registryMu.Lock()
		delete(registry, "test-composite")
		registryMu.Unlock()
	}()
	seed(t, b, "table1", api.Key{PartitionKey: "a", RowKey: "1"}, api.Key{PartitionKey: "a", RowKey: "2"})
	p, err := b.QueryEntities(ctx, "table1", api.Query{})
	if err != nil || len(p.Entities) != 2 {
		t.Fatalf("query: %v, %v", p.Entities, err)
	}
	if p.Entities[0].RowKey != "2" {
		t.Errorf("page %v: the reversed order of reverse-page-order is missing", p.Entities)
	}
	if _, ok := p.Entities[0].Properties["ETag"]; !ok {
		t.Errorf("entity %v: the member of stray-etag-member is missing", p.Entities[0])
	}
}

// TestComposeRefusesAnUnknownFault: a composite that names no registered mutant is refused
// at start, not run without the fault.
func TestComposeRefusesAnUnknownFault(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "no-such-fault") {
			t.Errorf("compose with an unknown fault: recovered %v, want a panic naming it", r)
		}
	}()
	compose(Composite{Name: "test-unknown", Faults: []string{"reverse-page-order", "no-such-fault"}})
}

// TestUnlockedReadModifyWriteLosesAnInterleavedMerge: two merges that both read before
// either writes keep only the second's property, and both are acknowledged.
func TestUnlockedReadModifyWriteLosesAnInterleavedMerge(t *testing.T) {
	ctx := context.Background()
	inner := inproc.New()
	b := mustLookup(t, "unlocked-read-modify-write").Wrap(inner)
	seed(t, b, "table1", api.Key{PartitionKey: "p", RowKey: "r"})
	cur, err := b.GetEntity(ctx, "table1", "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Alone, a merge keeps what it does not send and a stale ETag is refused.
	if _, err := b.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"A": api.Int32(1)}), api.Merge, cur.ETag); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"B": api.Int32(2)}), api.Merge, cur.ETag); err == nil {
		t.Error("a merge with a stale ETag was acknowledged")
	}
	if _, err := b.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"B": api.Int32(2)}), api.Merge, api.IfMatchAny); err != nil {
		t.Fatal(err)
	}
	got, err := b.GetEntity(ctx, "table1", "p", "r", nil)
	_, hasA := got.Properties["A"]
	if _, hasB := got.Properties["B"]; err != nil || !hasA || !hasB {
		t.Fatalf("after two merges in turn: %v, %v; want A and B", got, err)
	}
	// Interleaved: the write of the first lands between the read and the write of the
	// second, which writes back the whole entity it read.
	m := &unlockedReadModifyWrite{Backend: &writeBeforeUpdate{Backend: inner, first: func() {
		_, _ = inner.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"C": api.Int32(3)}), api.Merge, api.IfMatchAny)
	}}}
	if _, err := m.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"D": api.Int32(4)}), api.Merge, api.IfMatchAny); err != nil {
		t.Fatal(err)
	}
	got, err = inner.GetEntity(ctx, "table1", "p", "r", nil)
	if _, kept := got.Properties["C"]; err != nil || kept {
		t.Errorf("the interleaved merge's C is kept (%v, %v): the write does not write back what it read", got, err)
	}
}

// writeBeforeUpdate runs first once, before the first update it passes on.
type writeBeforeUpdate struct {
	api.Backend
	first func()
}

func (w *writeBeforeUpdate) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if w.first != nil {
		w.first()
		w.first = nil
	}
	return w.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}
