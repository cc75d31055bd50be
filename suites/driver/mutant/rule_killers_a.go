package mutant

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Single faults for rules whose other mutants only block them: each breaks its rule's own
// subject (batch results and limits, Insert Entity, key order, $select and $top).
var (
	_ = define(Mutant{
		Name:        "batch-limit-index-middle",
		Description: "names the middle operation (50) in the refusal of a transaction over 100 operations",
		Breaks:      []string{"batch.limit.operations-index"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		res, err := b.SubmitBatch(ctx, table, ops)
		if e, ok := driver.AsError(err); ok && len(ops) > spec.MaxBatchOperations {
			return nil, e.AtIndex(len(ops) / 2)
		}
		return res, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-delete-result-etag",
		Description: "gives the result of a delete in a transaction an ETag of its own",
		Breaks:      []string{"batch.results.delete-etag"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		res, err := b.SubmitBatch(ctx, table, ops)
		for i := range res {
			if i < len(ops) && ops[i].Kind == api.BatchDelete && res[i].ETag == "" {
				res[i].ETag = fakeETag(time.Now())
			}
		}
		return res, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "batch-result-etag-stale",
		Description: "answers each write of a transaction with an ETag computed before the write, not the one stored",
		Breaks:      []string{"batch.results.etag"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		res, err := b.SubmitBatch(ctx, table, ops)
		for i := range res {
			if i < len(ops) && ops[i].Kind != api.BatchDelete && res[i].ETag != "" {
				res[i].ETag = fakeETag(time.Now().Add(-time.Hour))
			}
		}
		return res, err
	}), hooks{})

	_ = define(Mutant{
		Name:        "insert-returns-no-timestamp",
		Description: "answers Insert Entity with the stored entity but without its Timestamp",
		Breaks:      []string{"modify.insert.stores"},
	}, func(b api.Backend) api.Backend { return &insertBare{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "insert-resurrects-deleted",
		Description: "keeps the properties of a deleted entity and gives them back to the next entity inserted with its keys",
		Breaks:      []string{"modify.insert.after-delete"},
	}, func(b api.Backend) api.Backend {
		return &resurrectOnInsert{Backend: b, deleted: map[entityKey]map[string]api.Value{}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "paged-pages-descending",
		Description: "returns the entities of each page in descending key order when $top splits the results into pages",
		Breaks:      []string{"ordering.across-pages"},
		AlsoFails: map[string]string{
			"ordering.across-partitions":     "its spec pages a query over several partitions with $top and reads the pages' key order",
			"ordering.inverted-ticks":        "its spec takes the newest entities as the first page of a query with $top",
			"pagination.resume-after-insert": "its spec checks the keys of the pages it follows, in order",
			"pattern.log-tail.newest-first":  "the pattern reads the newest entries as a page of $top=10, newest first",
			"pattern.log-tail.next-page":     "the pattern's next page, of $top=10, must go on with the next newest",
		},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Top.IsSet() {
				slices.Reverse(p.Entities)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "numeric-key-order",
		Description: "sorts each page by keys with their runs of digits compared as numbers (2 before 10)",
		Breaks:      []string{"ordering.zero-padding"},
		AlsoFails: map[string]string{
			"pattern.log-tail.string-order": "the pattern's rule is the same string order of unpadded numbers, seen from its RowKeys of tick counts",
		},
	}, sortPage(func(a, b api.Entity) int {
		if c := compareNatural(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return compareNatural(a.RowKey, b.RowKey)
	}), hooks{})

	_ = define(Mutant{
		Name:        "select-drops-timestamp",
		Description: "leaves Timestamp out of the entities of a query whose $select names it",
		Breaks:      []string{"query.select.system-selected"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if !slices.Contains(q.Select, "Timestamp") {
				return
			}
			mapEntities(p.Entities, func(e *api.Entity) {
				e.Timestamp = time.Time{}
				e.Absent |= api.AbsentTimestamp
			})
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "top-one-short",
		Description: "returns one entity fewer than $top (above 1) in each page, with a continuation to the rest",
		Breaks:      []string{"query.top.fill"},
		AlsoFails: map[string]string{
			"pagination.no-extra-page":      "a page one short of $top leaves the last match to a further page",
			"pattern.log-tail.newest-first": "the pattern's first page of $top=10 must hold the ten newest entries, and holds nine",
			"pattern.log-tail.next-page":    "the pattern's next page of $top=10 holds nine entries, not the next ten newest",
		},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query {
			if n, ok := q.Top.Value(); ok && n > 1 && n <= spec.MaxTop {
				q.Top = api.TopOf(n - 1)
			}
			return q
		}}
	}, hooks{})
)

// fakeETag is an ETag in the service's form for the given time.
func fakeETag(t time.Time) string {
	return `W/"datetime'` + api.FormatDateTime7(t) + `'"`
}

type insertBare struct{ api.Backend }

func (m *insertBare) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		got.Timestamp = time.Time{}
	}
	return got, err
}

// resurrectOnInsert remembers the custom properties of each entity Delete Entity removes and
// adds those the next Insert Entity of the same keys does not send.
type resurrectOnInsert struct {
	api.Backend
	mu      sync.Mutex
	deleted map[entityKey]map[string]api.Value
}

func (m *resurrectOnInsert) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	old, getErr := m.Backend.GetEntity(ctx, table, pk, rk, nil)
	err := m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	if err == nil && getErr == nil {
		m.mu.Lock()
		m.deleted[keyOf(table, pk, rk)] = old.Properties
		m.mu.Unlock()
	}
	return err
}

func (m *resurrectOnInsert) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	k := keyOf(table, e.PartitionKey, e.RowKey)
	m.mu.Lock()
	old, ok := m.deleted[k]
	m.mu.Unlock()
	if ok {
		e = e.Clone()
		if e.Properties == nil {
			e.Properties = map[string]api.Value{}
		}
		for name, v := range old {
			if _, sent := e.Properties[name]; !sent {
				e.Properties[name] = v
			}
		}
	}
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil && ok {
		m.mu.Lock()
		delete(m.deleted, k)
		m.mu.Unlock()
	}
	return got, err
}

// compareNatural compares two keys as the service does (api.CompareKeyStrings) except where
// they first differ inside a run of ASCII digits that both have: there the runs compare as
// numbers.
func compareNatural(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := i
	for start > 0 && isDigit(a[start-1]) {
		start--
	}
	ra, rb := digitRun(a[start:]), digitRun(b[start:])
	if ra > 0 && rb > 0 {
		na, nb := strings.TrimLeft(a[start:start+ra], "0"), strings.TrimLeft(b[start:start+rb], "0")
		if len(na) != len(nb) {
			return len(na) - len(nb)
		}
		if c := strings.Compare(na, nb); c != 0 {
			return c
		}
	}
	return api.CompareKeyStrings(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
