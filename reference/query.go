package reference

import (
	"context"

	"github.com/tableconform/conform/reference/api"
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
	limit, err := pageLimit(q.Top)
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
	if kr.Empty {
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
	start := probe(from.PartitionKey, from.RowKey)

	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return api.Page{}, spec.ErrTableNotFound.New()
	}
	visited := 0
	var scanErr error
	t.tree.AscendGreaterOrEqual(start, func(r record) bool {
		if visited++; visited%ctxCheckInterval == 0 {
			if scanErr = ctx.Err(); scanErr != nil {
				return false
			}
		}
		pk, rk := t.arena.keys(r)
		if beyondRange(kr, pk, rk) {
			return false
		}
		e := s.decode(t.arena, r)
		if !filter.Match(&e) {
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
	if scanErr != nil {
		return api.Page{}, scanErr
	}
	// Project after the boundary test above, which reads the unprojected PartitionKey.
	for i := range page.Entities {
		proj.apply(&page.Entities[i])
	}
	return page, nil
}

// beyondRange reports whether r, and so every entry after it, lies above kr's upper
// bounds. RowKey bounds come only with a pinned PartitionKey (odata.KeyRange).
func beyondRange(kr odata.KeyRange, pk, rk string) bool {
	if kr.HasPKHigh {
		c := api.CompareKeyStrings(pk, kr.PKHigh)
		if c > 0 || (c == 0 && !kr.PKHighInclusive) {
			return true
		}
	}
	if kr.HasRKHigh {
		if _, pinned := kr.PinnedPartition(); pinned {
			c := api.CompareKeyStrings(rk, kr.RKHigh)
			if c > 0 || (c == 0 && !kr.RKHighInclusive) {
				return true
			}
		}
	}
	return false
}
