package mutant

import (
	"context"
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Pagination faults (EVIDENCE.md 3.5), one for each rule whose own subject no other mutant
// breaks: a page short of the cap, a short page, a page ended at a partition boundary or
// matches ended on a $top boundary whose continuation is refused, and saved continuations
// that resume over what the query matched when they were issued.
var (
	_ = define(Mutant{
		Name:        "page-one-short-of-cap",
		Description: "returns at most 999 entities a page when no $top is given, one short of the cap",
		Breaks:      []string{"pagination.page-full"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query {
			if !q.Top.IsSet() {
				q.Top = api.TopOf(spec.MaxPageSize - 1)
			}
			return q
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "short-page-continuation-refused",
		Description: "returns the first page of a $top query one entity short when it lies in one partition and the next page would reach into another, and answers 500 InternalError to that page's continuation",
		Breaks:      []string{"pagination.short-pages"},
		AlsoFails: refusedContinuationFails("its spec pages with a $top whose first page lies in one partition and is followed by one that reaches into the next: the mutant cuts the first page short and refuses its continuation, so the query cannot be followed to its end",
			"ordering.across-partitions",
			"pagination.continuation",
			"pagination.exactly-once",
			"pagination.options-resent",
			"pattern.log-data.scan",
		),
	}, func(b api.Backend) api.Backend { return &refusedContinuation{Backend: b, cut: shortFirstPage} }, hooks{})

	_ = define(Mutant{
		Name:        "partition-boundary-continuation-refused",
		Description: "ends the first page of a $top query at the first partition boundary it would cross, and answers 500 InternalError to that page's continuation",
		Breaks:      []string{"pagination.partition-boundary"},
		AlsoFails: refusedContinuationFails("its spec pages with a $top whose first page crosses a partition boundary: the mutant ends that page at the boundary and refuses its continuation, so the query cannot be followed to its end",
			"ordering.across-partitions",
			"pagination.exactly-once",
			"pagination.resume-after-insert",
			"pattern.impl.saved-continuation",
			"pattern.impl.segments",
		),
	}, func(b api.Backend) api.Backend { return &refusedContinuation{Backend: b, cut: firstPartitionOfPage} }, hooks{})

	_ = define(Mutant{
		Name:        "top-boundary-continuation-refused",
		Description: "gives a full $top page that holds the last matches a continuation, and answers 500 InternalError to it",
		Breaks:      []string{"pagination.top-boundary"},
		AlsoFails: refusedContinuationFails("its spec pages with a $top whose matches end on a page boundary: the mutant gives the last page a continuation and refuses it, so the query cannot be followed to its end",
			"ordering.across-pages",
			"ordering.across-partitions",
			"pagination.continuation",
			"pagination.exactly-once",
			"pagination.options-resent",
			"pagination.resume",
			"pagination.resume-after-delete",
			"pagination.resume-after-insert",
			"pagination.resume-reads-current",
			"pattern.log-data.scan",
			"pattern.log-tail.next-page",
		),
	}, func(b api.Backend) api.Backend { return &topBoundaryRefused{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "resume-returns-earlier-inserts",
		Description: "returns, with the first page a saved continuation resumes, the matches inserted before its position since it was issued",
		Breaks:      []string{"pagination.resume-after-insert"},
	}, func(b api.Backend) api.Backend {
		return &resumeSnapshot{Backend: b, issued: map[contKey]map[api.Key]api.Entity{}, before: true}
	}, hooks{})

	_ = define(Mutant{
		Name:        "resume-reads-stale-values",
		Description: "resumes a saved continuation with the values its matches had when it was issued: an entity updated ahead of its position since comes back as it was",
		Breaks:      []string{"pagination.resume-reads-current"},
	}, func(b api.Backend) api.Backend {
		return &resumeSnapshot{Backend: b, issued: map[contKey]map[api.Key]api.Entity{}}
	}, hooks{})
)

// refusedContinuationFails gives each of rules the one reason why it fails against a
// mutant that refuses a continuation it gave.
func refusedContinuationFails(reason string, rules ...string) map[string]string {
	out := make(map[string]string, len(rules))
	for _, r := range rules {
		out[r] = reason
	}
	return out
}

// shortFirstPage returns how many entities of the first page of a $top query the
// short-page mutant keeps: one fewer than $top when the page lies in one partition and the
// next page would reach into another.
func shortFirstPage(ctx context.Context, b api.Backend, table string, q api.Query, p api.Page) (int, bool) {
	n, ok := q.Top.Value()
	if !ok || n < 2 || !q.Continuation.IsZero() || len(p.Entities) < n || p.Continuation.IsZero() {
		return 0, false
	}
	pk := p.Entities[0].PartitionKey
	if p.Entities[len(p.Entities)-1].PartitionKey != pk {
		return 0, false
	}
	next := q
	next.Continuation = p.Continuation
	more, err := b.QueryEntities(ctx, table, next)
	if err != nil || len(more.Entities) == 0 || more.Entities[len(more.Entities)-1].PartitionKey == pk {
		return 0, false
	}
	return n - 1, true
}

// firstPartitionOfPage returns how many entities of the first page of a $top query lie in
// its first partition, when the page crosses into another.
func firstPartitionOfPage(_ context.Context, _ api.Backend, _ string, q api.Query, p api.Page) (int, bool) {
	if !q.Top.IsSet() || !q.Continuation.IsZero() {
		return 0, false
	}
	for i := 1; i < len(p.Entities); i++ {
		if p.Entities[i].PartitionKey != p.Entities[0].PartitionKey {
			return i, true
		}
	}
	return 0, false
}

// refusedContinuation cuts a page to the entities cut keeps and answers 500 InternalError
// when the continuation of such a cut page comes back.
type refusedContinuation struct {
	api.Backend
	cut     func(ctx context.Context, b api.Backend, table string, q api.Query, p api.Page) (int, bool)
	mu      sync.Mutex
	refused map[contKey]bool
}

func (m *refusedContinuation) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	key := contKey{strings.ToLower(table), q.Continuation}
	m.mu.Lock()
	refuse := m.refused[key]
	m.mu.Unlock()
	if refuse {
		return api.Page{}, spec.ErrInternalError.New()
	}
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil {
		return p, err
	}
	keep, ok := m.cut(ctx, m.Backend, table, q, p)
	if !ok {
		return p, nil
	}
	shorter := q
	shorter.Top = api.TopOf(keep)
	p, err = m.Backend.QueryEntities(ctx, table, shorter)
	if err != nil || p.Continuation.IsZero() {
		return p, err
	}
	m.mu.Lock()
	if m.refused == nil {
		m.refused = map[contKey]bool{}
	}
	m.refused[contKey{strings.ToLower(table), p.Continuation}] = true
	m.mu.Unlock()
	return p, nil
}

// topBoundaryToken is the made-up continuation of top-boundary-continuation-refused.
var topBoundaryToken = api.Continuation{NextPartitionKey: "1!4!dG9w", NextRowKey: "1!4!dG9w"}

type topBoundaryRefused struct{ api.Backend }

func (m *topBoundaryRefused) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if q.Continuation == topBoundaryToken {
		return api.Page{}, spec.ErrInternalError.New()
	}
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if n, ok := q.Top.Value(); err == nil && ok && n > 0 && len(p.Entities) == n && p.Continuation.IsZero() {
		p.Continuation = topBoundaryToken
	}
	return p, err
}

// resumeSnapshot remembers, for each continuation it issues, the query's matches at that
// moment. With before set, a resumed first page also returns the matches before the
// position that were not among them; otherwise a resumed page returns each entity that was
// among them as it was then.
type resumeSnapshot struct {
	api.Backend
	before bool
	mu     sync.Mutex
	issued map[contKey]map[api.Key]api.Entity
}

func (m *resumeSnapshot) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil {
		return p, err
	}
	m.mu.Lock()
	known, resumed := m.issued[contKey{strings.ToLower(table), q.Continuation}]
	m.mu.Unlock()
	switch {
	case resumed && m.before:
		earlier, err := m.matches(ctx, table, q)
		if err != nil {
			return p, err
		}
		var added []api.Entity
		for _, e := range earlier {
			if len(p.Entities) > 0 && !e.Key().Less(p.Entities[0].Key()) {
				break
			}
			if _, ok := known[e.Key()]; !ok {
				added = append(added, e)
			}
		}
		p.Entities = append(added, p.Entities...)
	case resumed:
		for i, e := range p.Entities {
			if then, ok := known[e.Key()]; ok {
				p.Entities[i] = then.Clone()
			}
		}
	}
	if p.Continuation.IsZero() {
		return p, nil
	}
	snapshot := known
	if !resumed || m.before {
		// A resumed snapshot read carries its snapshot on to the next continuation.
		now, err := m.matches(ctx, table, q)
		if err != nil {
			return p, err
		}
		snapshot = make(map[api.Key]api.Entity, len(now))
		for _, e := range now {
			snapshot[e.Key()] = e.Clone()
		}
	}
	m.mu.Lock()
	m.issued[contKey{strings.ToLower(table), p.Continuation}] = snapshot
	m.mu.Unlock()
	return p, nil
}

// matches returns every current match of q's filter, from the start, in pages of the
// wrapped backend.
func (m *resumeSnapshot) matches(ctx context.Context, table string, q api.Query) ([]api.Entity, error) {
	var out []api.Entity
	next := api.Query{Filter: q.Filter, Select: q.Select}
	for {
		p, err := m.Backend.QueryEntities(ctx, table, next)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Entities...)
		if p.Continuation.IsZero() {
			return out, nil
		}
		next.Continuation = p.Continuation
	}
}
