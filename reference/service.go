package reference

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// Service is the whole Table service of one account, in memory. It satisfies api.Backend;
// its methods are safe for concurrent use and deterministic given the clock.
type Service struct {
	clock                  func() time.Time
	deleteHold             time.Duration
	partitionBoundaryPages bool
	propertyLimits         PropertyLimits
	caseSensitiveNames     bool

	names       *store.Names // property names, for every table
	storeConfig store.Config // the production tuning; tests narrow it
	lastTick    atomic.Int64

	mu       sync.RWMutex
	tables   map[string]*table    // live tables by tableKey; guarded by mu
	deleting map[string]time.Time // tableKey -> end of its delete hold; guarded by mu

	// published is a copy of tables, replaced whenever tables changes, so that entity
	// operations find their table without taking mu.
	published atomic.Pointer[map[string]*table]
	// lastFound is the table lookup found last: most requests name the table the one
	// before named.
	lastFound atomic.Pointer[foundTable]
	// lastETag is the text of the ETags of the second of the last write (appendETagOf).
	lastETag atomic.Pointer[etagSecond]
}

// foundTable is a table lookup found by the name it was asked by, in the published map of
// tables it was found in: it is that name's table while that map is the one published.
type foundTable struct {
	published *map[string]*table
	name      string
	t         *table
}

var _ api.Backend = (*Service)(nil)

// table is one table: its name as created, and its entities (a store.Table) behind a
// read-write lock. Every field but name is guarded by mu.
type table struct {
	name string

	mu       sync.RWMutex
	dropped  bool // set when the table is deleted
	entities *store.Table
}

func (s *Service) newTable(name string) *table {
	return &table{name: name, entities: store.NewTable(s.names, s.storeConfig)}
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock from which Timestamps are taken (default time.Now). Timestamps
// are max(clock(), last + 100 ns), so they increase strictly even when the clock stalls.
func WithClock(clock func() time.Time) Option {
	return func(s *Service) { s.clock = clock }
}

// WithDeleteHold sets how long a deleted table's name stays in the TableBeingDeleted state
// (default spec.DefaultTableDeleteHold; 0 frees the name at once).
func WithDeleteHold(d time.Duration) Option {
	return func(s *Service) { s.deleteHold = d }
}

// WithPartitionBoundaryPages makes a query page end where the PartitionKey changes, as
// Storage MAY do when a query crosses a partition (server) boundary (EVIDENCE.md 3.5). Off by
// default.
func WithPartitionBoundaryPages(on bool) Option {
	return func(s *Service) { s.partitionBoundaryPages = on }
}

// PropertyLimits bound an entity's custom properties: how many it may have and how long a
// name may be (in UTF-16 units; 0: no bound). The default is Storage's
// (spec.MaxCustomProperties, spec.MaxPropertyNameLength).
type PropertyLimits struct {
	MaxCustomProperties   int
	MaxPropertyNameLength int
}

// WithPropertyLimits replaces Storage's property limits, as the Cosmos flavour does with
// spec.CosmosMaxCustomProperties and spec.CosmosMaxPropertyNameLength. A count above what the
// store can hold (store.MaxProperties) is cut to it.
func WithPropertyLimits(l PropertyLimits) Option {
	return func(s *Service) {
		l.MaxCustomProperties = min(l.MaxCustomProperties, store.MaxProperties)
		s.propertyLimits = l
	}
}

// WithCaseSensitiveTableNames makes table names case-sensitive, as Cosmos DB for Table
// documents them (EVIDENCE.md E-cosmos-documented): a name that differs from an existing
// table's only in case creates another table, and a table is reached only through the name
// it was created with. Off by default: Storage's names are case-insensitive (EVIDENCE.md 2.2).
func WithCaseSensitiveTableNames(on bool) Option {
	return func(s *Service) { s.caseSensitiveNames = on }
}

// CosmosOptions are the options under which the model holds what Cosmos DB for Table
// documents differently from Storage: its property limits (spec.CosmosMaxCustomProperties,
// spec.CosmosMaxPropertyNameLength) and case-sensitive table names.
func CosmosOptions() []Option {
	return []Option{
		WithPropertyLimits(PropertyLimits{MaxCustomProperties: spec.CosmosMaxCustomProperties,
			MaxPropertyNameLength: spec.CosmosMaxPropertyNameLength}),
		WithCaseSensitiveTableNames(true),
	}
}

// New returns an empty Service.
func New(opts ...Option) *Service {
	s := &Service{
		clock:      time.Now,
		deleteHold: spec.DefaultTableDeleteHold,
		propertyLimits: PropertyLimits{MaxCustomProperties: spec.MaxCustomProperties,
			MaxPropertyNameLength: spec.MaxPropertyNameLength},
		names:    store.NewNames(),
		tables:   map[string]*table{},
		deleting: map[string]time.Time{},
	}
	for _, o := range opts {
		o(s)
	}
	s.publishTables()
	return s
}

// publishTables publishes a copy of s.tables; the caller holds s.mu for writing (or owns s).
func (s *Service) publishTables() {
	m := maps.Clone(s.tables)
	s.published.Store(&m)
}

// nextTick returns the Timestamp of the next write, in ticks: max(now, last + 1 tick).
// Callers hold the written table's lock, so an entity's Timestamp only ever grows.
func (s *Service) nextTick() int64 {
	now := api.Ticks(s.clock())
	for {
		last := s.lastTick.Load()
		next := max(now, last+1)
		if s.lastTick.CompareAndSwap(last, next) {
			return next
		}
	}
}

// lowerName returns the ASCII lower case of a table name. Names are ASCII (DM).
func lowerName(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(name)
		}
	}
	return name
}

// tableKey returns the key of a table name in s.tables and s.deleting: the name itself when
// names are case-sensitive, else its lower case.
func (s *Service) tableKey(name string) string {
	if s.caseSensitiveNames {
		return name
	}
	return lowerName(name)
}

// lookup returns the live table called name (in any case, unless names are case-sensitive),
// or nil.
func (s *Service) lookup(name string) *table {
	published := s.published.Load()
	if f := s.lastFound.Load(); f != nil && f.published == published && f.name == name {
		return f.t
	}
	t := findTable(*published, name, s.caseSensitiveNames)
	if t != nil {
		s.lastFound.Store(&foundTable{published: published, name: strings.Clone(name), t: t})
	}
	return t
}

// findTable returns the table called name in tables, keyed by tableKey, or nil.
func findTable(tables map[string]*table, name string, caseSensitive bool) *table {
	if caseSensitive {
		return tables[name]
	}
	var buf [spec.MaxTableNameLength]byte
	if len(name) > len(buf) {
		return nil
	}
	b := buf[:len(name)]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return tables[string(b)]
}

// openTable returns the table an entity operation addresses, or 404 TableNotFound.
func (s *Service) openTable(name string) (*table, *spec.Error) {
	if t := s.lookup(name); t != nil {
		return t, nil
	}
	return nil, spec.ErrTableNotFound.New()
}

// CreateTable creates a table (EVIDENCE.md 2.2): 400 for an invalid or reserved name, 409
// TableAlreadyExists when a table of that name exists in any case (in that case only, with
// WithCaseSensitiveTableNames), 409 TableBeingDeleted during the delete hold of that name.
func (s *Service) CreateTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTableName(name); err != nil {
		return err
	}
	key := s.tableKey(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[key]; ok {
		return spec.ErrTableAlreadyExists.New()
	}
	if until, ok := s.deleting[key]; ok {
		if s.clock().Before(until) {
			return spec.ErrTableBeingDeleted.New()
		}
		delete(s.deleting, key)
	}
	s.tables[key] = s.newTable(name)
	s.publishTables()
	return nil
}

// DeleteTable deletes a table and its entities: 404 ResourceNotFound when there is none
// (CONFIRMED-TRAFFIC, not TableNotFound). The name stays unavailable for the delete hold.
func (s *Service) DeleteTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := s.tableKey(name)
	s.mu.Lock()
	t, ok := s.tables[key]
	if !ok {
		s.mu.Unlock()
		return spec.ErrResourceNotFound.New()
	}
	delete(s.tables, key)
	s.publishTables()
	if s.deleteHold > 0 {
		s.deleting[key] = s.clock().Add(s.deleteHold)
	}
	s.mu.Unlock()

	t.mu.Lock()
	t.dropped = true
	t.entities.Reset()
	t.mu.Unlock()
	return nil
}

// QueryTables lists tables one page at a time (EVIDENCE.md 2.2, QT): $filter over TableName,
// $top per page (1..1000), at most 1000 per page, NextTableName to resume.
func (s *Service) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	if err := ctx.Err(); err != nil {
		return api.TablePage{}, err
	}
	limit, err := pageLimit(q.Top)
	if err != nil {
		return api.TablePage{}, err
	}
	match, err := compileTableFilter(q.Filter)
	if err != nil {
		return api.TablePage{}, err
	}
	from := ""
	if q.NextTableName != "" {
		if from, err = decodeTableToken(q.NextTableName); err != nil {
			return api.TablePage{}, errBadContinuation()
		}
	}

	type entry struct{ key, name string }
	s.mu.RLock()
	all := make([]entry, 0, len(s.tables))
	for key, t := range s.tables {
		if key >= from {
			all = append(all, entry{key, t.name})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.key, b.key) })

	page := api.TablePage{Tables: []string{}}
	for _, e := range all {
		if match != nil && !match(e.name) {
			continue
		}
		if len(page.Tables) == limit {
			page.NextTableName = encodeTableToken(e.key)
			break
		}
		page.Tables = append(page.Tables, e.name)
	}
	return page, nil
}
