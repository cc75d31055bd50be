package wire

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"hash/maphash"
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

// macState is an HMAC-SHA256 keyed with one key, in its initial state, with room for the
// text to sign and the sum, so that signing allocates nothing.
type macState struct {
	mac  hash.Hash
	text []byte
	sum  [sha256.Size]byte
}

// appendSignature appends Base64(HMAC-SHA256(st.text)) to dst.
func (st *macState) appendSignature(dst []byte) []byte {
	st.mac.Write(st.text)
	return base64.StdEncoding.AppendEncode(dst, st.mac.Sum(st.sum[:0]))
}

// maxKeptText bounds the text a kept state holds on to.
const maxKeptText = 4 << 10

// get returns a state keyed with key.
func (c *macCache) get(key []byte) *macState {
	if p := c.pool(key); p != nil {
		if st, ok := p.Get().(*macState); ok {
			return st
		}
	}
	return &macState{mac: hmac.New(sha256.New, key)}
}

// put returns st, keyed with key, for reuse.
func (c *macCache) put(key []byte, st *macState) {
	st.mac.Reset()
	if cap(st.text) > maxKeptText {
		st.text = nil
	}
	if p := c.pool(key); p != nil {
		p.Put(st)
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
	p.Put(st)
	next[string(key)] = p
	c.pools.Store(&next)
}

func (c *macCache) pool(key []byte) *sync.Pool {
	if m := c.pools.Load(); m != nil {
		return (*m)[string(key)]
	}
	return nil
}

// verified keeps the signatures of the texts verified last: a client's requests to one
// resource within one second have the same string to sign (Shared Key Lite signs the date
// and the resource alone), so that a stream of them costs one HMAC, not one each. A text
// has a set of signatureWays slots; a text its set does not hold is signed afresh and
// takes the slot of its set used least recently. A slot, once stored, is never changed:
// it is read without a lock, and a text signed afresh gets a slot of its own.
var verified signatureCache

// signatureSets and signatureWays make the slots of the cache (signatureSets a power of
// two): enough that the resources a client writes to within a second seldom contend for a
// set.
const (
	signatureSets = 512
	signatureWays = 2
)

// maxCachedText bounds the texts the cache keeps, so that the cache holds on to well under
// a megabyte (signatureSets*signatureWays times the text and a key).
const maxCachedText = 512

type signatureCache struct {
	seed maphash.Seed
	sets [signatureSets]signatureSet
}

type signatureSet struct {
	slots  [signatureWays]atomic.Pointer[signatureSlot]
	recent atomic.Uint32 // the slot used last
}

// signatureSlot is the signature of text under key.
type signatureSlot struct {
	key  []byte
	text []byte
	sig  [signatureLen]byte
}

func init() { verified.seed = maphash.MakeSeed() }

// signature returns Base64(HMAC-SHA256(key, text)), from the cache when the set of text
// holds it. The caller must not change it.
func (c *signatureCache) signature(key, text []byte) *[signatureLen]byte {
	if len(text) > maxCachedText {
		var sig [signatureLen]byte
		appendFreshSignature(sig[:0], key, text)
		return &sig
	}
	set := &c.sets[maphash.Bytes(c.seed, text)&(signatureSets-1)]
	for i := range set.slots {
		if s := set.slots[i].Load(); s != nil && bytes.Equal(s.text, text) && bytes.Equal(s.key, key) {
			if set.recent.Load() != uint32(i) {
				set.recent.Store(uint32(i))
			}
			return &s.sig
		}
	}
	held := make([]byte, len(key)+len(text))
	s := &signatureSlot{key: held[:len(key):len(key)], text: held[len(key):]}
	copy(s.key, key)
	copy(s.text, text)
	appendFreshSignature(s.sig[:0], key, text)
	i := (set.recent.Load() + 1) % signatureWays
	set.slots[i].Store(s)
	set.recent.Store(i)
	return &s.sig
}

// appendFreshSignature appends Base64(HMAC-SHA256(key, text)) to dst, signed with a kept
// state.
func appendFreshSignature(dst, key, text []byte) []byte {
	st := macs.get(key)
	st.text = append(st.text[:0], text...)
	dst = st.appendSignature(dst)
	macs.put(key, st)
	return dst
}
