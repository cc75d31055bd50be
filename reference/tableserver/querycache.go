package tableserver

import (
	"hash/maphash"
	"net/url"
	"strings"
	"sync/atomic"
)

// queryCache keeps the parsed forms of recent query strings: clients repeat the same few
// (a filter, a timeout), and parsing one costs a map and a string per parameter. It is a
// direct-mapped table of queryCacheSlots entries, so that it is bounded and a lookup takes
// no lock. The url.Values it returns are shared: nothing may change them.
type queryCache struct {
	seed  maphash.Seed
	slots [queryCacheSlots]atomic.Pointer[parsedQuery]
}

type parsedQuery struct {
	raw    string
	values url.Values
}

const (
	queryCacheSlots = 256 // a power of two
	// maxCachedQuery bounds the queries kept; longer ones (long filters, SAS tokens with
	// key ranges) are parsed each time.
	maxCachedQuery = 512
)

func newQueryCache() *queryCache { return &queryCache{seed: maphash.MakeSeed()} }

// parse returns url.ParseQuery(raw), read-only.
func (c *queryCache) parse(raw string) (url.Values, error) {
	if len(raw) > maxCachedQuery {
		return url.ParseQuery(raw)
	}
	slot := &c.slots[maphash.String(c.seed, raw)&(queryCacheSlots-1)]
	if p := slot.Load(); p != nil && p.raw == raw {
		return p.values, nil
	}
	// A copy, so that what the slot keeps (raw and the unescaped values, which may be its
	// substrings) does not keep the request line alive, which may be far longer.
	raw = strings.Clone(raw)
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, err
	}
	slot.Store(&parsedQuery{raw: raw, values: q})
	return q, nil
}
