package mutant

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// tableMapper stores each table under the name rename gives it and shows the client's
// name again in Query Tables: a backend whose own naming rules differ from the service's.
type tableMapper struct {
	api.Backend
	rename func(name string) string
	mu     sync.Mutex
	shown  map[string]string // stored name -> the client's name
}

func (m *tableMapper) name(n string) string {
	s := m.rename(n)
	if s != n {
		m.mu.Lock()
		m.shown[s] = n
		m.mu.Unlock()
	}
	return s
}

func (m *tableMapper) CreateTable(ctx context.Context, name string) error {
	return m.Backend.CreateTable(ctx, m.name(name))
}

func (m *tableMapper) DeleteTable(ctx context.Context, name string) error {
	return m.Backend.DeleteTable(ctx, m.name(name))
}

func (m *tableMapper) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	m.mu.Lock()
	for i, t := range p.Tables {
		if n, ok := m.shown[t]; ok {
			p.Tables[i] = n
		}
	}
	m.mu.Unlock()
	return p, err
}

func (m *tableMapper) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	return m.Backend.InsertEntity(ctx, m.name(table), e)
}

func (m *tableMapper) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.Backend.UpdateEntity(ctx, m.name(table), e, mode, ifMatch)
}

func (m *tableMapper) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.Backend.DeleteEntity(ctx, m.name(table), pk, rk, ifMatch)
}

func (m *tableMapper) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	return m.Backend.GetEntity(ctx, m.name(table), pk, rk, sel)
}

func (m *tableMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	return m.Backend.QueryEntities(ctx, m.name(table), q)
}

func (m *tableMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	return m.Backend.SubmitBatch(ctx, m.name(table), ops)
}

// hashedName is a valid table name derived from any string.
func hashedName(prefix, s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%s%016x", prefix, h.Sum64())
}

var validTableName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

type nameLimit struct{ api.Backend }

func (m *nameLimit) CreateTable(ctx context.Context, name string) error {
	if len(name) >= spec.MaxTableNameLength {
		return spec.ErrOutOfRangeInput.New()
	}
	return m.Backend.CreateTable(ctx, name)
}

// listingLag is how far the table listing of table-listing-lags lags behind.
const listingDelay = time.Second

type listingLag struct {
	api.Backend
	mu      sync.Mutex
	created map[string]time.Time // table -> when it was created
	deleted map[string]time.Time // table -> when it was deleted
}

func (m *listingLag) CreateTable(ctx context.Context, name string) error {
	err := m.Backend.CreateTable(ctx, name)
	if err == nil {
		m.mu.Lock()
		m.created[name] = time.Now()
		delete(m.deleted, name)
		m.mu.Unlock()
	}
	return err
}

func (m *listingLag) DeleteTable(ctx context.Context, name string) error {
	err := m.Backend.DeleteTable(ctx, name)
	if err == nil {
		m.mu.Lock()
		m.deleted[name] = time.Now()
		delete(m.created, name)
		m.mu.Unlock()
	}
	return err
}

func (m *listingLag) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	if err != nil {
		return p, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := p.Tables[:0]
	for _, t := range p.Tables {
		if at, ok := m.created[t]; !ok || time.Since(at) >= listingDelay {
			kept = append(kept, t)
		}
	}
	p.Tables = kept
	if p.NextTableName == "" {
		for t, at := range m.deleted {
			if time.Since(at) < listingDelay && (q.Filter == "" || strings.Contains(q.Filter, "'"+t+"'")) {
				p.Tables = append(p.Tables, t)
			}
		}
	}
	return p, nil
}

// softDelete hides deleted tables instead of deleting them (table-soft-delete).
type softDelete struct {
	api.Backend
	mu     sync.Mutex
	hidden map[string]bool // lower-case names
}

func (m *softDelete) isHidden(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hidden[strings.ToLower(name)]
}

func (m *softDelete) CreateTable(ctx context.Context, name string) error {
	m.mu.Lock()
	hidden := m.hidden[strings.ToLower(name)]
	delete(m.hidden, strings.ToLower(name))
	m.mu.Unlock()
	if hidden {
		return nil
	}
	return m.Backend.CreateTable(ctx, name)
}

func (m *softDelete) DeleteTable(ctx context.Context, name string) error {
	if m.isHidden(name) {
		return spec.ErrResourceNotFound.New()
	}
	if _, err := m.Backend.QueryEntities(ctx, name, api.Query{Top: api.TopOf(1)}); err != nil {
		if isCode(err, spec.ErrTableNotFound.Code, spec.ErrResourceNotFound.Code) {
			return spec.ErrResourceNotFound.New()
		}
		return err
	}
	m.mu.Lock()
	m.hidden[strings.ToLower(name)] = true
	m.mu.Unlock()
	return nil
}

func (m *softDelete) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	kept := p.Tables[:0]
	for _, t := range p.Tables {
		if !m.isHidden(t) {
			kept = append(kept, t)
		}
	}
	p.Tables = kept
	return p, err
}

func (m *softDelete) missing(table string) error {
	if m.isHidden(table) {
		return spec.ErrTableNotFound.New()
	}
	return nil
}

func (m *softDelete) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if err := m.missing(table); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *softDelete) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := m.missing(table); err != nil {
		return "", err
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *softDelete) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if err := m.missing(table); err != nil {
		return err
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *softDelete) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	if err := m.missing(table); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.GetEntity(ctx, table, pk, rk, sel)
}

func (m *softDelete) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if err := m.missing(table); err != nil {
		return api.Page{}, err
	}
	return m.Backend.QueryEntities(ctx, table, q)
}

func (m *softDelete) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	if err := m.missing(table); err != nil {
		return nil, err
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

type tablePageMapper struct {
	api.Backend
	fn func(p *api.TablePage)
}

func (m *tablePageMapper) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	if err == nil {
		m.fn(&p)
	}
	return p, err
}

// Tables (EVIDENCE.md 1.1, 1.2).
var (
	_ = define(Mutant{
		Name:        "table-names-lowercased",
		Description: "lists table names in lower case, losing the case they were created with",
		Breaks:      []string{"tables.name.case-preserved"},
	}, func(b api.Backend) api.Backend {
		return &tablePageMapper{Backend: b, fn: func(p *api.TablePage) {
			for i := range p.Tables {
				p.Tables[i] = strings.ToLower(p.Tables[i])
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "table-continuation-dropped",
		Description: "never sends NextTableName: Query Tables ends after its first page",
		Breaks:      []string{"tables.query.paging"},
	}, func(b api.Backend) api.Backend {
		return &tablePageMapper{Backend: b, fn: func(p *api.TablePage) { p.NextTableName = "" }}
	}, hooks{})

	_ = define(Mutant{
		Name:        "table-soft-delete",
		Description: "hides a deleted table instead of deleting it, and shows it again with its entities when the name is created again",
		Breaks:      []string{"tables.delete.fresh-on-reuse", "pattern.high-volume-delete.recreated-empty"},
	}, func(b api.Backend) api.Backend { return &softDelete{Backend: b, hidden: map[string]bool{}} }, hooks{})

	_ = define(Mutant{
		Name:        "table-names-unchecked",
		Description: "accepts any table name (too short, too long, a leading digit, punctuation, the reserved name) by storing it under a name of its own",
		Breaks:      []string{"tables.name.charset", "tables.name.leading-digit", "tables.name.length", "tables.name.reserved"},
	}, func(b api.Backend) api.Backend {
		return &tableMapper{Backend: b, shown: map[string]string{}, rename: func(n string) string {
			if validTableName.MatchString(n) && !strings.EqualFold(n, "tables") {
				return n
			}
			return hashedName("x", n)
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "table-name-max-62",
		Description: "refuses a table name of 63 characters with 400 OutOfRangeInput, taking the limit as exclusive",
		Breaks:      []string{"tables.name.valid"},
	}, func(b api.Backend) api.Backend { return &nameLimit{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "table-listing-lags",
		Description: "lists tables from a snapshot that lags a second behind: new tables are missing and deleted ones still listed",
		Breaks:      []string{"tables.create.listed", "tables.delete.removes"},
	}, func(b api.Backend) api.Backend {
		return &listingLag{Backend: b, created: map[string]time.Time{}, deleted: map[string]time.Time{}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "table-names-case-sensitive",
		Description: "treats table names that differ in letter case as different tables",
		Breaks:      []string{"tables.name.case-insensitive", "tables.name.case-insensitive-access"},
	}, func(b api.Backend) api.Backend {
		return &tableMapper{Backend: b, shown: map[string]string{}, rename: func(n string) string {
			if n == strings.ToLower(n) {
				return n
			}
			return hashedName("c", n)
		}}
	}, hooks{})
)

// tableFilterIgnored answers Query Tables as if no $filter had been sent: every table, as a
// backend whose table listing does not evaluate filters.
type tableFilterIgnored struct{ api.Backend }

func (m tableFilterIgnored) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	q.Filter = ""
	return m.Backend.QueryTables(ctx, q)
}

var _ = define(Mutant{
	Name:        "tables-filter-ignored",
	Description: "ignores $filter on Query Tables: every table is listed",
	Breaks:      []string{"tables.query.filter"},
}, func(b api.Backend) api.Backend { return tableFilterIgnored{b} }, hooks{})
