package matchers

import (
	"context"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/inproc"
	"github.com/tableconform/conform/suites/driver/record"
)

// cachedGets answers Get Entity with the first answer it gave for the keys, whatever was
// written since (a lagging replica); queries read the table as it is.
type cachedGets struct {
	api.Backend
	cache map[api.Key]api.Entity
}

func (c *cachedGets) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	k := api.Key{PartitionKey: pk, RowKey: rk}
	if e, ok := c.cache[k]; ok {
		return e, nil
	}
	e, err := c.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		c.cache[k] = e
	}
	return e, err
}

// notes collects the preconditions the matchers announce while f runs.
func notes(t *testing.T, f func()) []string {
	t.Helper()
	var got []string
	record.SetPreconditionNoter(func(rule, _, _ string) { got = append(got, rule) })
	defer record.SetPreconditionNoter(func(string, string, string) {})
	f()
	return got
}

// A Get Entity that shows an older state than a query of the key, where the query shows
// what the spec expects, blocks the comparison by modify.read-your-writes; a Get that shows
// the same state as the query, wrong for both, fails as the spec's own.
func TestPointReadsOlderThanTheTableBlockByReadYourWrites(t *testing.T) {
	ctx := context.Background()
	inner := inproc.New()
	if err := inner.CreateTable(ctx, "fresh1"); err != nil {
		t.Fatal(err)
	}
	b := &cachedGets{Backend: inner, cache: map[api.Key]api.Entity{}}
	v1 := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
	v2 := v1.With("V", api.Int32(2))
	gone := api.NewEntity("p", "gone", nil)
	for _, e := range []api.Entity{v1, gone} {
		if _, err := b.InsertEntity(ctx, "fresh1", e); err != nil {
			t.Fatal(err)
		}
		if _, err := b.GetEntity(ctx, "fresh1", e.PartitionKey, e.RowKey, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.UpdateEntity(ctx, "fresh1", v2, api.Replace, api.IfMatchAny); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteEntity(ctx, "fresh1", "p", "gone", api.IfMatchAny); err != nil {
		t.Fatal(err)
	}

	check := func(what string, m interface {
		Match(any) (bool, error)
		FailureMessage(any) string
	}, want string) {
		t.Helper()
		got := notes(t, func() {
			ok, err := m.Match("fresh1")
			if ok || err != nil {
				t.Fatalf("%s: matched %v, %v; want a failure", what, ok, err)
			}
			_ = m.FailureMessage("fresh1")
		})
		if strings.Join(got, ",") != want {
			t.Errorf("%s: noted preconditions %v; want %q", what, got, want)
		}
	}
	check("HoldEntity of the replaced entity", HoldEntity(ctx, b, v2), RuleReadYourWrites)
	check("HoldProperty of the replaced value", HoldProperty(ctx, b, "p", "r", "V", api.Int32(2)), RuleReadYourWrites)
	check("LackEntity of the deleted entity", LackEntity(ctx, b, "p", "gone"), RuleReadYourWrites)
	// The table holds neither: the spec's own failure.
	check("HoldEntity of a state the table never held", HoldEntity(ctx, b, v1.With("V", api.Int32(3))), "")
	check("HoldProperty of a value the table never held", HoldProperty(ctx, b, "p", "r", "V", api.Int32(3)), "")
	// A fresh Get that shows what the query shows is judged as it is.
	fresh := inproc.New()
	if err := fresh.CreateTable(ctx, "fresh1"); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.InsertEntity(ctx, "fresh1", v1); err != nil {
		t.Fatal(err)
	}
	check("HoldEntity of an entity the write did not change", HoldEntity(ctx, fresh, v2), "")
	check("LackEntity of an entity the table holds", LackEntity(ctx, fresh, "p", "r"), "")
}
