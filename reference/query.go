package reference

import (
	"context"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
)

// ctxCheckInterval is how many index entries a scan visits between checks of its context.
const ctxCheckInterval = 1024

// QueryEntities returns one page of a query (QE, QTP): the entities that match q.Filter, in
// PartitionKey then RowKey order (api.CompareKeyStrings), at most q.Top (or 1000) of them,
// projected by q.Select, and a continuation when more match (see choices.go, "Pages").
// The scan seeks the index to the filter's key range and to the continuation's position;
// a continuation names a key, so it resumes exactly after the last entity returned even
// when entities were written in between.
func (s *Service) QueryEntities(ctx context.Context, tableName string, q api.Query) (api.Page, error) {
	if err := ctx.Err(); err != nil {
		return api.Page{}, err
	}
	limit, err := entityPageLimit(q.Top)
	if err != nil {
		return api.Page{}, err
	}
	filter, err := compileFilter(q.Filter)
	if err != nil {
		return api.Page{}, err
	}
	proj, err := compileSelect(q.Select)
	if err != nil {
		return api.Page{}, err
	}
	pos, resume, err := decodeContinuation(q.Continuation)
	if err != nil {
		return api.Page{}, errBadContinuation()
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return api.Page{}, serr
	}

	page := api.Page{Entities: []api.Entity{}}
	kr := filter.KeyRange()
	if kr.Empty || limit == 0 {
		// $top=0 is an empty page without a continuation (EVIDENCE.md 13, E-top-zero).
		return page, nil
	}
	var from api.Key
	if kr.HasPKLow {
		from.PartitionKey = kr.PKLow
		if kr.HasRKLow {
			from.RowKey = kr.RKLow
		}
	}
	if resume && from.Less(pos) {
		from = pos
	}
	if filter.IsKeyRange() {
		return s.scanKeyRange(ctx, t, kr, from, limit, proj)
	}

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return api.Page{}, spec.ErrTableNotFound.New()
	}
	visited := 0
	var scanErr error
	spare := recycledProperties()
	t.entities.Ascend(from, func(rec store.Record) bool {
		if visited++; visited%ctxCheckInterval == 0 {
			if scanErr = ctx.Err(); scanErr != nil {
				return false
			}
		}
		pk, rk := rec.PartitionKey(), rec.RowKey()
		if beyondRange(kr, pk, rk) {
			return false
		}
		e := rec.EntityInto(s.names, spare)
		spare = nil
		if !filter.Match(&e) {
			clear(e.Properties) // the next entity's, since this one is not kept
			spare = e.Properties
			return true
		}
		n := len(page.Entities)
		if n == limit || (s.partitionBoundaryPages && n > 0 && pk != page.Entities[n-1].PartitionKey) {
			page.Continuation = encodeContinuation(api.Key{PartitionKey: pk, RowKey: rk})
			return false
		}
		page.Entities = append(page.Entities, e)
		return true
	})
	if spare != nil {
		propertyMaps.Put(spare)
	}
	if scanErr != nil {
		return api.Page{}, scanErr
	}
	// Project after the boundary test above, which reads the unprojected PartitionKey.
	for i := range page.Entities {
		proj.apply(&page.Entities[i])
	}
	return page, nil
}

// scanKeyRange answers a query whose filter is exactly the key range kr (IsKeyRange):
// it collects the entities in the range under the read lock without decoding them, and
// decodes them into a page of the exact size after releasing it (a record's bytes are
// never rewritten).
func (s *Service) scanKeyRange(ctx context.Context, t *table, kr odata.KeyRange, from api.Key, limit int, proj projection) (api.Page, error) {
	page := api.Page{Entities: []api.Entity{}}
	hits := hitPool.Get().(*[]store.Record)
	defer func() {
		clear(*hits) // do not hold arena slabs from the pool
		*hits = (*hits)[:0]
		hitPool.Put(hits)
	}()

	bounds := kr // the bounds the scan must still test: a pinned partition bounds the scan
	pinnedPK, pinned := kr.PinnedPartition()
	if pinned {
		bounds.HasPKLow, bounds.HasPKHigh = false, false
	}
	lowerRK := kr.HasRKLow && !kr.RKLowInclusive
	visited := 0
	var scanErr error
	lastPK := ""
	visit := func(rec store.Record) bool {
		if visited++; visited%ctxCheckInterval == 0 {
			if scanErr = ctx.Err(); scanErr != nil {
				return false
			}
		}
		pk, rk := rec.PartitionKey(), rec.RowKey()
		if bounds.HasPKHigh {
			if c := store.CompareKeys(pk, kr.PKHigh); c > 0 || (c == 0 && !kr.PKHighInclusive) {
				return false
			}
		}
		if kr.HasRKHigh { // RowKey bounds come only with a pinned PartitionKey
			if c := store.CompareKeys(rk, kr.RKHigh); c > 0 || (c == 0 && !kr.RKHighInclusive) {
				return false
			}
		}
		if (bounds.HasPKLow && !kr.PKLowInclusive && pk == kr.PKLow) || (lowerRK && rk == kr.RKLow) {
			return true // on an exclusive lower bound
		}
		n := len(*hits)
		if n == limit || (s.partitionBoundaryPages && n > 0 && pk != lastPK) {
			page.Continuation = encodeContinuation(api.Key{PartitionKey: pk, RowKey: rk})
			return false
		}
		*hits = append(*hits, rec)
		lastPK = pk
		return true
	}

	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return api.Page{}, spec.ErrTableNotFound.New()
	}
	if pinned {
		t.entities.AscendPartition(pinnedPK, from, visit)
	} else {
		t.entities.Ascend(from, visit)
	}
	t.mu.RUnlock()
	if scanErr != nil {
		return api.Page{}, scanErr
	}

	page.Entities = make([]api.Entity, len(*hits))
	recycled := true // until the pool runs dry: a miss costs more than a hit
	for i, rec := range *hits {
		var props map[string]api.Value
		if recycled {
			props = recycledProperties()
			recycled = props != nil
		}
		e := &page.Entities[i]
		*e = rec.EntityInto(s.names, props)
		proj.apply(e)
	}
	return page, nil
}

// RecyclePage hands back a page that QueryEntities returned, once its caller and everything
// the caller gave it to are done with the page: its entities' property maps are emptied and
// decode the entities of later queries. Handing a page back is optional and is done at
// most once; an entity or property map of it must not be used afterwards.
func (s *Service) RecyclePage(p api.Page) {
	for i := range p.Entities {
		if m := p.Entities[i].Properties; m != nil {
			clear(m)
			propertyMaps.Put(m)
		}
		p.Entities[i].Properties = nil
	}
}

// RecycleEntity hands back an entity that InsertEntity or GetEntity returned, once its
// caller and everything the caller gave it to are done with it, as RecyclePage does a page:
// its property map decodes later entities. It must not be used afterwards. A Service that
// takes entities back keeps nothing of an entity given to InsertEntity or UpdateEntity once
// the call returns, so that its caller may reuse that entity's map too (tableserver does).
func (s *Service) RecycleEntity(e api.Entity) {
	if e.Properties != nil {
		clear(e.Properties)
		propertyMaps.Put(e.Properties)
	}
}

// propertyMaps holds the emptied property maps of pages and entities handed back by
// RecyclePage and RecycleEntity, and the map a scan decoded an unmatched entity into last.
var propertyMaps sync.Pool

// recycledProperties returns an empty property map from propertyMaps, or nil when it has
// none (the decoder then makes one).
func recycledProperties() map[string]api.Value {
	m, _ := propertyMaps.Get().(map[string]api.Value)
	return m
}

// hitPool recycles the lists of records a key-range scan collects.
var hitPool = sync.Pool{New: func() any { return new([]store.Record) }}

// beyondRange reports whether the entity (pk, rk), and so every entity after it, lies above
// kr's upper bounds. RowKey bounds come only with a pinned PartitionKey (odata.KeyRange).
func beyondRange(kr odata.KeyRange, pk, rk string) bool {
	if kr.HasPKHigh {
		c := store.CompareKeys(pk, kr.PKHigh)
		if c > 0 || (c == 0 && !kr.PKHighInclusive) {
			return true
		}
	}
	if kr.HasRKHigh {
		if _, pinned := kr.PinnedPartition(); pinned {
			c := store.CompareKeys(rk, kr.RKHigh)
			if c > 0 || (c == 0 && !kr.RKHighInclusive) {
				return true
			}
		}
	}
	return false
}
