package reference

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
)

// The query options are parsed and evaluated by reference/odata, so the HTTP layer and the
// in-process Service answer the same text with the same errors.

// compileFilter parses a Query Entities $filter; an empty one matches every entity.
// Parsed filters are kept by their text (see parsedFilters).
func compileFilter(filter string) (*odata.Filter, error) {
	if f := parsedFilters.get(filter); f != nil {
		return f, nil
	}
	if len(filter) <= maxCachedFilterText {
		// A copy, so that the cached text and the parsed filter's literals (substrings of
		// it) do not keep alive the request the text came in.
		filter = strings.Clone(filter)
	}
	f, err := odata.ParseFilter(filter)
	if err != nil {
		return nil, err
	}
	parsedFilters.put(filter, f)
	return f, nil
}

// filterCache keeps parsed filters by their text: clients send the same few filters over
// and over (every page of a query carries its filter), and a parsed odata.Filter is
// immutable, so one can serve every request. Only filters that parsed are kept, only texts
// up to maxCachedFilterText bytes, and at most maxCachedFilters of them: when full, the
// cache is emptied, so whatever clients send, it stays small.
type filterCache struct {
	mu sync.RWMutex
	m  map[string]*odata.Filter
}

const (
	maxCachedFilters    = 512
	maxCachedFilterText = 1024
)

var parsedFilters = &filterCache{m: map[string]*odata.Filter{}}

func (c *filterCache) get(text string) *odata.Filter {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[text]
}

func (c *filterCache) put(text string, f *odata.Filter) {
	if len(text) > maxCachedFilterText {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedFilters {
		clear(c.m)
	}
	c.m[text] = f
}

func (c *filterCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// compileTableFilter parses a Query Tables $filter; nil means no filter.
func compileTableFilter(filter string) (func(name string) bool, error) {
	if strings.TrimSpace(filter) == "" {
		return nil, nil
	}
	f, err := odata.ParseTableFilter(filter)
	if err != nil {
		return nil, err
	}
	return f.MatchTable, nil
}

// pageLimit returns the page size for a $top: 0 means none (the page cap); 1..1000 is
// itself; anything else is refused as odata.ParseTop refuses the text.
// entityPageLimit is pageLimit for Query Entities, where $top may also be absent (1000)
// or 0, which Storage answers with an empty page (EVIDENCE.md 13, E-top-zero).
func entityPageLimit(top api.Top) (int, error) {
	n, ok := top.Value()
	switch {
	case !ok:
		return spec.MaxPageSize, nil
	case n == 0:
		return 0, nil
	}
	return pageLimit(n)
}

func pageLimit(top int) (int, error) {
	if top == 0 {
		return spec.MaxPageSize, nil
	}
	n, err := odata.ParseTop(strconv.Itoa(top))
	if err != nil {
		return 0, err
	}
	return min(n, spec.MaxPageSize), nil
}

// projection is a parsed $select; nil selects everything.
type projection []string

// compileSelect parses a $select list (nil, empty or "*" select everything).
func compileSelect(sel []string) (projection, error) {
	if len(sel) == 0 {
		return nil, nil
	}
	names, err := odata.ParseSelect(strings.Join(sel, ","))
	if err != nil {
		return nil, err
	}
	return projection(names), nil
}

// apply projects e in place (EVIDENCE.md 3.4): only the selected properties stay; PartitionKey,
// RowKey and Timestamp come back only when selected (the others are flagged Absent); the
// ETag always comes back; a selected property the entity lacks comes back as null
// (selectMissingAsNull).
func (p projection) apply(e *api.Entity) {
	if p == nil {
		return
	}
	props := make(map[string]api.Value, len(p))
	absent := api.AbsentPartitionKey | api.AbsentRowKey | api.AbsentTimestamp
	for _, name := range p {
		switch name {
		case partitionKeyName:
			absent &^= api.AbsentPartitionKey
			continue
		case rowKeyName:
			absent &^= api.AbsentRowKey
			continue
		case timestampName:
			absent &^= api.AbsentTimestamp
			continue
		}
		if v, ok := e.Properties[name]; ok {
			props[name] = v
		} else if selectMissingAsNull {
			props[name] = api.Value{Null: true}
		}
	}
	if absent&api.AbsentPartitionKey != 0 {
		e.PartitionKey = ""
	}
	if absent&api.AbsentRowKey != 0 {
		e.RowKey = ""
	}
	if absent&api.AbsentTimestamp != 0 {
		e.Timestamp = time.Time{}
	}
	e.Properties = props
	e.Absent = absent
}
