package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
	"sync/atomic"
)

// macs keeps keyed HMAC-SHA256 states for reuse: keying one costs two SHA-256 blocks and
// several allocations, and every request is signed (client) and verified (server) with one
// of a handful of account keys.
var macs macCache

// maxCachedKeys bounds how many keys keep states, so that a stream of distinct keys (a
// fuzzer, a hostile client naming many accounts) cannot grow the cache.
const maxCachedKeys = 64

type macCache struct {
	mu    sync.Mutex // serializes writers of pools
	pools atomic.Pointer[map[string]*sync.Pool]
}

// get returns an HMAC-SHA256 keyed with key, in its initial state.
func (c *macCache) get(key []byte) hash.Hash {
	if p := c.pool(key); p != nil {
		if m, ok := p.Get().(hash.Hash); ok {
			return m
		}
	}
	return hmac.New(sha256.New, key)
}

// put returns m, keyed with key, for reuse.
func (c *macCache) put(key []byte, m hash.Hash) {
	m.Reset()
	if p := c.pool(key); p != nil {
		p.Put(m)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.pools.Load()
	var n int
	if old != nil {
		n = len(*old)
		if _, ok := (*old)[string(key)]; ok {
			return
		}
	}
	if n >= maxCachedKeys {
		return
	}
	next := make(map[string]*sync.Pool, n+1)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	p := &sync.Pool{}
	p.Put(m)
	next[string(key)] = p
	c.pools.Store(&next)
}

func (c *macCache) pool(key []byte) *sync.Pool {
	if m := c.pools.Load(); m != nil {
		return (*m)[string(key)]
	}
	return nil
}
