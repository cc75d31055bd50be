package mutant

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
)

// pageMapper rewrites every page of Query Entities, given the query that asked for it.
type pageMapper struct {
	api.Backend
	fn func(q api.Query, p *api.Page)
}

func (m *pageMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil {
		m.fn(q, &p)
	}
	return p, err
}

// queryMapper rewrites every Query Entities request before the wrapped backend sees it.
type queryMapper struct {
	api.Backend
	fn func(q api.Query) api.Query
}

func (m *queryMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	return m.Backend.QueryEntities(ctx, table, m.fn(q))
}

func sortPage(less func(a, b api.Entity) int) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) { slices.SortStableFunc(p.Entities, less) }}
	}
}

// Ordering (EVIDENCE.md 3.2).
var (
	_ = define(Mutant{
		Name:        "reverse-page-order",
		Description: "returns the entities of each page in descending key order",
		Breaks:      []string{"ordering.key-order", "ordering.filtered", "ordering.across-partitions", "ordering.inverted-ticks"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaRelationships},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) { slices.Reverse(p.Entities) }}
	}, hooks{})

	_ = define(Mutant{
		Name:        "rowkey-only-order",
		Description: "sorts each page by RowKey alone, so a page that spans partitions interleaves them",
		Breaks:      []string{"ordering.across-partitions"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, sortPage(func(a, b api.Entity) int { return api.CompareKeyStrings(a.RowKey, b.RowKey) }), hooks{})

	_ = define(Mutant{
		Name:        "case-insensitive-order",
		Description: "sorts each page by keys compared without letter case (B after a)",
		Breaks:      []string{"ordering.ascii"},
	}, sortPage(func(a, b api.Entity) int {
		if c := strings.Compare(strings.ToLower(a.PartitionKey), strings.ToLower(b.PartitionKey)); c != 0 {
			return c
		}
		return strings.Compare(strings.ToLower(a.RowKey), strings.ToLower(b.RowKey))
	}), hooks{})

	_ = define(Mutant{
		Name:        "utf8-byte-order",
		Description: "sorts each page by the UTF-8 bytes of the keys instead of UTF-16 code units: characters above U+FFFF sort after U+E000..U+FFFF",
		Breaks:      []string{"ordering.surrogates"},
	}, sortPage(func(a, b api.Entity) int {
		if c := strings.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return strings.Compare(a.RowKey, b.RowKey)
	}), hooks{})

	_ = define(Mutant{
		Name:        "empty-keys-last",
		Description: "puts entities with an empty PartitionKey or RowKey at the end of their page, as a store that treats the empty string as missing",
		Breaks:      []string{"ordering.empty-partition-key"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) {
			slices.SortStableFunc(p.Entities, func(x, y api.Entity) int {
				ex, ey := x.PartitionKey == "" || x.RowKey == "", y.PartitionKey == "" || y.RowKey == ""
				switch {
				case ex && !ey:
					return 1
				case ey && !ex:
					return -1
				}
				return 0
			})
		}}
	}, hooks{})
)

// $top and $select (EVIDENCE.md 3.3, 3.4).
var (
	_ = define(Mutant{
		Name:        "top-ignored",
		Description: "ignores $top: pages hold up to 1000 entities and invalid values are accepted",
		Breaks:      []string{"query.top.limit", "query.top.negative", "query.top.over-max"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query { q.Top = api.Top{}; return q }}
	}, hooks{})

	_ = define(Mutant{
		Name:        "top-off-by-one",
		Description: "returns $top+1 entities per page (but accepts $top=1000 as it should)",
		Breaks:      []string{"query.top.limit"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query {
			if n, ok := q.Top.Value(); ok && n > 0 && n < spec.MaxTop {
				q.Top = api.TopOf(n + 1)
			}
			return q
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "select-ignored",
		Description: "ignores $select and returns every property",
		Breaks:      []string{"query.select.only", "query.select.system"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaEntities},
	}, func(b api.Backend) api.Backend {
		return &selectIgnored{queryMapper{Backend: b, fn: func(q api.Query) api.Query { q.Select = nil; return q }}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "select-adds-system-properties",
		Description: "always returns PartitionKey, RowKey and Timestamp with a $select, selected or not",
		Breaks:      []string{"query.select.system"},
	}, func(b api.Backend) api.Backend {
		return &selectAddsSystem{Backend: b}
	}, hooks{})

	_ = define(Mutant{
		Name:        "ne-matches-missing",
		Description: "evaluates ne as not eq, so it matches entities that lack the property",
		// Reported live answers leave out an entity that lacks the property for ne with a
		// String literal (E-filter-missing-property), which query.compare.missing asserts;
		// query.filter.case.properties relies on it for a differently cased name.
		Breaks: []string{"query.compare.missing"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query { q.Filter = rewriteNe(q.Filter); return q }}
	}, hooks{})

	_ = define(Mutant{
		Name:        "filter-system-names-case-insensitive",
		Description: "reads PartitionKey, RowKey and Timestamp in a filter in any letter case, as a parser that looks system names up without case, so partitionkey eq 'p' selects by the key",
		Breaks:      []string{"query.filter.case.properties"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query { q.Filter = systemNamesAnyCase(q.Filter); return q }}
	}, hooks{})
)

// systemNamesAnyCase spells every name of filter that differs from PartitionKey, RowKey or
// Timestamp only in letter case as that system name, leaving literals and everything else as
// they were written. It reads the filter with the service's own lexer (odata.Tokens).
func systemNamesAnyCase(filter string) string {
	var b strings.Builder
	last := 0
	for _, t := range odata.Tokens(filter) {
		if t.Kind != odata.TokenWord {
			continue
		}
		for _, name := range []string{"PartitionKey", "RowKey", "Timestamp"} {
			if t.Text != name && strings.EqualFold(t.Text, name) {
				b.WriteString(filter[last:t.Start])
				b.WriteString(name)
				last = t.End
			}
		}
	}
	b.WriteString(filter[last:])
	return b.String()
}

type selectIgnored struct{ queryMapper }

func (s *selectIgnored) GetEntity(ctx context.Context, table, pk, rk string, _ []string) (api.Entity, error) {
	return s.Backend.GetEntity(ctx, table, pk, rk, nil)
}

type selectAddsSystem struct{ api.Backend }

func withSystem(sel []string) []string {
	if sel == nil {
		return nil
	}
	out := slices.Clone(sel)
	for _, n := range []string{"PartitionKey", "RowKey", "Timestamp"} {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func (s *selectAddsSystem) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	q.Select = withSystem(q.Select)
	p, err := s.Backend.QueryEntities(ctx, table, q)
	mapEntities(p.Entities, func(e *api.Entity) { e.Absent = 0 })
	return p, err
}

func (s *selectAddsSystem) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := s.Backend.GetEntity(ctx, table, pk, rk, withSystem(sel))
	e.Absent = 0
	return e, err
}

// rewriteNe turns every "Name ne literal" of an OData filter into "not (Name eq literal)",
// leaving string literals and everything else as they are. It reads the filter with the
// service's own lexer (odata.Tokens).
func rewriteNe(filter string) string {
	toks := odata.Tokens(filter)
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		l, op, r := toks[i], toks[i+1], toks[i+2]
		if op.Text != "ne" || !isIdentifier(l.Text) || r.Kind == odata.TokenOpen || r.Kind == odata.TokenClose || isKeyword(r.Text) {
			continue
		}
		b.WriteString(filter[last:l.Start])
		b.WriteString("not (" + l.Text + " eq " + r.Text + ")")
		last = r.End
		i += 2
	}
	b.WriteString(filter[last:])
	return b.String()
}

func isKeyword(w string) bool {
	switch w {
	case "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le":
		return true
	}
	return false
}

// isIdentifier says w is one property name, as the service's filter lexer reads it.
func isIdentifier(w string) bool {
	if isKeyword(w) || w == "true" || w == "false" || w == "null" {
		return false
	}
	toks := odata.Tokens(w)
	return len(toks) == 1 && toks[0].Kind == odata.TokenWord && toks[0].Text == w
}

// Pagination (EVIDENCE.md 3.5).
var (
	_ = define(Mutant{
		Name:        "continuation-dropped",
		Description: "never sends the continuation headers: every query ends after its first page",
		Breaks:      []string{"pagination.continuation", "pagination.exactly-once", "query.top.limit"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) { p.Continuation = api.Continuation{} }}
	}, hooks{})

	_ = define(Mutant{
		Name:        "continuation-dropped-at-partition-boundary",
		Description: "drops the continuation when the next page would start a new partition, as a server that resumes within one partition only",
		Breaks:      []string{"pagination.exactly-once"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend { return &boundaryDrop{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "continuation-repeats-boundary",
		Description: "resumes a continued query at the last entity of the previous page, returning it twice",
		Breaks:      []string{"pagination.exactly-once"},
	}, func(b api.Backend) api.Backend { return &repeatBoundary{Backend: b, last: map[contKey]api.Entity{}} }, hooks{})

	_ = define(Mutant{
		Name:        "continuation-skips-one",
		Description: "resumes a continued query one entity too far, losing the first entity of every later page",
		Breaks:      []string{"pagination.exactly-once"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		return &skipOne{Backend: b}
	}, hooks{})

	_ = define(Mutant{
		Name:        "options-lost-on-continuation",
		Description: "applies $filter and $select to the first page only; continued pages return every entity after the position",
		Breaks:      []string{"pagination.options-resent"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query {
			if !q.Continuation.IsZero() {
				q.Filter, q.Select = "", nil
			}
			return q
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "page-cap-exceeded",
		Description: "joins a full 1000-entity page with the next one when no $top is given",
		Breaks:      []string{"pagination.page-cap"},
	}, func(b api.Backend) api.Backend { return &joinPages{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "extra-empty-page",
		Description: "gives every last page that holds entities a continuation that leads to an empty page",
		Breaks:      []string{"pagination.no-extra-page"},
	}, func(b api.Backend) api.Backend { return &extraPage{Backend: b} }, hooks{})
)

type boundaryDrop struct{ api.Backend }

func (m *boundaryDrop) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || p.Continuation.IsZero() || len(p.Entities) == 0 {
		return p, err
	}
	peek := q
	peek.Top, peek.Continuation = api.TopOf(1), p.Continuation
	next, err := m.Backend.QueryEntities(ctx, table, peek)
	if err == nil && len(next.Entities) > 0 && next.Entities[0].PartitionKey != p.Entities[len(p.Entities)-1].PartitionKey {
		p.Continuation = api.Continuation{}
	}
	return p, nil
}

type contKey struct {
	table string
	c     api.Continuation
}

type repeatBoundary struct {
	api.Backend
	mu   sync.Mutex
	last map[contKey]api.Entity
}

func (m *repeatBoundary) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	m.mu.Lock()
	boundary, repeat := m.last[contKey{strings.ToLower(table), q.Continuation}]
	m.mu.Unlock()
	inner := q
	if repeat {
		n, ok := q.Top.Value()
		switch {
		case ok && n <= 1:
			repeat = false
		case ok:
			inner.Top = api.TopOf(n - 1)
		default:
			inner.Top = api.TopOf(spec.MaxPageSize - 1)
		}
	}
	p, err := m.Backend.QueryEntities(ctx, table, inner)
	if err != nil {
		return p, err
	}
	if repeat {
		p.Entities = append([]api.Entity{boundary.Clone()}, p.Entities...)
	}
	if !p.Continuation.IsZero() && len(p.Entities) > 0 {
		m.mu.Lock()
		m.last[contKey{strings.ToLower(table), p.Continuation}] = p.Entities[len(p.Entities)-1].Clone()
		m.mu.Unlock()
	}
	return p, nil
}

type skipOne struct{ api.Backend }

func (m *skipOne) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil && !q.Continuation.IsZero() && len(p.Entities) > 0 {
		p.Entities = p.Entities[1:]
	}
	return p, err
}

type joinPages struct{ api.Backend }

func (m *joinPages) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || q.Top.IsSet() || len(p.Entities) < spec.MaxPageSize || p.Continuation.IsZero() {
		return p, err
	}
	next := q
	next.Continuation = p.Continuation
	more, err := m.Backend.QueryEntities(ctx, table, next)
	if err != nil {
		return p, nil
	}
	p.Entities = append(p.Entities, more.Entities...)
	p.Continuation = more.Continuation
	return p, nil
}

// extraPageToken is the made-up continuation of extra-empty-page.
var extraPageToken = api.Continuation{NextPartitionKey: "1!4!ZW5k", NextRowKey: "1!4!ZW5k"}

type extraPage struct{ api.Backend }

func (m *extraPage) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if q.Continuation == extraPageToken {
		return api.Page{Entities: []api.Entity{}}, nil
	}
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil && p.Continuation.IsZero() && len(p.Entities) > 0 {
		p.Continuation = extraPageToken
	}
	return p, err
}
