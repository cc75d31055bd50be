package mutant

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
)

// Faults of the design guide's patterns and relationships (issue 30) that only
// keys-case-folded made fail, through the letter case of the keys it read back, which now
// blocks their specs: each breaks the rule's own subject, on the entities or tables its
// spec uses, before any precondition of the spec. A fault that breaks another rule's
// subject too declares it in AlsoFails.

// tableDate returns the yyyyMMdd date a table name ends in after something else.
func tableDate(name string) (time.Time, bool) {
	const layout = "20060102"
	if len(name) <= len(layout) {
		return time.Time{}, false
	}
	date := name[len(name)-len(layout):]
	if !allDigits(date) {
		return time.Time{}, false
	}
	d, err := time.Parse(layout, date)
	return d, err == nil
}

// nextDayLock refuses, for hold after a table whose name ends in a date is deleted, to
// create a table whose name ends in the next day's date.
type nextDayLock struct {
	api.Backend
	hold time.Duration

	mu     sync.Mutex
	locked map[time.Time]time.Time // the day whose tables are held, and since when
}

func (m *nextDayLock) DeleteTable(ctx context.Context, name string) error {
	if err := m.Backend.DeleteTable(ctx, name); err != nil {
		return err
	}
	if day, ok := tableDate(name); ok {
		m.mu.Lock()
		if m.locked == nil {
			m.locked = map[time.Time]time.Time{}
		}
		m.locked[day.AddDate(0, 0, 1)] = time.Now()
		m.mu.Unlock()
	}
	return nil
}

func (m *nextDayLock) CreateTable(ctx context.Context, name string) error {
	if day, ok := tableDate(name); ok {
		m.mu.Lock()
		since, held := m.locked[day]
		m.mu.Unlock()
		if held && time.Since(since) < m.hold {
			return spec.ErrTableBeingDeleted.New()
		}
	}
	return m.Backend.CreateTable(ctx, name)
}

// binaryLimitExclusive refuses Insert Entity of an entity with a binary value of exactly
// the limit.
type binaryLimitExclusive struct{ api.Backend }

func (m *binaryLimitExclusive) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	for _, v := range e.Properties {
		if v.Type == api.EdmBinary && !v.Null && len(v.Str) >= spec.MaxBinaryBytes {
			return api.Entity{}, spec.ErrPropertyValueTooLarge.New()
		}
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

// stringEqualities returns the String equalities (Name eq 'text') of a filter, read with
// the service's own lexer (odata.Tokens), by property name; ok is false when the filter has
// anything but such equalities joined by and.
func stringEqualities(filter string) (eqs map[string]string, ok bool) {
	eqs = map[string]string{}
	toks := odata.Tokens(filter)
	for i := 0; i < len(toks); {
		t := toks[i]
		switch {
		case t.Text == "(" || t.Text == ")" || (t.Kind == odata.TokenWord && t.Text == "and"):
			i++
		case i+2 < len(toks) && t.Kind == odata.TokenWord && toks[i+1].Text == "eq" && toks[i+2].Kind == odata.TokenLiteral:
			lit := toks[i+2].Text
			if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
				return nil, false
			}
			eqs[t.Text] = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
			i += 3
		default:
			return nil, false
		}
	}
	return eqs, true
}

// staleValueIndex serves the queries that compare a custom String property with eq within
// one partition from an index that Delete Entity does not update: they also return the
// entities deleted since that match.
type staleValueIndex struct {
	api.Backend

	mu      sync.Mutex
	deleted map[entityKey]api.Entity
}

func (m *staleValueIndex) forget(table, pk, rk string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.deleted, keyOf(table, pk, rk))
}

func (m *staleValueIndex) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	old, getErr := m.Backend.GetEntity(ctx, table, pk, rk, nil)
	if err := m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch); err != nil {
		return err
	}
	if getErr == nil {
		m.mu.Lock()
		if m.deleted == nil {
			m.deleted = map[entityKey]api.Entity{}
		}
		m.deleted[keyOf(table, pk, rk)] = old
		m.mu.Unlock()
	}
	return nil
}

func (m *staleValueIndex) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	m.forget(table, e.PartitionKey, e.RowKey)
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *staleValueIndex) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	m.forget(table, e.PartitionKey, e.RowKey)
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *staleValueIndex) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for _, op := range ops {
		m.forget(table, op.Entity.PartitionKey, op.Entity.RowKey)
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

func (m *staleValueIndex) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || !q.Continuation.IsZero() || !p.Continuation.IsZero() || q.Select != nil {
		return p, err
	}
	eqs, ok := stringEqualities(q.Filter)
	pk, onePartition := eqs["PartitionKey"]
	if !ok || !onePartition || len(eqs) < 2 {
		return p, err
	}
	if _, byRow := eqs["RowKey"]; byRow {
		return p, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.deleted {
		if k.table != strings.ToLower(table) || e.PartitionKey != pk {
			continue
		}
		matches := true
		for name, want := range eqs {
			if v, has := e.Properties[name]; name != "PartitionKey" && (!has || v.Type != api.EdmString || v.Null || v.Str != want) {
				matches = false
			}
		}
		if matches {
			p.Entities = append(p.Entities, e.Clone())
		}
	}
	return p, err
}

// mergeBufferRows is how many Merge operations of one transaction mergeBuffer applies.
const mergeBufferRows = 64

// mergeBuffer applies only the first mergeBufferRows Merge operations of a transaction and
// answers for all of them.
type mergeBuffer struct{ api.Backend }

func (m *mergeBuffer) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	var applied []api.BatchOp
	var dropped []int // indexes in ops of the merges left out
	merges := 0
	for i, op := range ops {
		if op.Kind == api.BatchMerge {
			merges++
			if merges > mergeBufferRows {
				dropped = append(dropped, i)
				continue
			}
		}
		applied = append(applied, op)
	}
	if len(dropped) == 0 {
		return m.Backend.SubmitBatch(ctx, table, ops)
	}
	results, err := m.Backend.SubmitBatch(ctx, table, applied)
	if err != nil {
		return results, err
	}
	// The answer has a result for every operation sent, the dropped merges' in their place.
	out := make([]api.BatchResult, 0, len(ops))
	next := 0
	for i := range ops {
		if slices.Contains(dropped, i) {
			out = append(out, api.BatchResult{Status: 204})
			continue
		}
		out = append(out, results[next])
		next++
	}
	return out, nil
}

// dropExtendedNames removes the properties whose name begins with another property's name
// (ManagerEmail beside Manager).
func dropExtendedNames(e *api.Entity) {
	names := e.PropertyNames()
	for _, short := range names {
		for _, long := range names {
			if long != short && strings.HasPrefix(long, short) {
				delete(e.Properties, long)
			}
		}
	}
}

// blobEndpoint is the public blob endpoint that blobAddressRewrite rewrites.
const blobEndpoint = ".blob.core.windows.net/"

// rewriteBlobAddress rewrites, in every String property, an address of the public blob
// endpoint (https://ACCOUNT.blob.core.windows.net/PATH) to the emulator's own
// (http://127.0.0.1:10000/ACCOUNT/PATH).
func rewriteBlobAddress(e *api.Entity) {
	for name, v := range e.Properties {
		if v.Type != api.EdmString || v.Null {
			continue
		}
		rest, ok := strings.CutPrefix(v.Str, "https://")
		if !ok {
			continue
		}
		account, path, ok := strings.Cut(rest, blobEndpoint)
		if !ok || account == "" || strings.Contains(account, "/") {
			continue
		}
		e.Properties[name] = api.String("http://127.0.0.1:10000/" + account + "/" + path)
	}
}

// dropRepeatedSubsets removes from a page every entity of three or more properties that
// another entity of the page repeats, each with the same value, among more of its own.
func dropRepeatedSubsets(p *api.Page) {
	kept := p.Entities[:0:0]
	for i, e := range p.Entities {
		repeated := false
		for j, other := range p.Entities {
			if i != j && len(e.Properties) >= 3 && len(other.Properties) > len(e.Properties) && holdsAll(other, e) {
				repeated = true
				break
			}
		}
		if !repeated {
			kept = append(kept, e)
		}
	}
	p.Entities = kept
}

// holdsAll reports whether every property of sub is in e with the same value.
func holdsAll(e, sub api.Entity) bool {
	for name, v := range sub.Properties {
		if w, ok := e.Properties[name]; !ok || !w.Equal(v) {
			return false
		}
	}
	return true
}

// dropOffFormatRowKeys removes, from a page whose first three RowKeys are digit strings of
// one width, the entities whose RowKey is not such a string.
func dropOffFormatRowKeys(p *api.Page) {
	const sample = 3
	if len(p.Entities) <= sample {
		return
	}
	width := len(p.Entities[0].RowKey)
	fixedWidth := func(rk string) bool { return len(rk) == width && allDigits(rk) }
	for _, e := range p.Entities[:sample] {
		if !fixedWidth(e.RowKey) {
			return
		}
	}
	kept := p.Entities[:0:0]
	for _, e := range p.Entities {
		if fixedWidth(e.RowKey) {
			kept = append(kept, e)
		}
	}
	p.Entities = kept
}

// upsertByRowKey runs Insert Or Replace of an entity that does not exist as a replace of
// the first entity with the same RowKey in another partition, when there is one.
type upsertByRowKey struct{ api.Backend }

func (m *upsertByRowKey) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if mode != api.Replace || ifMatch != "" {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	if _, err := m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil); !isNotFound(err) {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	p, err := m.Backend.QueryEntities(ctx, table, api.Query{Filter: "RowKey eq '" + strings.ReplaceAll(e.RowKey, "'", "''") + "'", Top: api.TopOf(1)})
	if err != nil || len(p.Entities) == 0 {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	found := e.Clone()
	found.PartitionKey = p.Entities[0].PartitionKey
	return m.Backend.UpdateEntity(ctx, table, found, mode, ifMatch)
}

// isNotFound reports whether err is the service's 404.
func isNotFound(err error) bool {
	var se *spec.Error
	return errors.As(err, &se) && se.Status == 404
}

var (
	_ = define(Mutant{
		Name:        "next-day-table-held",
		Description: "refuses with 409 TableBeingDeleted, for 30 seconds after a table whose name ends in a yyyyMMdd date is deleted, to create a table whose name ends in the next day's date, as a rollover of day tables that holds the next day's name while it tears the old day down",
		Breaks:      []string{"pattern.high-volume-delete.new-name"},
	}, func(b api.Backend) api.Backend { return &nextDayLock{Backend: b, hold: 30 * time.Second} }, hooks{})

	_ = define(Mutant{
		Name:        "insert-binary-limit-exclusive",
		Description: "refuses Insert Entity of a binary value of exactly 64 KiB with 400 PropertyValueTooLarge, its insert path taking the limit as exclusive",
		Breaks:      []string{"pattern.large-entities.inline-limit", "limits.binary.size"},
		AlsoFails: map[string]string{
			"limits.entity.size":                      "its entities of up to 1 MiB are made of binary values of exactly 64 KiB, which the insert refuses",
			"limits.entity.size-edge":                 "its entities at the edge of 1 MiB are made of binary values of exactly 64 KiB, which the insert refuses",
			"limits.entity.size-merged":               "the entity its merge grows is inserted with binary values of exactly 64 KiB, which the insert refuses",
			"pattern.large-entities.entity-too-large": "its photos of exactly 64 KiB are refused with PropertyValueTooLarge before the entity's size is judged",
			"types.binary.round-trip":                 "its sample of exactly 64 KiB is inserted, and the insert refuses it",
		},
	}, func(b api.Backend) api.Backend { return &binaryLimitExclusive{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "deletes-stale-in-value-index",
		Description: "answers a query of one partition that compares custom String properties with eq from an index that Delete Entity does not update, so that it also returns the entities deleted since that matched",
		Breaks:      []string{"pattern.inter-index.stepwise-update"},
	}, func(b api.Backend) api.Backend { return &staleValueIndex{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "batch-merges-past-64-dropped",
		Description: "applies only the first 64 Merge operations of a transaction and answers success for all of them, as a store that runs a transaction's merges through a bulk-update buffer of 64 rows and loses the overflow",
		Breaks:      []string{"rel.one-to-many.denormalized-update"},
	}, func(b api.Backend) api.Backend { return &mergeBuffer{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "get-drops-extended-names",
		Description: "answers Get Entity without the properties whose name begins with another property's name (ManagerEmail beside Manager), as a store that keeps properties in a document whose paths such names collide in",
		Breaks:      []string{"pattern.denormalization.point-query"},
		AlsoFails: map[string]string{
			"pattern.denormalization.batch-update": "the department's copy ManagerEmail, which the transaction merges, is read back with Get Entity, which loses it beside Manager",
			"pattern.large-entities.blob-pointer":  "PhotoBytes begins with Photo, so Get Entity of the employee loses it: the entity the pattern reads back is the rule's subject",
		},
	}, func(b api.Backend) api.Backend { return &getMapper{Backend: b, fn: dropExtendedNames} }, hooks{})

	_ = define(Mutant{
		Name:        "blob-addresses-rewritten",
		Description: "rewrites, in the String properties it returns, addresses of the public blob endpoint (https://ACCOUNT.blob.core.windows.net/...) to a local emulator's (http://127.0.0.1:10000/ACCOUNT/...), as an emulator that rewrites its public URLs throughout a response body",
		Breaks:      []string{"pattern.large-entities.blob-pointer"},
		AlsoFails: map[string]string{
			"rel.one-to-one.explicit-reference": "the employee's PhotoUri, an address of the public blob endpoint, comes back rewritten",
			"rel.one-to-one.key-convention":     "the photo entity's PhotoUri, an address of the public blob endpoint, comes back rewritten",
		},
	}, func(b api.Backend) api.Backend {
		return &getMapper{Backend: &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) {
			mapEntities(p.Entities, rewriteBlobAddress)
		}}, fn: rewriteBlobAddress}
	}, hooks{})

	_ = define(Mutant{
		Name:        "partition-query-drops-repeated-subset",
		Description: "answers a query of one partition (PartitionKey eq and nothing else) without an entity of three or more properties that another entity of the page repeats with the same values among more of its own, as a store that takes such an entity for a duplicate",
		Breaks:      []string{"pattern.intra-index.partial-copy"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if _, ok := partitionOfFilter(q.Filter); ok && q.Select == nil {
				dropRepeatedSubsets(p)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "partition-query-drops-off-format-rowkeys",
		Description: "answers a query of one partition (PartitionKey eq and nothing else) whose first three RowKeys are digit strings of one width without the entities whose RowKey is not such a string, as a store that infers a fixed-width numeric key column from a page's first rows and skips the rows that do not fit it",
		Breaks:      []string{"rel.one-to-many.same-partition"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if _, ok := partitionOfFilter(q.Filter); ok && q.Select == nil {
				dropOffFormatRowKeys(p)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "upsert-finds-rowkey-elsewhere",
		Description: "runs Insert Or Replace of an entity that does not exist as a replace of the entity with the same RowKey in another partition, when there is one, as an upsert that looks the entity up by RowKey alone",
		Breaks:      []string{"rel.move.two-steps"},
	}, func(b api.Backend) api.Backend { return &upsertByRowKey{Backend: b} }, hooks{})
)

// replaceAfterInsertLost runs a transaction's Replace conditioned on an ETag that follows an
// Insert as a Merge of no property: the condition is checked and the ETag changes, but the
// replacing entity's properties are lost.
type replaceAfterInsertLost struct{ api.Backend }

func (m *replaceAfterInsertLost) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	inserted := false
	changed := slices.Clone(ops)
	for i, op := range changed {
		switch {
		case op.Kind == api.BatchInsert:
			inserted = true
		case inserted && op.Kind == api.BatchReplace && op.IfMatch != "" && op.IfMatch != "*":
			bare := api.NewEntity(op.Entity.PartitionKey, op.Entity.RowKey, nil)
			changed[i] = api.BatchOp{Kind: api.BatchMerge, Entity: bare, IfMatch: op.IfMatch}
		}
	}
	return m.Backend.SubmitBatch(ctx, table, changed)
}

var _ = define(Mutant{
	Name:        "replace-after-insert-lost",
	Description: "runs an ETag-conditioned Replace that follows an Insert in one transaction as a Merge of no property: the condition holds and the ETag changes, but the new properties are lost",
	Breaks:      []string{"pattern.index-entities.same-partition-add"},
	AlsoFails: map[string]string{
		"pattern.index-entities.same-partition-stale": "after the refused transaction it retries from a fresh read with the transaction of same-partition-add, whose replace of the index entity is lost",
	},
}, func(b api.Backend) api.Backend { return &replaceAfterInsertLost{Backend: b} }, hooks{})
