package query

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// tableWith creates a table for the running spec and inserts es one by one.
func tableWith(ctx context.Context, f *framework.F, es ...api.Entity) string {
	GinkgoHelper()
	table := f.NewTable(ctx)
	for i, e := range es {
		f.Requires(scenario.InsertRule(e.Key(), matchers.Keys(es[:i])), fmt.Sprintf("load the entity %s of the spec's %d", e, len(es)), func() {
			Expect(matchers.InsertAll(ctx, f.Backend(), table, e)).To(matchers.SucceedOnBackend(), "loading the spec's entities")
		})
	}
	return table
}

// queryAll runs q to its end and returns every entity; the query must succeed.
func queryAll(ctx context.Context, f *framework.F, table string, q api.Query, n int) []api.Entity {
	GinkgoHelper()
	return scenario.MustQueryAll(ctx, f.Backend(), table, q, n, "query with filter %q, select %v, top %v", q.Filter, q.Select, q.Top).Entities()
}

// filterAll runs a $filter query to its end; the query must succeed.
func filterAll(ctx context.Context, f *framework.F, table, filter string, n int) []api.Entity {
	GinkgoHelper()
	return queryAll(ctx, f, table, api.Query{Filter: filter}, n)
}

// keysWhere returns the keys of the entities of es that satisfy pred, in the order of es.
func keysWhere(es []api.Entity, pred func(api.Entity) bool) []api.Key {
	var out []api.Key
	for _, e := range es {
		if pred(e) {
			out = append(out, e.Key())
		}
	}
	return out
}

// has reports whether e has property name with exactly value v (same EDM type).
func has(e api.Entity, name string, v api.Value) bool {
	got, ok := e.Properties[name]
	return ok && !got.Null && got.Equal(v)
}

// str returns e's String property name, or "" when it has none.
func str(e api.Entity, name string) string {
	v, ok := e.Properties[name]
	if !ok || v.Type != api.EdmString {
		return ""
	}
	return v.Str
}

// holdsTyped reports whether e holds every property of typed, each with its EDM type.
func holdsTyped(e api.Entity, typed map[string]api.EdmType) bool {
	for name, t := range typed {
		if v, ok := e.Properties[name]; !ok || v.Null || v.Type != t {
			return false
		}
	}
	return true
}

// among returns the entities of got whose keys are those of an entity of es.
func among(got, es []api.Entity) []api.Entity {
	keys := make(map[api.Key]bool, len(es))
	for _, e := range es {
		keys[e.Key()] = true
	}
	var out []api.Entity
	for _, e := range got {
		if keys[e.Key()] {
			out = append(out, e)
		}
	}
	return out
}
