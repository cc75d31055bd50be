package mutant

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// neighbourTables are the tables that other clients of the account keep, as the
// tables-filter-ignored mutant lists them: names no spec of the run creates.
var neighbourTables = []string{"othersInvoices", "othersOrders"}

// filterIgnored answers Query Tables without its $filter: every table of the account in name
// order, the neighbours' among them, paged by $top and NextTableName (tables-filter-ignored).
type filterIgnored struct {
	api.Backend
}

func (m *filterIgnored) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	all := slices.Clone(neighbourTables)
	next := ""
	for {
		p, err := m.Backend.QueryTables(ctx, api.TableQuery{NextTableName: next})
		if err != nil {
			return api.TablePage{}, err
		}
		all = append(all, p.Tables...)
		if p.NextTableName == "" || p.NextTableName == next {
			break
		}
		next = p.NextTableName
	}
	slices.SortFunc(all, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	var page api.TablePage
	for _, t := range all {
		if q.NextTableName != "" && strings.ToLower(t) < strings.ToLower(q.NextTableName) {
			continue
		}
		if q.Top > 0 && len(page.Tables) == q.Top {
			page.NextTableName = t
			break
		}
		page.Tables = append(page.Tables, t)
	}
	return page, nil
}

// accountRollback gives a failed transaction the rollback of an emulator that keeps the
// whole account in one in-memory database and, when a transaction fails, reloads the copy
// of that database it saved at its last committed transaction: the failed transaction's
// own table is restored correctly, but every other table also goes back to that copy, and
// the writes made to it since are lost (batch-failure-rolls-back-account).
type accountRollback struct {
	api.Backend
	mu    sync.Mutex
	saved map[string][]api.Entity // lower-case table name -> its entities at the last commit
}

func (m *accountRollback) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	if err == nil {
		if saved, serr := m.snapshot(ctx); serr == nil {
			m.saved = saved
		}
		return rs, nil
	}
	for name, entities := range m.saved {
		if !strings.EqualFold(name, table) {
			m.restore(ctx, name, entities)
		}
	}
	return rs, err
}

// snapshot reads every table of the account with all its entities.
func (m *accountRollback) snapshot(ctx context.Context) (map[string][]api.Entity, error) {
	out := map[string][]api.Entity{}
	next := ""
	for {
		p, err := m.Backend.QueryTables(ctx, api.TableQuery{NextTableName: next})
		if err != nil {
			return nil, err
		}
		for _, t := range p.Tables {
			entities, err := m.entities(ctx, t)
			if e, ok := driver.AsError(err); ok && e.Status == 404 {
				continue // deleted since it was listed, by another client of the account
			}
			if err != nil {
				return nil, err
			}
			out[strings.ToLower(t)] = entities
		}
		if p.NextTableName == "" || p.NextTableName == next {
			return out, nil
		}
		next = p.NextTableName
	}
}

func (m *accountRollback) entities(ctx context.Context, table string) ([]api.Entity, error) {
	var out []api.Entity
	q := api.Query{}
	for {
		p, err := m.Backend.QueryEntities(ctx, table, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Entities...)
		if p.Continuation.IsZero() {
			return out, nil
		}
		q.Continuation = p.Continuation
	}
}

// restore makes table hold exactly entities again, where the table still exists.
func (m *accountRollback) restore(ctx context.Context, table string, entities []api.Entity) {
	now, err := m.entities(ctx, table)
	if err != nil {
		return
	}
	keep := map[[2]string]bool{}
	for _, e := range entities {
		keep[[2]string{e.PartitionKey, e.RowKey}] = true
		_, _ = m.Backend.UpdateEntity(ctx, table, e, api.Replace, "")
	}
	for _, e := range now {
		if !keep[[2]string{e.PartitionKey, e.RowKey}] {
			_ = m.Backend.DeleteEntity(ctx, table, e.PartitionKey, e.RowKey, api.IfMatchAny)
		}
	}
}

// Isolation of tables (EVIDENCE.md 1.1, 4).
var (
	_ = define(Mutant{
		Name:        "tables-filter-ignored",
		Description: "ignores $filter in Query Tables and lists every table of the account, other clients' tables among them",
		Breaks:      []string{"tables.query.filter"},
	}, func(b api.Backend) api.Backend { return &filterIgnored{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "batch-failure-rolls-back-account",
		Description: "when a transaction fails, puts every other table of the account back as it was at the last committed transaction, losing the writes made to them since",
		Breaks:      []string{"tables.isolation"},
	}, func(b api.Backend) api.Backend { return &accountRollback{Backend: b} }, hooks{})
)
