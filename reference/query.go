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
	p, err := s.planQuery(ctx, tableName, q)
	if err != nil {
		return api.Page{}, err
	}
	return s.queryEntities(ctx, p)
}

// queryPlan is a query checked and resolved: its table, compiled filter and projection,
// the key range its filter allows, where the scan starts and the page size.
type queryPlan struct {
	t      *table
	filter *odata.Filter
	kr     odata.KeyRange
	from   api.Key
	limit  int
	proj   projection
}

// empty says whether the plan's page is empty without a continuation: an empty key range,
// or $top=0 (EVIDENCE.md 13, E-top-zero).
func (p queryPlan) empty() bool { return p.kr.Empty || p.limit == 0 }

// planQuery checks q and resolves it against the table, failing as QueryEntities does.
func (s *Service) planQuery(ctx context.Context, tableName string, q api.Query) (queryPlan, error) {
	if err := ctx.Err(); err != nil {
		return queryPlan{}, err
	}
	limit, err := entityPageLimit(q.Top)
	if err != nil {
		return queryPlan{}, err
	}
	filter, err := compileFilter(q.Filter)
	if err != nil {
		return queryPlan{}, err
	}
	proj, err := compileSelect(q.Select)
	if err != nil {
		return queryPlan{}, err
	}
	pos, resume, err := decodeContinuation(q.Continuation)
	if err != nil {
		return queryPlan{}, errBadContinuation()
	}
	t, serr := s.openTable(tableName)
	if serr != nil {
		return queryPlan{}, serr
	}
	p := queryPlan{t: t, filter: filter, kr: filter.KeyRange(), limit: limit, proj: proj}
	if p.kr.HasPKLow {
		p.from.PartitionKey = p.kr.PKLow
		if p.kr.HasRKLow {
			p.from.RowKey = p.kr.RKLow
		}
	}
	if resume && p.from.Less(pos) {
		p.from = pos
	}
	return p, nil
}

// queryEntities answers the query p plans.
func (s *Service) queryEntities(ctx context.Context, p queryPlan) (api.Page, error) {
	page := api.Page{Entities: []api.Entity{}}
	if p.empty() {
		return page, nil
	}
	if p.filter.IsKeyRange() {
		return s.scanKeyRange(ctx, p)
	}
	t, kr, filter, limit, proj := p.t, p.kr, p.filter, p.limit, p.proj
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return api.Page{}, spec.ErrTableNotFound.New()
	}
	visited := 0
	var scanErr error
	spare := recycledProperties()
	t.entities.Ascend(p.from, func(rec store.Record) bool {
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

// scanKeyRange answers a query whose filter is exactly a key range (IsKeyRange): it
// collects the entities in the range under the read lock without decoding them, and
// decodes them into a page of the exact size after releasing it (a record's bytes are
// never rewritten).
func (s *Service) scanKeyRange(ctx context.Context, p queryPlan) (api.Page, error) {
	hits := hitPool.Get().(*[]store.Record)
	defer releaseHits(hits)
	cont, err := s.collectKeyRange(ctx, p, hits)
	if err != nil {
		return api.Page{}, err
	}
	page := api.Page{Entities: make([]api.Entity, len(*hits)), Continuation: cont}
	recycled := true // until the pool runs dry: a miss costs more than a hit
	for i, rec := range *hits {
		var props map[string]api.Value
		if recycled {
			props = recycledProperties()
			recycled = props != nil
		}
		e := &page.Entities[i]
		*e = rec.EntityInto(s.names, props)
		p.proj.apply(e)
	}
	return page, nil
}

// releaseHits empties a list of records and hands it back to hitPool.
func releaseHits(hits *[]store.Record) {
	clear(*hits) // do not hold arena slabs from the pool
	*hits = (*hits)[:0]
	hitPool.Put(hits)
}

// collectKeyRange appends to hits the records of the page of p, whose filter is exactly its
// key range, and returns the page's continuation.
func (s *Service) collectKeyRange(ctx context.Context, p queryPlan, hits *[]store.Record) (api.Continuation, error) {
	var cont api.Continuation
	t, kr, limit := p.t, p.kr, p.limit
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
			cont = encodeContinuation(api.Key{PartitionKey: pk, RowKey: rk})
			return false
		}
		*hits = append(*hits, rec)
		lastPK = pk
		return true
	}

	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return api.Continuation{}, spec.ErrTableNotFound.New()
	}
	if pinned {
		t.entities.AscendPartition(pinnedPK, p.from, visit)
	} else {
		t.entities.Ascend(p.from, visit)
	}
	t.mu.RUnlock()
	return cont, scanErr
}

// QueryEntitiesListed answers q as QueryEntities does (the same entities, in the same
// order, with the same continuation) with each entity's properties listed in name order
// (api.ListedEntity) instead of put in a map. The page's entities are into's elements,
// overwritten, each one's Properties array reused, and grown as needed: into is the
// caller's buffer, and the page lives in it until the caller reuses it.
func (s *Service) QueryEntitiesListed(ctx context.Context, tableName string, q api.Query, into []api.ListedEntity) (api.ListedPage, error) {
	p, err := s.planQuery(ctx, tableName, q)
	if err != nil {
		return api.ListedPage{}, err
	}
	if p.empty() || p.proj != nil || !p.filter.IsKeyRange() {
		// The general path, its page listed afterwards.
		page, err := s.queryEntities(ctx, p)
		if err != nil {
			return api.ListedPage{}, err
		}
		listed := api.ListedPage{Entities: into[:0], Continuation: page.Continuation}
		for _, e := range page.Entities {
			listed.Entities = nextListed(listed.Entities)
			le := &listed.Entities[len(listed.Entities)-1]
			*le = listEntity(e, le.Properties)
		}
		s.RecyclePage(page)
		return listed, nil
	}
	hits := hitPool.Get().(*[]store.Record)
	defer releaseHits(hits)
	cont, err := s.collectKeyRange(ctx, p, hits)
	if err != nil {
		return api.ListedPage{}, err
	}
	listed := api.ListedPage{Entities: into[:0], Continuation: cont}
	for _, rec := range *hits {
		listed.Entities = nextListed(listed.Entities)
		rec.ListedInto(s.names, &listed.Entities[len(listed.Entities)-1])
	}
	return listed, nil
}

// nextListed returns ents one longer, the new element's Properties array the one that
// element had if ents had room.
func nextListed(ents []api.ListedEntity) []api.ListedEntity {
	if len(ents) < cap(ents) {
		return ents[:len(ents)+1]
	}
	return append(ents, api.ListedEntity{})
}

// listEntity returns e listed, its properties in props's array (reused, grown as needed).
func listEntity(e api.Entity, props []api.Property) api.ListedEntity {
	ps := props[:0]
	for n, v := range e.Properties {
		ps = append(ps, api.Property{Name: n, Value: v})
	}
	api.SortProperties(ps)
	return api.ListedEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Properties: ps, Absent: e.Absent}
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
