package mutant

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// keyMapper changes the keys of every entity a client names, the key values a query's
// filter compares PartitionKey and RowKey with among them, and the keys of what comes back.
type keyMapper struct {
	api.Backend
	in  func(string) string
	out func(string) string
}

func (m *keyMapper) entityIn(e api.Entity) api.Entity {
	e = e.Clone()
	e.PartitionKey, e.RowKey = m.in(e.PartitionKey), m.in(e.RowKey)
	return e
}

func (m *keyMapper) entityOut(e *api.Entity) {
	if m.out != nil {
		e.PartitionKey, e.RowKey = m.out(e.PartitionKey), m.out(e.RowKey)
	}
}

func (m *keyMapper) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, m.entityIn(e))
	m.entityOut(&got)
	return got, err
}

func (m *keyMapper) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.Backend.UpdateEntity(ctx, table, m.entityIn(e), mode, ifMatch)
}

func (m *keyMapper) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.Backend.DeleteEntity(ctx, table, m.in(pk), m.in(rk), ifMatch)
}

func (m *keyMapper) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, m.in(pk), m.in(rk), sel)
	m.entityOut(&e)
	return e, err
}

func (m *keyMapper) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	q.Filter = mapKeyLiterals(q.Filter, m.in)
	p, err := m.Backend.QueryEntities(ctx, table, q)
	mapEntities(p.Entities, m.entityOut)
	return p, err
}

func (m *keyMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	in := make([]api.BatchOp, len(ops))
	for i, op := range ops {
		in[i] = op
		in[i].Entity = m.entityIn(op.Entity)
	}
	rs, err := m.Backend.SubmitBatch(ctx, table, in)
	mapResults(rs, m.entityOut)
	return rs, err
}

// mapKeyLiterals applies fn to the value of every string literal that filter compares
// PartitionKey or RowKey with ("PartitionKey eq 'Sales'", "'b' le RowKey"), leaving the rest
// of the filter as it was written. It reads the filter with the service's own lexer
// (odata.Tokens).
func mapKeyLiterals(filter string, fn func(string) string) string {
	toks := odata.Tokens(filter)
	isKey := func(t odata.Token) bool { return t.Text == "PartitionKey" || t.Text == "RowKey" }
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		l, op, r := toks[i], toks[i+1], toks[i+2]
		if !isComparison(op.Text) {
			continue
		}
		lit := r
		switch {
		case isKey(l) && isStringLiteral(r.Text):
		case isKey(r) && isStringLiteral(l.Text):
			lit = l
		default:
			continue
		}
		value := strings.ReplaceAll(lit.Text[1:len(lit.Text)-1], "''", "'")
		b.WriteString(filter[last:lit.Start])
		b.WriteString("'" + strings.ReplaceAll(fn(value), "'", "''") + "'")
		last = lit.End
		i += 2
	}
	b.WriteString(filter[last:])
	return b.String()
}

// propertyNameRule answers a write whose property names break a rule of the mutant's own.
type propertyNameRule struct {
	api.Backend
	refuse func(name string) bool
}

func (m *propertyNameRule) check(e api.Entity) error {
	for name := range e.Properties {
		if m.refuse(name) {
			return spec.ErrPropertyNameInvalid.New()
		}
	}
	return nil
}

func (m *propertyNameRule) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if err := m.check(e); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *propertyNameRule) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if err := m.check(e); err != nil {
		return "", err
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *propertyNameRule) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for i, op := range ops {
		if err := m.check(op.Entity); err != nil {
			return nil, spec.ErrPropertyNameInvalid.New().AtIndex(i)
		}
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

func renameProperties(fn func(string) (string, bool)) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend {
		return &writeMapper{Backend: b, fn: func(e api.Entity) api.Entity {
			out := make(map[string]api.Value, len(e.Properties))
			for name, v := range e.Properties {
				if n, keep := fn(name); keep {
					out[n] = v
				}
			}
			e.Properties = out
			return e
		}}
	}
}

// Entities (EVIDENCE.md 1.2, 1.3).
var (
	_ = define(Mutant{
		Name:        "keys-case-folded",
		Description: "stores and looks up keys in lower case, so keys that differ only in case name one entity",
		Breaks:      []string{"entities.key.case-sensitive", "modify.keys.case-sensitive"},
		AlsoFails: map[string]string{
			"batch.keys.case-sensitive": "the RowKeys row, ROW and Row of one transaction fold to one key, so the transaction names one entity three times and is refused",
		},
		Areas: []spec.Area{spec.AreaPatterns, spec.AreaRelationships},
	}, func(b api.Backend) api.Backend {
		// A query is a lookup too: the key values its filter compares are folded as well.
		return &keyMapper{Backend: b, in: strings.ToLower}
	}, hooks{})

	_ = define(Mutant{
		Name:        "empty-row-key-padded",
		Description: "stores an empty RowKey as a single space, as a store that cannot hold empty strings",
		Breaks:      []string{"entities.key.empty-row-key"},
	}, func(b api.Backend) api.Backend {
		return &rowKeyPad{keyMapper{Backend: b, in: func(k string) string { return k }}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "point-reads-by-rowkey",
		Description: "serves Get Entity from an index on RowKey alone, returning the first entity with that RowKey in any partition",
		Breaks:      []string{"entities.key.identity", "entities.partitions.many"},
	}, func(b api.Backend) api.Backend { return &rowKeyIndex{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "cosmos-reserved-names-refused",
		Description: "refuses the property names id, rid, etag and ResourceId with 400 PropertyNameInvalid",
		Breaks:      []string{"entities.property.name-cosmos-reserved"},
	}, func(b api.Backend) api.Backend {
		return &propertyNameRule{Backend: b, refuse: func(n string) bool {
			switch strings.ToLower(n) {
			case "id", "rid", "etag", "resourceid":
				return true
			}
			return false
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "ascii-property-names-only",
		Description: "refuses property names with letters outside ASCII with 400 PropertyNameInvalid",
		Breaks:      []string{"entities.property.name-identifier"},
	}, func(b api.Backend) api.Backend {
		return &propertyNameRule{Backend: b, refuse: func(n string) bool {
			for _, r := range n {
				if r > unicode.MaxASCII {
					return true
				}
			}
			return false
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "property-names-sanitized",
		Description: "accepts a property name that is not an identifier but stores it with _ in place of each character an identifier cannot hold",
		Breaks:      []string{"entities.property.name-invalid"},
	}, renameProperties(func(n string) (string, bool) {
		var b strings.Builder
		for i, r := range n {
			if r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r) {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		return b.String(), true
	}), hooks{})

	_ = define(Mutant{
		Name:        "system-name-properties-dropped",
		Description: "accepts a custom property named like a system property in another case (timestamp, ROWKEY) but does not store it",
		Breaks:      []string{"entities.property.name-system-case"},
	}, renameProperties(func(n string) (string, bool) {
		switch strings.ToLower(n) {
		case "partitionkey", "rowkey", "timestamp":
			return n, false
		}
		return n, true
	}), hooks{})

	_ = define(Mutant{
		Name:        "missing-properties-as-null",
		Description: "returns query results as rows of one schema: a property any entity of the page has comes back as null on the others",
		Breaks:      []string{"entities.schema.heterogeneous"},
		Areas:       []spec.Area{spec.AreaRelationships, spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Select != nil {
				return
			}
			cols := map[string]api.EdmType{}
			for _, e := range p.Entities {
				for n, v := range e.Properties {
					cols[n] = v.Type
				}
			}
			for i := range p.Entities {
				for n, t := range cols {
					if _, ok := p.Entities[i].Properties[n]; !ok {
						p.Entities[i].Properties[n] = api.Null(t)
					}
				}
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "timestamp-local-time",
		Description: "returns Timestamps in the server's local time (UTC+1) labelled as UTC",
		Breaks:      []string{"entities.timestamp.set"},
	}, func(b api.Backend) api.Backend {
		return &readMapper{Backend: b, fn: func(e *api.Entity) {
			if !e.Timestamp.IsZero() {
				e.Timestamp = e.Timestamp.Add(time.Hour)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "deleted-entities-in-queries",
		Description: "deletes an entity for Get Entity but keeps returning it to queries (a tombstone the scan does not skip)",
		Breaks:      []string{"modify.delete.removes"},
	}, func(b api.Backend) api.Backend { return &tombstones{Backend: b, dead: map[entityKey]bool{}} }, hooks{})

	_ = define(Mutant{
		Name:        "if-match-any-refused",
		Description: "compares If-Match * with the ETag as a string, so it never matches",
		Breaks:      []string{"concurrency.if-match-any"},
	}, func(b api.Backend) api.Backend { return &anyRefused{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "upsert-as-insert",
		Description: "performs Insert Or Replace and Insert Or Merge as Insert Entity: they fail with 409 when the entity exists",
		Breaks:      []string{"pattern.eventual.upsert-repeatable", "concurrency.no-if-match.upsert"},
		Areas:       []spec.Area{spec.AreaRelationships},
	}, func(b api.Backend) api.Backend { return &upsertInsert{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "tables-auto-created",
		Description: "creates a missing table on the first write to it instead of answering 404",
		Breaks:      []string{"pattern.eventual.missing-table", "tables.missing.entity-operations"},
	}, func(b api.Backend) api.Backend { return &autoCreate{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "keys-unique-across-tables",
		Description: "keeps one entity per PartitionKey and RowKey for the whole account: writing the keys in one table removes them from the others",
		Breaks:      []string{"entities.key.identity", "pattern.eventual.no-isolation"},
	}, func(b api.Backend) api.Backend {
		return &globalKeys{Backend: b, where: map[api.Key]map[string]string{}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "schema-fixed-per-table",
		Description: "fixes each property's type by the first value a table stores for it and converts later values of other types to strings",
		Breaks:      []string{"entities.schema.type-per-entity", "rel.heterogeneous.mixed-property-types", "types.type-change"},
		Areas:       []spec.Area{spec.AreaRelationships},
	}, func(b api.Backend) api.Backend { return &fixedSchema{Backend: b, types: map[string]api.EdmType{}} }, hooks{})
)

type rowKeyPad struct{ keyMapper }

func padEmpty(k string) string {
	if k == "" {
		return " "
	}
	return k
}

func (m *rowKeyPad) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	e = e.Clone()
	e.RowKey = padEmpty(e.RowKey)
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *rowKeyPad) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	e = e.Clone()
	e.RowKey = padEmpty(e.RowKey)
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *rowKeyPad) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	return m.Backend.GetEntity(ctx, table, pk, padEmpty(rk), sel)
}

func (m *rowKeyPad) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.Backend.DeleteEntity(ctx, table, pk, padEmpty(rk), ifMatch)
}

type rowKeyIndex struct{ api.Backend }

func (m *rowKeyIndex) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	p, err := m.Backend.QueryEntities(ctx, table, api.Query{Filter: "RowKey eq '" + strings.ReplaceAll(rk, "'", "''") + "'", Top: api.TopOf(1), Select: sel})
	if err != nil || len(p.Entities) == 0 {
		return m.Backend.GetEntity(ctx, table, pk, rk, sel)
	}
	return p.Entities[0], nil
}

// tombstones deletes entities softly: Delete Entity marks the entity and Get Entity
// answers 404 for it, but queries still find it. A write of the keys removes the mark.
type tombstones struct {
	api.Backend
	mu   sync.Mutex
	dead map[entityKey]bool
}

func (m *tombstones) isDead(table, pk, rk string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dead[keyOf(table, pk, rk)]
}

// revive removes the stored entity behind a mark before the keys are written again.
func (m *tombstones) revive(ctx context.Context, table, pk, rk string) {
	if !m.isDead(table, pk, rk) {
		return
	}
	_ = m.Backend.DeleteEntity(ctx, table, pk, rk, api.IfMatchAny)
	m.mu.Lock()
	delete(m.dead, keyOf(table, pk, rk))
	m.mu.Unlock()
}

func (m *tombstones) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if ifMatch == "" || m.isDead(table, pk, rk) {
		if m.isDead(table, pk, rk) {
			return spec.ErrResourceNotFound.New()
		}
		return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	}
	cur, err := m.Backend.GetEntity(ctx, table, pk, rk, nil)
	if err != nil {
		return err
	}
	if ifMatch != api.IfMatchAny && ifMatch != cur.ETag {
		return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	}
	m.mu.Lock()
	m.dead[keyOf(table, pk, rk)] = true
	m.mu.Unlock()
	return nil
}

func (m *tombstones) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	if m.isDead(table, pk, rk) {
		return api.Entity{}, spec.ErrResourceNotFound.New()
	}
	return m.Backend.GetEntity(ctx, table, pk, rk, sel)
}

func (m *tombstones) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	m.revive(ctx, table, e.PartitionKey, e.RowKey)
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *tombstones) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if ifMatch != "" && m.isDead(table, e.PartitionKey, e.RowKey) {
		return "", spec.ErrResourceNotFound.New()
	}
	m.revive(ctx, table, e.PartitionKey, e.RowKey)
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *tombstones) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for _, op := range ops {
		m.revive(ctx, table, op.Entity.PartitionKey, op.Entity.RowKey)
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

type anyRefused struct{ api.Backend }

func (m *anyRefused) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if ifMatch == api.IfMatchAny {
		if _, err := m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil); err != nil {
			return "", err
		}
		return "", spec.ErrUpdateCondition.New()
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *anyRefused) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if ifMatch == api.IfMatchAny {
		if _, err := m.Backend.GetEntity(ctx, table, pk, rk, nil); err != nil {
			return err
		}
		return spec.ErrUpdateCondition.New()
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

type upsertInsert struct{ api.Backend }

func (m *upsertInsert) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if ifMatch != "" {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	got, err := m.Backend.InsertEntity(ctx, table, e)
	return got.ETag, err
}

type autoCreate struct{ api.Backend }

func (m *autoCreate) retry(ctx context.Context, table string, err error) bool {
	if !isCode(err, spec.ErrTableNotFound.Code) {
		return false
	}
	return m.Backend.CreateTable(ctx, table) == nil
}

func (m *autoCreate) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if m.retry(ctx, table, err) {
		return m.Backend.InsertEntity(ctx, table, e)
	}
	return got, err
}

func (m *autoCreate) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	if m.retry(ctx, table, err) {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	return etag, err
}

func (m *autoCreate) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	if m.retry(ctx, table, err) {
		return m.Backend.SubmitBatch(ctx, table, ops)
	}
	return rs, err
}

// globalKeys remembers which tables hold each key (written through it) and removes the
// key from the other tables on every write.
type globalKeys struct {
	api.Backend
	mu    sync.Mutex
	where map[api.Key]map[string]string // key -> lower-case table -> table
}

func (m *globalKeys) written(ctx context.Context, table string, k api.Key) {
	m.mu.Lock()
	others := []string{}
	for lt, t := range m.where[k] {
		if lt != strings.ToLower(table) {
			others = append(others, t)
		}
	}
	m.where[k] = map[string]string{strings.ToLower(table): table}
	m.mu.Unlock()
	for _, t := range others {
		_ = m.Backend.DeleteEntity(ctx, t, k.PartitionKey, k.RowKey, api.IfMatchAny)
	}
}

func (m *globalKeys) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		m.written(ctx, table, e.Key())
	}
	return got, err
}

func (m *globalKeys) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	if err == nil {
		m.written(ctx, table, e.Key())
	}
	return etag, err
}

func (m *globalKeys) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	if err == nil {
		for _, op := range ops {
			if op.Kind != api.BatchDelete && op.Kind != api.BatchRetrieve {
				m.written(ctx, table, op.Entity.Key())
			}
		}
	}
	return rs, err
}

// fixedSchema converts a value whose type differs from the first one its table stored for
// the property into a string.
type fixedSchema struct {
	api.Backend
	mu    sync.Mutex
	types map[string]api.EdmType // lower-case table + "\x00" + property -> type
}

func (m *fixedSchema) conform(table string, e api.Entity) api.Entity {
	e = e.Clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, v := range e.Properties {
		if v.Null {
			continue
		}
		k := strings.ToLower(table) + "\x00" + n
		t, ok := m.types[k]
		switch {
		case !ok:
			m.types[k] = v.Type
		case t != v.Type:
			e.Properties[n] = api.String(strings.TrimSuffix(strings.TrimPrefix(v.String(), v.Type.String()+"("), ")"))
		}
	}
	return e
}

func (m *fixedSchema) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	return m.Backend.InsertEntity(ctx, table, m.conform(table, e))
}

func (m *fixedSchema) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	return m.Backend.UpdateEntity(ctx, table, m.conform(table, e), mode, ifMatch)
}

func (m *fixedSchema) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	in := slicesCloneOps(ops)
	for i := range in {
		if in[i].Kind != api.BatchDelete && in[i].Kind != api.BatchRetrieve {
			in[i].Entity = m.conform(table, in[i].Entity)
		}
	}
	return m.Backend.SubmitBatch(ctx, table, in)
}

func slicesCloneOps(ops []api.BatchOp) []api.BatchOp { return append([]api.BatchOp(nil), ops...) }

// Parallel use (EVIDENCE.md 9).
var (
	_ = define(Mutant{
		Name:        "concurrent-writes-dropped",
		Description: "acknowledges a write that arrives while another write is in flight without storing it (a write-behind buffer that drops when busy)",
		Breaks:      []string{"parallel.insert.durable", "parallel.upsert.durable"},
	}, func(b api.Backend) api.Backend { return &busyDrop{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "query-coalescing-by-table",
		Description: "answers a query that arrives while another query of the same table is in flight with that query's page",
		Breaks:      []string{"parallel.query.equivalent", "pattern.impl.parallel-partitions", "parallel.query.paged"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend { return &coalesce{Backend: b, inflight: map[string]*flight{}} }, hooks{})
)

type busyDrop struct {
	api.Backend
	inflight atomic.Int64
}

func (m *busyDrop) enter(ctx context.Context) (busy bool) {
	busy = m.inflight.Add(1) > 1
	if !busy {
		// Hold the slot for a round trip, so that writes sent together overlap.
		sleep(ctx, raceWindow)
	}
	return busy
}

func (m *busyDrop) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	defer m.inflight.Add(-1)
	if m.enter(ctx) {
		got := e.Clone()
		got.ETag, got.Timestamp = `W/"datetime'`+api.FormatDateTime7(time.Now())+`'"`, api.TruncateTicks(time.Now())
		return got, nil
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *busyDrop) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	defer m.inflight.Add(-1)
	if m.enter(ctx) && ifMatch == "" {
		return `W/"datetime'` + api.FormatDateTime7(time.Now()) + `'"`, nil
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

type flight struct {
	done chan struct{}
	page api.Page
	err  error
}

type coalesce struct {
	api.Backend
	mu       sync.Mutex
	inflight map[string]*flight
}

func (m *coalesce) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	k := strings.ToLower(table)
	m.mu.Lock()
	if f, ok := m.inflight[k]; ok {
		m.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return api.Page{}, ctx.Err()
		}
		p := f.page
		p.Entities = append([]api.Entity(nil), p.Entities...)
		for i := range p.Entities {
			p.Entities[i] = p.Entities[i].Clone()
		}
		return p, f.err
	}
	f := &flight{done: make(chan struct{})}
	m.inflight[k] = f
	m.mu.Unlock()
	sleep(ctx, raceWindow)
	f.page, f.err = m.Backend.QueryEntities(ctx, table, q)
	m.mu.Lock()
	delete(m.inflight, k)
	m.mu.Unlock()
	close(f.done)
	p := f.page
	p.Entities = append([]api.Entity(nil), p.Entities...)
	for i := range p.Entities {
		p.Entities[i] = p.Entities[i].Clone()
	}
	return p, f.err
}

// reads-from-last-written-table keeps one current table for the decorator and the raw HTTP
// hook (a connection's state covers every request sent on it), so it builds its Wrap by
// hand, as timestamp-from-client does.
var _ = func() Mutant {
	var wrap func(api.Backend) api.Backend
	wrap = func(inner api.Backend) api.Backend {
		m := &currentTable{Backend: inner}
		return withCapabilities(inner, m, wrap, hooks{raw: m.rawWrite})
	}
	return register(Mutant{
		Name:        "reads-from-last-written-table",
		Description: "serves Get Entity and Query Entities from the table last written to, as a connection that keeps a current table",
		Breaks:      []string{"rel.one-to-one.explicit-reference"},
		Areas:       []spec.Area{spec.AreaPatterns},
		Wrap:        wrap,
	})
}()

// currentTable reads from the table the last write named instead of the one asked for. A
// write is any request that sends an entity, typed or raw, whether or not it succeeds.
type currentTable struct {
	api.Backend
	mu   sync.Mutex
	last string
}

// rawWrite makes the table of an entity write sent over raw HTTP the current table: the
// connection that keeps a current table sees those requests as it sees the typed ones.
// Requests about tables themselves (/Tables) leave it as it is, and so does a transaction
// ($batch): its body, made by hand, may name several tables.
func (m *currentTable) rawWrite(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
	method := req.Method
	if tunnelled := req.Header.Get(wire.HeaderXHTTPMethod); tunnelled != "" {
		method = tunnelled
	}
	if table := tableOfPath(req.URL.Path); isWrite(method) && table != "" && !strings.EqualFold(table, "Tables") && table != "$batch" {
		m.wrote(table)
	}
	return do(req)
}

func (m *currentTable) wrote(table string) {
	m.mu.Lock()
	m.last = table
	m.mu.Unlock()
}

func (m *currentTable) read(table string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == "" {
		return table
	}
	return m.last
}

func (m *currentTable) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	m.wrote(table)
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *currentTable) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	m.wrote(table)
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *currentTable) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	m.wrote(table)
	return m.Backend.SubmitBatch(ctx, table, ops)
}

func (m *currentTable) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	return m.Backend.GetEntity(ctx, m.read(table), pk, rk, sel)
}

func (m *currentTable) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	return m.Backend.QueryEntities(ctx, m.read(table), q)
}

// strayETagMember is what an emulator that serialises its stored record whole answers: every
// entity it returns carries a member "ETag" holding the quoted ETag beside the properties.
// The backend does everything else right, so the one rule about members nobody wrote must
// fail and no other (a rule compares what it is about).
var _ = define(Mutant{
	Name:        "stray-etag-member",
	Description: "returns every entity with an extra member \"ETag\" holding its quoted ETag beside the properties, as an emulator that serialises its stored record whole does",
	Breaks:      []string{"entities.property.no-extra"},
	Areas: []spec.Area{spec.AreaTables, spec.AreaTypes, spec.AreaLimits, spec.AreaQuery, spec.AreaOrdering,
		spec.AreaPagination, spec.AreaModification, spec.AreaConcurrency, spec.AreaBatch, spec.AreaPatterns,
		spec.AreaRelationships, spec.AreaAuth, spec.AreaParallel},
}, func(b api.Backend) api.Backend {
	return &readMapper{Backend: b, fn: func(e *api.Entity) {
		*e = e.Clone()
		if e.Properties == nil {
			e.Properties = map[string]api.Value{}
		}
		e.Properties["ETag"] = api.String(strconv.Quote(e.ETag))
	}}
}, hooks{})
