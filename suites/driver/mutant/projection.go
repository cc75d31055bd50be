package mutant

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
)

// Single faults of projection, property names and returned ETags, each the subject of one
// rule that used to be caught only through another rule's spec.

// filterAfterSelect answers a query with $select and $filter as a backend that projects
// before it filters: a filter that names a custom property $select leaves out matches
// nothing.
type filterAfterSelect struct{ api.Backend }

// filterKeywords are the words of a $filter that name no custom property: its keywords and
// the system properties, which a projection keeps in the index.
var filterKeywords = []string{"eq", "ne", "gt", "ge", "lt", "le", "and", "or", "not", "true", "false", "null",
	"PartitionKey", "RowKey", "Timestamp"}

func (m filterAfterSelect) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || len(q.Select) == 0 || strings.TrimSpace(q.Filter) == "" {
		return p, err
	}
	for _, t := range odata.Tokens(q.Filter) {
		if t.Kind == odata.TokenWord && !slices.Contains(filterKeywords, t.Text) && !slices.Contains(q.Select, t.Text) {
			p.Entities = nil
			break
		}
	}
	return p, nil
}

// selectTypesLost answers a query with $select with every selected Int64 as a Double, as a
// backend that projects through untyped JSON numbers.
type selectTypesLost struct{ api.Backend }

func (m selectTypesLost) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || len(q.Select) == 0 {
		return p, err
	}
	mapEntities(p.Entities, func(e *api.Entity) {
		for n, v := range e.Properties {
			if v.Type == api.EdmInt64 && !v.Null {
				e.Properties[n] = api.Double(float64(v.Int()))
			}
		}
	})
	return p, nil
}

// propertyNamesFolded shows, of property names that differ only in letter case, the one
// first in ordinal order, as a store whose columns are case-insensitive.
type propertyNamesFolded struct{ api.Backend }

func foldNames(e *api.Entity) {
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, n := range names {
		if k := strings.ToLower(n); seen[k] {
			delete(e.Properties, n)
		} else {
			seen[k] = true
		}
	}
}

func (m propertyNamesFolded) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		foldNames(&e)
	}
	return e, err
}

func (m propertyNamesFolded) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	mapEntities(p.Entities, foldNames)
	return p, err
}

// insertETagStrong answers Insert Entity with the new entity's ETag in its strong form
// (without W/), while reads show the weak one; it takes either form in If-Match, so
// conditional writes still work: only the text an insert returns differs.
type insertETagStrong struct{ api.Backend }

// weak returns an If-Match of the strong form in the weak form the wrapped backend issued.
func weak(ifMatch string) string {
	if ifMatch == "" || ifMatch == api.IfMatchAny || strings.HasPrefix(ifMatch, "W/") {
		return ifMatch
	}
	return "W/" + ifMatch
}

func (m insertETagStrong) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	got.ETag = strings.TrimPrefix(got.ETag, "W/")
	return got, err
}

func (m insertETagStrong) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.Backend.UpdateEntity(ctx, table, e, mode, weak(ifMatch))
}

func (m insertETagStrong) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.Backend.DeleteEntity(ctx, table, pk, rk, weak(ifMatch))
}

func (m insertETagStrong) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	ops = slices.Clone(ops)
	for i := range ops {
		ops[i].IfMatch = weak(ops[i].IfMatch)
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

var (
	_ = define(Mutant{
		Name:        "filter-after-select",
		Description: "applies $select before $filter, so a filter on a property the projection leaves out matches nothing",
		Breaks:      []string{"query.select.filter-independent"},
	}, func(b api.Backend) api.Backend { return filterAfterSelect{b} }, hooks{})

	_ = define(Mutant{
		Name:        "select-int64-as-double",
		Description: "returns a selected Int64 property as an Edm.Double when the query has $select",
		Breaks:      []string{"query.select.types"},
	}, func(b api.Backend) api.Backend { return selectTypesLost{b} }, hooks{})

	_ = define(Mutant{
		Name:        "property-names-folded",
		Description: "keeps one of several property names that differ only in letter case, as a store with case-insensitive columns",
		Breaks:      []string{"entities.property.name-case"},
	}, func(b api.Backend) api.Backend { return propertyNamesFolded{b} }, hooks{})

	_ = define(Mutant{
		Name:        "insert-etag-strong",
		Description: "answers Insert Entity with the new ETag in its strong form (without W/) while reads show the weak one; If-Match takes either",
		Breaks:      []string{"entities.etag.present", "modify.etag.returned-current"},
	}, func(b api.Backend) api.Backend { return insertETagStrong{b} }, hooks{})
)
