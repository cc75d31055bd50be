package mutant

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// sysState is what a decorator shows of an entity's system properties instead of what the
// wrapped backend keeps: a frozen ETag or Timestamp.
type sysState[T any] struct {
	mu    sync.Mutex
	shown map[entityKey]T
}

func newSysState[T any]() *sysState[T] { return &sysState[T]{shown: map[entityKey]T{}} }

// show returns the value shown for k, recording v when none is.
func (s *sysState[T]) show(k entityKey, v T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.shown[k]; ok {
		return old
	}
	s.shown[k] = v
	return v
}

func (s *sysState[T]) set(k entityKey, v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown[k] = v
}

func (s *sysState[T]) get(k entityKey) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.shown[k]
	return v, ok
}

func (s *sysState[T]) forget(k entityKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.shown, k)
}

// etagFrozen keeps showing the ETag an entity got when it was created: updates do not
// change it, and a conditional write with it always matches.
type etagFrozen struct {
	api.Backend
	s *sysState[string]
}

func (m *etagFrozen) ifMatch(ctx context.Context, table, pk, rk, ifMatch string) string {
	if ifMatch == "" || ifMatch == api.IfMatchAny {
		return ifMatch
	}
	if shown, ok := m.s.get(keyOf(table, pk, rk)); ok && shown == ifMatch {
		if cur, err := m.Backend.GetEntity(ctx, table, pk, rk, nil); err == nil {
			return cur.ETag
		}
	}
	return ifMatch
}

func (m *etagFrozen) showEntity(table string) func(e *api.Entity) {
	return func(e *api.Entity) {
		if e.ETag != "" {
			e.ETag = m.s.show(keyOf(table, e.PartitionKey, e.RowKey), e.ETag)
		}
	}
}

func (m *etagFrozen) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		m.s.set(keyOf(table, e.PartitionKey, e.RowKey), got.ETag)
	}
	return got, err
}

func (m *etagFrozen) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, m.ifMatch(ctx, table, e.PartitionKey, e.RowKey, ifMatch))
	if err != nil {
		return etag, err
	}
	return m.s.show(keyOf(table, e.PartitionKey, e.RowKey), etag), nil
}

func (m *etagFrozen) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	err := m.Backend.DeleteEntity(ctx, table, pk, rk, m.ifMatch(ctx, table, pk, rk, ifMatch))
	if err == nil {
		m.s.forget(keyOf(table, pk, rk))
	}
	return err
}

func (m *etagFrozen) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		m.showEntity(table)(&e)
	}
	return e, err
}

func (m *etagFrozen) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil {
		mapEntities(p.Entities, m.showEntity(table))
	}
	return p, err
}

func (m *etagFrozen) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	in := make([]api.BatchOp, len(ops))
	for i, op := range ops {
		in[i] = op
		in[i].IfMatch = m.ifMatch(ctx, table, op.Entity.PartitionKey, op.Entity.RowKey, op.IfMatch)
	}
	rs, err := m.Backend.SubmitBatch(ctx, table, in)
	if err != nil {
		return rs, err
	}
	for i := range rs {
		if i >= len(ops) {
			break
		}
		k := keyOf(table, ops[i].Entity.PartitionKey, ops[i].Entity.RowKey)
		switch ops[i].Kind {
		case api.BatchInsert:
			m.s.set(k, rs[i].ETag)
		case api.BatchDelete:
			m.s.forget(k)
		default:
			if rs[i].ETag != "" {
				rs[i].ETag = m.s.show(k, rs[i].ETag)
			}
		}
		if rs[i].Entity != nil {
			m.showEntity(table)(rs[i].Entity)
		}
	}
	return rs, nil
}

// timestampShown replaces the Timestamp of the entities a backend returns by the one the
// state shows: the first one seen (timestamp-frozen) or the client's (timestamp-from-client).
type timestampShown struct {
	api.Backend
	s *sysState[time.Time]
	// frozen records the Timestamp of every entity when first seen; otherwise only the
	// client's Timestamps are shown.
	frozen bool
}

func (m *timestampShown) showEntity(table string) func(e *api.Entity) {
	return func(e *api.Entity) {
		if e.Timestamp.IsZero() {
			return
		}
		k := keyOf(table, e.PartitionKey, e.RowKey)
		if m.frozen {
			e.Timestamp = m.s.show(k, e.Timestamp)
		} else if ts, ok := m.s.get(k); ok {
			e.Timestamp = ts
		}
	}
}

func (m *timestampShown) written(table string, e api.Entity, created time.Time) {
	k := keyOf(table, e.PartitionKey, e.RowKey)
	switch {
	case !m.frozen && !e.Timestamp.IsZero():
		m.s.set(k, e.Timestamp)
	case !m.frozen:
		m.s.forget(k)
	case !created.IsZero():
		m.s.set(k, created)
	}
}

func (m *timestampShown) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		m.written(table, e, got.Timestamp)
		m.showEntity(table)(&got)
	}
	return got, err
}

func (m *timestampShown) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	if err == nil {
		m.written(table, e, time.Time{})
	}
	return etag, err
}

func (m *timestampShown) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	err := m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch)
	if err == nil {
		m.s.forget(keyOf(table, pk, rk))
	}
	return err
}

func (m *timestampShown) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		m.showEntity(table)(&e)
	}
	return e, err
}

func (m *timestampShown) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil {
		mapEntities(p.Entities, m.showEntity(table))
	}
	return p, err
}

func (m *timestampShown) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	rs, err := m.Backend.SubmitBatch(ctx, table, ops)
	if err != nil {
		return rs, err
	}
	for i := range rs {
		if i >= len(ops) {
			break
		}
		switch ops[i].Kind {
		case api.BatchDelete:
			m.s.forget(keyOf(table, ops[i].Entity.PartitionKey, ops[i].Entity.RowKey))
		case api.BatchRetrieve:
		default:
			var created time.Time
			if rs[i].Entity != nil && ops[i].Kind == api.BatchInsert {
				created = rs[i].Entity.Timestamp
			}
			m.written(table, ops[i].Entity, created)
		}
		if rs[i].Entity != nil {
			m.showEntity(table)(rs[i].Entity)
		}
	}
	return rs, nil
}

// clientTimestampHook records the Timestamp property of entity bodies sent over raw HTTP,
// so that later reads show it (timestamp-from-client).
func clientTimestampHook(s *sysState[time.Time]) func(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
	return func(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
		switch req.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE":
		default:
			return do(req)
		}
		if req.Body == nil {
			return do(req)
		}
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var props struct {
			PartitionKey *string
			RowKey       *string
			Timestamp    *string
		}
		resp, err := do(req)
		if err != nil || resp.StatusCode >= 300 || json.Unmarshal(body, &props) != nil || props.Timestamp == nil {
			return resp, err
		}
		ts, perr := time.Parse(time.RFC3339Nano, *props.Timestamp)
		if perr != nil || props.PartitionKey == nil || props.RowKey == nil {
			return resp, err
		}
		s.set(keyOf(tableOfPath(req.URL.Path), *props.PartitionKey, *props.RowKey), ts.UTC())
		return resp, err
	}
}

// tableOfPath returns the table a Table REST path names: the last segment, without an
// entity's "(PartitionKey=...,RowKey=...)".
func tableOfPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if i := strings.IndexByte(p, '('); i >= 0 {
		p = p[:i]
	}
	return p
}

var (
	_ = define(Mutant{
		Name:        "etag-unchanged-on-update",
		Description: "keeps an entity's ETag from its creation: updates do not change it, so a stale ETag still matches",
		Breaks:      []string{"entities.etag.changes", "modify.etag.changes", "concurrency.stale-etag.replace", "concurrency.stale-etag.merge", "parallel.etag.distinct"},
		Areas:       []spec.Area{spec.AreaParallel},
	}, func(b api.Backend) api.Backend { return &etagFrozen{Backend: b, s: newSysState[string]()} }, hooks{})

	_ = define(Mutant{
		Name:        "timestamp-frozen",
		Description: "keeps an entity's Timestamp from its creation: updates do not move it",
		Breaks:      []string{"entities.timestamp.increases", "modify.timestamp.advances"},
	}, func(b api.Backend) api.Backend {
		return &timestampShown{Backend: b, s: newSysState[time.Time](), frozen: true}
	}, hooks{})
)

// timestamp-from-client needs the state shared by the decorator and the raw hook, so it
// builds its Wrap by hand.
var _ = func() Mutant {
	var wrap func(api.Backend) api.Backend
	wrap = func(inner api.Backend) api.Backend {
		s := newSysState[time.Time]()
		return withCapabilities(inner, &timestampShown{Backend: inner, s: s}, wrap, hooks{raw: clientTimestampHook(s)})
	}
	return register(Mutant{
		Name:        "timestamp-from-client",
		Description: "stores the Timestamp a client sends instead of setting its own",
		Breaks:      []string{"entities.timestamp.client-ignored"},
		Base:        "reference-http",
		LabelFilter: "area:entities",
		Wrap:        wrap,
	})
}()
