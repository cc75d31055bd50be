package mutant

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// isCode reports whether err is a service error with one of the given codes.
func isCode(err error, codes ...string) bool {
	e, ok := driver.AsError(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if e.Code == c {
			return true
		}
	}
	return false
}

// isMissingEntity reports whether err says that an entity (not its table) does not exist.
func isMissingEntity(err error) bool {
	e, ok := driver.AsError(err)
	return ok && e.Status == 404 && e.Code != spec.ErrTableNotFound.Code
}

// raceWindow widens the gap between a check and the write it guards, as a network round
// trip would; concurrent specs then see the race a check-then-act backend has, also when
// the race detector slows the goroutines that start them.
const raceWindow = 10 * time.Millisecond

// stepPause separates the steps of a transaction applied one request at a time.
const stepPause = 2 * time.Millisecond

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// updateMapper rewrites the mode and If-Match of Update Entity and of transaction operations.
type updateMapper struct {
	api.Backend
	update func(mode api.UpdateMode, ifMatch string) (api.UpdateMode, string)
	batch  func(op api.BatchOp) api.BatchOp
	delete func(ifMatch string) string
}

func (m *updateMapper) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if m.update != nil {
		mode, ifMatch = m.update(mode, ifMatch)
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *updateMapper) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if m.delete != nil {
		ifMatch = m.delete(ifMatch)
	}
	return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
}

func (m *updateMapper) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	if m.batch == nil {
		return m.Backend.SubmitBatch(ctx, table, ops)
	}
	out := make([]api.BatchOp, len(ops))
	for i, op := range ops {
		out[i] = m.batch(op)
	}
	return m.Backend.SubmitBatch(ctx, table, out)
}

func anyIfConditional(ifMatch string) string {
	if ifMatch != "" {
		return api.IfMatchAny
	}
	return ifMatch
}

// Modification (EVIDENCE.md 2).
var (
	_ = define(Mutant{
		Name:        "merge-as-replace",
		Description: "performs Merge Entity and Insert Or Merge as a replace, dropping the properties not sent",
		Breaks:      []string{"modify.merge.keeps-omitted", "modify.insert-or-merge.merges", "pattern.impl.merge-or-replace", "parallel.merge.disjoint"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaRelationships, spec.AreaBatch, spec.AreaParallel},
	}, updatesAs(api.Replace), hooks{})

	_ = define(Mutant{
		Name:        "replace-as-merge",
		Description: "performs Update Entity and Insert Or Replace as a merge, keeping the properties not sent",
		Breaks:      []string{"modify.replace.removes-omitted", "modify.insert-or-replace.replaces", "pattern.impl.merge-or-replace"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaBatch},
	}, updatesAs(api.Merge), hooks{})

	_ = define(Mutant{
		Name:        "insert-conflict-upserts",
		Description: "turns the 409 of a duplicate Insert Entity into an Insert Or Replace",
		Breaks:      []string{"modify.insert.conflict", "parallel.insert.once"},
	}, func(b api.Backend) api.Backend { return &insertUpserts{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "delete-without-if-match",
		Description: "accepts Delete Entity without If-Match as an unconditional delete",
		Breaks:      []string{"modify.delete.requires-if-match"},
	}, func(b api.Backend) api.Backend {
		return &updateMapper{Backend: b, delete: func(ifMatch string) string {
			if ifMatch == "" {
				return api.IfMatchAny
			}
			return ifMatch
		}}
	}, hooks{raw: deleteWithoutIfMatchRaw})

	_ = define(Mutant{
		Name:        "delete-missing-succeeds",
		Description: "answers 204 to Delete Entity of an entity that does not exist (idempotent delete)",
		Breaks:      []string{"modify.delete.missing", "parallel.delete.once"},
		Areas:       []spec.Area{spec.AreaParallel, spec.AreaPatterns},
	}, func(b api.Backend) api.Backend { return &deleteMissingOK{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "update-missing-upserts",
		Description: "creates the entity when Update Entity or Merge Entity with If-Match finds none",
		Breaks:      []string{"modify.update.missing-status", "pattern.impl.update-needs-entity"},
	}, func(b api.Backend) api.Backend { return &updateUpserts{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "nulls-stored-as-empty-strings",
		Description: "stores a property sent as null as an empty string",
		Breaks:      []string{"entities.property.null-not-stored", "modify.replace.null-removes", "modify.merge.null-ignored"},
		Areas:       []spec.Area{spec.AreaBatch},
	}, func(b api.Backend) api.Backend {
		return &writeMapper{Backend: b, fn: func(e api.Entity) api.Entity {
			return mapValues(e, func(v api.Value) (api.Value, bool) {
				if v.Null {
					return api.String(""), true
				}
				return v, true
			})
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "stale-point-reads",
		Description: "serves Get Entity from a cache that writes do not invalidate, as a lagging read replica",
		Breaks:      []string{"entities.etag.changes", "modify.timestamp.advances", "modify.read-your-writes"},
	}, func(b api.Backend) api.Backend { return &staleReads{Backend: b, cache: map[entityKey]api.Entity{}} }, hooks{})

	_ = define(Mutant{
		Name:        "reads-touch-entity",
		Description: "records the last access on every Get Entity, which gives the entity a new ETag and Timestamp",
		Breaks:      []string{"entities.reads.stable"},
		Areas:       []spec.Area{spec.AreaModification},
	}, func(b api.Backend) api.Backend { return &touchOnRead{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "empty-partition-key-refused",
		Description: "refuses an empty PartitionKey with 400 OutOfRangeInput",
		Breaks:      []string{"entities.key.empty-partition-key"},
	}, func(b api.Backend) api.Backend { return &refuseEmptyPK{Backend: b} }, hooks{})
)

type insertUpserts struct{ api.Backend }

func (m *insertUpserts) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if !isCode(err, spec.ErrEntityAlreadyExists.Code) {
		return got, err
	}
	if _, err := m.Backend.UpdateEntity(ctx, table, e, api.Replace, ""); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
}

type deleteMissingOK struct{ api.Backend }

func (m *deleteMissingOK) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	err := m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	if isMissingEntity(err) {
		return nil
	}
	return err
}

type updateUpserts struct{ api.Backend }

func (m *updateUpserts) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	if ifMatch != "" && isMissingEntity(err) {
		return m.Backend.UpdateEntity(ctx, table, e, mode, "")
	}
	return etag, err
}

type staleReads struct {
	api.Backend
	mu    sync.Mutex
	cache map[entityKey]api.Entity
}

func (m *staleReads) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	k := keyOf(table, pk, rk)
	if sel == nil {
		m.mu.Lock()
		e, ok := m.cache[k]
		m.mu.Unlock()
		if ok {
			return e.Clone(), nil
		}
	}
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil && sel == nil {
		m.mu.Lock()
		m.cache[k] = e.Clone()
		m.mu.Unlock()
	}
	return e, err
}

type touchOnRead struct{ api.Backend }

func (m *touchOnRead) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	_, _ = m.Backend.UpdateEntity(ctx, table, api.NewEntity(pk, rk, nil), api.Merge, api.IfMatchAny)
	return m.Backend.GetEntity(ctx, table, pk, rk, sel)
}

type refuseEmptyPK struct{ api.Backend }

func errEmptyPK() error { return spec.ErrOutOfRangeInput.New() }

func (m *refuseEmptyPK) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if e.PartitionKey == "" {
		return api.Entity{}, errEmptyPK()
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *refuseEmptyPK) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if e.PartitionKey == "" {
		return "", errEmptyPK()
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *refuseEmptyPK) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for i, op := range ops {
		if op.Entity.PartitionKey == "" {
			return nil, spec.ErrOutOfRangeInput.New().AtIndex(i)
		}
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

// Concurrency (EVIDENCE.md 2.3).
var (
	_ = define(Mutant{
		Name:        "if-match-ignored-on-replace",
		Description: "ignores If-Match on Update Entity (replace) only; merge and delete honour it",
		Breaks:      []string{"concurrency.stale-etag.replace"},
	}, func(b api.Backend) api.Backend {
		return &updateMapper{Backend: b, update: func(mode api.UpdateMode, ifMatch string) (api.UpdateMode, string) {
			if mode == api.Replace {
				ifMatch = anyIfConditional(ifMatch)
			}
			return mode, ifMatch
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "if-match-ignored",
		Description: "treats every If-Match as *, on replace, merge, delete and in transactions",
		Breaks: []string{"concurrency.stale-etag.replace", "concurrency.stale-etag.merge", "concurrency.stale-etag.delete",
			"concurrency.single-winner", "batch.condition.etag", "pattern.impl.optimistic-concurrency",
			// Its updaters meet at a barrier before they submit, so that every run loses updates.
			"pattern.index-entities.same-partition-concurrent"},
		Areas: []spec.Area{spec.AreaPatterns, spec.AreaRelationships},
	}, func(b api.Backend) api.Backend {
		return &updateMapper{Backend: b,
			update: func(mode api.UpdateMode, ifMatch string) (api.UpdateMode, string) {
				return mode, anyIfConditional(ifMatch)
			},
			delete: anyIfConditional,
			batch: func(op api.BatchOp) api.BatchOp {
				op.IfMatch = anyIfConditional(op.IfMatch)
				return op
			}}
	}, hooks{})

	_ = define(Mutant{
		Name: "check-then-act",
		Description: "checks If-Match with a read and then writes unconditionally: right one client at a time, " +
			"but concurrent writers with the same ETag all succeed",
		Breaks: []string{"concurrency.single-winner", "parallel.merge.counter", "pattern.data-series.concurrent", "pattern.index-entities.separate-partition"},
		Areas:  []spec.Area{spec.AreaParallel, spec.AreaPatterns},
	}, func(b api.Backend) api.Backend { return &checkThenAct{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "check-then-insert",
		Description: "checks that an entity is missing with a read and then upserts it: concurrent inserts of one entity all succeed",
		Breaks:      []string{"parallel.insert.once"},
	}, func(b api.Backend) api.Backend { return &checkThenInsert{Backend: b} }, hooks{})
)

type checkThenAct struct{ api.Backend }

// check answers the If-Match of a write from a read: 404 for a missing entity, 412 for a
// stale ETag.
func (m *checkThenAct) check(ctx context.Context, table, pk, rk, ifMatch string) error {
	cur, err := m.Backend.GetEntity(ctx, table, pk, rk, nil)
	if err != nil {
		return err
	}
	if ifMatch != api.IfMatchAny && ifMatch != cur.ETag {
		return spec.ErrUpdateCondition.New()
	}
	sleep(ctx, raceWindow)
	return nil
}

func (m *checkThenAct) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if ifMatch == "" {
		return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	if err := m.check(ctx, table, e.PartitionKey, e.RowKey, ifMatch); err != nil {
		return "", err
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, "")
}

func (m *checkThenAct) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if ifMatch == "" {
		return m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	}
	if err := m.check(ctx, table, pk, rk, ifMatch); err != nil {
		return err
	}
	if err := m.Backend.DeleteEntity(ctx, table, pk, rk, api.IfMatchAny); err != nil && !isMissingEntity(err) {
		return err
	}
	return nil
}

type checkThenInsert struct{ api.Backend }

func (m *checkThenInsert) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	_, err := m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
	switch {
	case err == nil:
		return api.Entity{}, spec.ErrEntityAlreadyExists.New()
	case !isMissingEntity(err):
		// A refused key, a missing table: let the real insert answer.
		return m.Backend.InsertEntity(ctx, table, e)
	}
	sleep(ctx, raceWindow)
	if _, err := m.Backend.UpdateEntity(ctx, table, e, api.Replace, ""); err != nil {
		return api.Entity{}, err
	}
	return m.Backend.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
}

// updatesAs returns a decorator that performs every update, upsert and their transaction
// operations in mode: merges as replaces (mode Replace) or replaces as merges (mode Merge).
func updatesAs(mode api.UpdateMode) func(api.Backend) api.Backend {
	kinds := map[api.BatchOpKind]api.BatchOpKind{api.BatchMerge: api.BatchReplace, api.BatchInsertOrMerge: api.BatchInsertOrReplace}
	if mode == api.Merge {
		kinds = map[api.BatchOpKind]api.BatchOpKind{api.BatchReplace: api.BatchMerge, api.BatchInsertOrReplace: api.BatchInsertOrMerge}
	}
	return func(b api.Backend) api.Backend {
		return &updateMapper{Backend: b,
			update: func(_ api.UpdateMode, ifMatch string) (api.UpdateMode, string) { return mode, ifMatch },
			batch: func(op api.BatchOp) api.BatchOp {
				if k, ok := kinds[op.Kind]; ok {
					op.Kind = k
				}
				return op
			}}
	}
}

// deleteWithoutIfMatchRaw sends a raw DELETE of an entity without If-Match as one with
// If-Match *, the same fault over HTTP (signed afterwards by the wrapped Do).
func deleteWithoutIfMatchRaw(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodDelete && strings.Contains(req.URL.Path, "(") && req.Header.Get("If-Match") == "" {
		req.Header.Set("If-Match", api.IfMatchAny)
	}
	return do(req)
}

// refuseEmptyRK refuses an entity with an empty RowKey with 400 OutOfRangeInput, as a store
// that cannot hold an empty string as a key.
type refuseEmptyRK struct{ api.Backend }

func (m *refuseEmptyRK) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	if e.RowKey == "" {
		return api.Entity{}, spec.ErrOutOfRangeInput.New()
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

func (m *refuseEmptyRK) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	if e.RowKey == "" {
		return "", spec.ErrOutOfRangeInput.New()
	}
	return m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
}

func (m *refuseEmptyRK) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	for i, op := range ops {
		if op.Entity.RowKey == "" {
			return nil, spec.ErrOutOfRangeInput.New().AtIndex(i)
		}
	}
	return m.Backend.SubmitBatch(ctx, table, ops)
}

// An empty RowKey MAY be refused (entities.key.empty-row-key); the ordering rule says it
// SHOULD be accepted and sort first.
var _ = define(Mutant{
	Name:        "empty-row-key-refused",
	Description: "refuses an empty RowKey with 400 OutOfRangeInput",
	Breaks:      []string{"ordering.empty-row-key"},
}, func(b api.Backend) api.Backend { return &refuseEmptyRK{Backend: b} }, hooks{})
