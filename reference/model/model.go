package model

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
)

// Model is the Table service of one account as maps: a map of tables, each a map of
// entities by key, sorted on every query. One mutex guards it all.
type Model struct {
	clock         func() time.Time
	deleteHold    time.Duration
	boundaryPages bool
	limits        reference.PropertyLimits
	caseSensitive bool // table names as created, not in any case

	mu       sync.Mutex
	lastTick int64                // the Timestamp of the last write, in ticks
	tables   map[string]*table    // by tableKey
	deleting map[string]time.Time // tableKey -> end of its delete hold
}

var _ api.Backend = (*Model)(nil)

// table is one table: its name as created and its entities as stored (with Timestamp and
// ETag, without null properties).
type table struct {
	name string
	rows map[api.Key]api.Entity
}

// Option configures a Model.
type Option func(*Model)

// WithClock sets the clock from which Timestamps are taken (default time.Now). Timestamps
// are max(clock(), last + 100 ns), as reference.WithClock says.
func WithClock(clock func() time.Time) Option { return func(m *Model) { m.clock = clock } }

// WithDeleteHold sets how long a deleted table's name stays in the TableBeingDeleted state
// (default spec.DefaultTableDeleteHold).
func WithDeleteHold(d time.Duration) Option { return func(m *Model) { m.deleteHold = d } }

// WithPartitionBoundaryPages ends a query page where the PartitionKey changes, as
// reference.WithPartitionBoundaryPages does.
func WithPartitionBoundaryPages(on bool) Option {
	return func(m *Model) { m.boundaryPages = on }
}

// WithPropertyLimits replaces Storage's property limits, as reference.WithPropertyLimits does.
func WithPropertyLimits(l reference.PropertyLimits) Option {
	return func(m *Model) { m.limits = l }
}

// WithCaseSensitiveTableNames keys tables by their names as created, as
// reference.WithCaseSensitiveTableNames does (Cosmos DB for Table).
func WithCaseSensitiveTableNames(on bool) Option {
	return func(m *Model) { m.caseSensitive = on }
}

// CosmosOptions are the options of reference.CosmosOptions: Cosmos DB for Table's property
// limits and case-sensitive table names.
func CosmosOptions() []Option {
	return []Option{
		WithPropertyLimits(reference.PropertyLimits{MaxCustomProperties: spec.CosmosMaxCustomProperties,
			MaxPropertyNameLength: spec.CosmosMaxPropertyNameLength}),
		WithCaseSensitiveTableNames(true),
	}
}

// New returns an empty Model.
func New(opts ...Option) *Model {
	m := &Model{clock: time.Now, deleteHold: spec.DefaultTableDeleteHold,
		limits: reference.DefaultPropertyLimits(),
		tables: map[string]*table{}, deleting: map[string]time.Time{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// stamp gives e the next Timestamp, max(now, last + 1 tick), and the ETag made from it:
// W/"datetime'<Timestamp with seven digits, ':' as %3A>'" (EVIDENCE.md 2.4).
func (m *Model) stamp(e *api.Entity) {
	m.lastTick = max(api.Ticks(m.clock()), m.lastTick+1)
	e.Timestamp = api.TimeOfTicks(m.lastTick)
	e.ETag = `W/"datetime'` + strings.ReplaceAll(api.FormatDateTime7(e.Timestamp), ":", "%3A") + `'"`
}

// tableKey is the key of a table name in tables and deleting: the name itself when names
// are case-sensitive, else its ASCII lower case. Table names are ASCII
// (reference.CheckTableName); a name that is not matches none, even where its Unicode lower
// case would (the Kelvin sign lowers to 'k').
func (m *Model) tableKey(name string) string {
	if m.caseSensitive {
		return name
	}
	return strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// table returns the live table called name (in any case, unless names are case-sensitive),
// or 404 TableNotFound.
func (m *Model) table(name string) (*table, *spec.Error) {
	if t, ok := m.tables[m.tableKey(name)]; ok {
		return t, nil
	}
	return nil, spec.ErrTableNotFound.New()
}

// CreateTable creates a table: 409 TableAlreadyExists for a name taken (in any case, unless
// names are case-sensitive), 409 TableBeingDeleted during the delete hold of the name.
func (m *Model) CreateTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := reference.CheckTableName(name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.tableKey(name)
	if _, ok := m.tables[key]; ok {
		return spec.ErrTableAlreadyExists.New()
	}
	if until, ok := m.deleting[key]; ok && m.clock().Before(until) {
		return spec.ErrTableBeingDeleted.New()
	}
	delete(m.deleting, key)
	m.tables[key] = &table{name: name, rows: map[api.Key]api.Entity{}}
	return nil
}

// DeleteTable deletes a table and its entities: 404 ResourceNotFound when there is none.
func (m *Model) DeleteTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.tableKey(name)
	if _, ok := m.tables[key]; !ok {
		return spec.ErrResourceNotFound.New()
	}
	delete(m.tables, key)
	if m.deleteHold > 0 {
		m.deleting[key] = m.clock().Add(m.deleteHold)
	}
	return nil
}

// QueryTables lists the tables in the order of their keys (tableKey), a page at a time.
func (m *Model) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	if err := ctx.Err(); err != nil {
		return api.TablePage{}, err
	}
	limit, err := reference.TablePageLimit(q.Top)
	if err != nil {
		return api.TablePage{}, err
	}
	var filter *odata.Filter
	if strings.TrimSpace(q.Filter) != "" {
		if filter, err = odata.ParseTableFilter(q.Filter); err != nil {
			return api.TablePage{}, err
		}
	}
	from := ""
	if q.NextTableName != "" {
		if from, err = reference.DecodeTableToken(q.NextTableName); err != nil {
			return api.TablePage{}, reference.ErrBadContinuation()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	page := api.TablePage{Tables: []string{}}
	for _, key := range slices.Sorted(maps.Keys(m.tables)) {
		name := m.tables[key].name
		if key < from || (filter != nil && !filter.MatchTable(name)) {
			continue
		}
		if len(page.Tables) == limit {
			page.NextTableName = reference.EncodeTableToken(key)
			break
		}
		page.Tables = append(page.Tables, name)
	}
	return page, nil
}

// stored returns the properties of e that are kept (reference.StoredProperty), a Guid in
// lower case as the reference reads it back.
func stored(props map[string]api.Value) map[string]api.Value {
	out := map[string]api.Value{}
	for name, v := range props {
		if !reference.StoredProperty(name, v) {
			continue
		}
		if v.Type == api.EdmGuid {
			v = api.Guid(strings.ToLower(v.Str))
		}
		out[name] = v
	}
	return out
}

// write stores e in rows as mode and ifMatch say (reference/writes.go has the table of
// outcomes): insert refuses an existing entity; otherwise ifMatch "" upserts, "*" needs an
// entity, an ETag needs that version. It returns the entity stored.
func (m *Model) write(rows map[api.Key]api.Entity, e api.Entity, insert bool, mode api.UpdateMode, ifMatch string) (api.Entity, *spec.Error) {
	cur, found := rows[e.Key()]
	switch {
	case insert && found:
		return api.Entity{}, spec.ErrEntityAlreadyExists.New()
	case !insert && !found && ifMatch == api.IfMatchAny:
		return api.Entity{}, spec.ErrResourceNotFound.New()
	case !insert && !found && ifMatch != "":
		return api.Entity{}, reference.ErrConditionalMissing()
	case found && !insert && ifMatch != "" && ifMatch != api.IfMatchAny && ifMatch != cur.ETag:
		return api.Entity{}, spec.ErrUpdateCondition.New()
	}
	next := api.NewEntity(e.PartitionKey, e.RowKey, stored(e.Properties))
	if found && !insert && mode == api.Merge {
		next.Properties = maps.Clone(cur.Properties)
		maps.Copy(next.Properties, stored(e.Properties))
	}
	if err := reference.CheckStoredSize(next, m.limits); err != nil {
		return api.Entity{}, err
	}
	m.stamp(&next)
	rows[e.Key()] = next
	return next, nil
}

// remove deletes the entity with key k from rows if ifMatch ("*" or an ETag) allows.
func remove(rows map[api.Key]api.Entity, k api.Key, ifMatch string) *spec.Error {
	cur, found := rows[k]
	switch {
	case !found:
		return spec.ErrResourceNotFound.New()
	case ifMatch != api.IfMatchAny && ifMatch != cur.ETag:
		return spec.ErrUpdateCondition.New()
	}
	delete(rows, k)
	return nil
}

// InsertEntity inserts e and returns it as stored.
func (m *Model) InsertEntity(ctx context.Context, tableName string, e api.Entity) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return api.Entity{}, serr
	}
	if serr := reference.CheckEntity(e, m.limits); serr != nil {
		return api.Entity{}, serr
	}
	got, serr := m.write(t.rows, e, true, api.Replace, "")
	if serr != nil {
		return api.Entity{}, serr
	}
	return got.Clone(), nil
}

// UpdateEntity replaces or merges e (ifMatch "" upserts) and returns the new ETag.
func (m *Model) UpdateEntity(ctx context.Context, tableName string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if serr := reference.CheckUpdate(mode, ifMatch); serr != nil {
		return "", serr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return "", serr
	}
	if serr := reference.CheckEntity(e, m.limits); serr != nil {
		return "", serr
	}
	got, serr := m.write(t.rows, e, false, mode, ifMatch)
	if serr != nil {
		return "", serr
	}
	return got.ETag, nil
}

// DeleteEntity deletes one entity; ifMatch is required.
func (m *Model) DeleteEntity(ctx context.Context, tableName, partitionKey, rowKey, ifMatch string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if serr := reference.CheckDeleteIfMatch(ifMatch); serr != nil {
		return serr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return serr
	}
	if serr := remove(t.rows, api.Key{PartitionKey: partitionKey, RowKey: rowKey}, ifMatch); serr != nil {
		return serr
	}
	return nil
}

// GetEntity reads one entity, projected by sel.
func (m *Model) GetEntity(ctx context.Context, tableName, partitionKey, rowKey string, sel []string) (api.Entity, error) {
	if err := ctx.Err(); err != nil {
		return api.Entity{}, err
	}
	proj, err := reference.ParseSelect(sel)
	if err != nil {
		return api.Entity{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return api.Entity{}, serr
	}
	e, found := t.rows[api.Key{PartitionKey: partitionKey, RowKey: rowKey}]
	if !found {
		return api.Entity{}, spec.ErrResourceNotFound.New()
	}
	e = e.Clone()
	proj.Apply(&e)
	return e, nil
}

// QueryEntities sorts the table's keys (api.Key.Less), skips those before the
// continuation, and returns the first $top (or 1000) entities that match the filter; the
// continuation names the next one that matches.
func (m *Model) QueryEntities(ctx context.Context, tableName string, q api.Query) (api.Page, error) {
	if err := ctx.Err(); err != nil {
		return api.Page{}, err
	}
	limit, err := reference.EntityPageLimit(q.Top)
	if err != nil {
		return api.Page{}, err
	}
	filter, err := odata.ParseFilter(q.Filter)
	if err != nil {
		return api.Page{}, err
	}
	proj, err := reference.ParseSelect(q.Select)
	if err != nil {
		return api.Page{}, err
	}
	pos, resume, err := reference.DecodeContinuation(q.Continuation)
	if err != nil {
		return api.Page{}, reference.ErrBadContinuation()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return api.Page{}, serr
	}
	keys := slices.Collect(maps.Keys(t.rows))
	slices.SortFunc(keys, func(a, b api.Key) int {
		if c := api.CompareKeyStrings(a.PartitionKey, b.PartitionKey); c != 0 {
			return c
		}
		return api.CompareKeyStrings(a.RowKey, b.RowKey)
	})
	page := api.Page{Entities: []api.Entity{}}
	if limit == 0 {
		return page, nil
	}
	for _, k := range keys {
		e := t.rows[k].Clone()
		if (resume && k.Less(pos)) || !filter.Match(&e) {
			continue
		}
		n := len(page.Entities)
		if n == limit || (m.boundaryPages && n > 0 && k.PartitionKey != page.Entities[n-1].PartitionKey) {
			page.Continuation = reference.EncodeContinuation(k)
			break
		}
		page.Entities = append(page.Entities, e)
	}
	for i := range page.Entities {
		proj.Apply(&page.Entities[i])
	}
	return page, nil
}

// SubmitBatch runs the operations in order on a copy of the table's entities and keeps the
// copy only when every operation succeeded.
func (m *Model) SubmitBatch(ctx context.Context, tableName string, ops []api.BatchOp) ([]api.BatchResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if serr := reference.CheckBatch(ops); serr != nil {
		return nil, serr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, serr := m.table(tableName)
	if serr != nil {
		return nil, serr.AtIndex(0)
	}
	if ops[0].Kind == api.BatchRetrieve {
		e, found := t.rows[ops[0].Entity.Key()]
		if !found {
			return nil, reference.BatchExecutionError(spec.ErrResourceNotFound.New(), 0)
		}
		e = e.Clone()
		return []api.BatchResult{{Status: http.StatusOK, ETag: e.ETag, Entity: &e}}, nil
	}
	if serr := reference.CheckBatchOperations(ops, m.limits); serr != nil {
		return nil, serr
	}
	rows := maps.Clone(t.rows)
	results := make([]api.BatchResult, len(ops))
	for i, op := range ops {
		var got api.Entity
		var serr *spec.Error
		results[i].Status = http.StatusNoContent
		switch op.Kind {
		case api.BatchInsert:
			got, serr = m.write(rows, op.Entity, true, api.Replace, "")
			results[i].Status = reference.BatchInsertStatus
		case api.BatchReplace:
			got, serr = m.write(rows, op.Entity, false, api.Replace, reference.BatchIfMatch(op.IfMatch))
		case api.BatchMerge:
			got, serr = m.write(rows, op.Entity, false, api.Merge, reference.BatchIfMatch(op.IfMatch))
		case api.BatchInsertOrReplace:
			got, serr = m.write(rows, op.Entity, false, api.Replace, "")
		case api.BatchInsertOrMerge:
			got, serr = m.write(rows, op.Entity, false, api.Merge, "")
		case api.BatchDelete:
			serr = remove(rows, op.Entity.Key(), reference.BatchIfMatch(op.IfMatch))
		}
		if serr != nil {
			return nil, reference.BatchExecutionError(serr, i)
		}
		results[i].ETag = got.ETag
	}
	t.rows = rows
	return results, nil
}
