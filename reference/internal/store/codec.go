package store

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tableconform/conform/reference/api"
)

// The encoding of an entity, as it lies in a table's arena: the PartitionKey's bytes, the
// RowKey's bytes, then the body:
//
//	8 bytes   the Timestamp the writer was given, in api ticks, little endian
//	4 bytes   the entity's id in its table (table.go), little endian
//	3 bytes   the entity's size by api.EntitySize's accounting, little endian
//	1 byte    the number of properties
//	for each property:
//	  uvarint  the property name's id in the Names table
//	  1 byte   the EDM type (typeString...)
//	  payload  String, Binary: uvarint length, then the bytes; Boolean: 1 byte;
//	           DateTime: 8 bytes of ticks; Double: 8 bytes of IEEE bits; Guid: 16 bytes;
//	           Int32, Int64: zig-zag varint
//	n bytes   the ETag the writer was given, kept so that reads share it
//	1 byte    n

// Where the fields of a body's header lie; bodyHeader is the length of a body before its
// properties.
const (
	bodyID     = 8
	bodySize   = 12
	bodyCount  = 15
	bodyHeader = 16
)

// The capacity of a body's header: an entity of more properties or a larger size cannot be
// stored (Writer.Put). The caller's limits lie below.
const (
	MaxProperties = 1<<8 - 1
	MaxEntitySize = 1<<24 - 1
)

// The type byte of each EDM type in a body.
const (
	typeString byte = 1 + iota
	typeBinary
	typeBoolean
	typeDateTime
	typeDouble
	typeGuid
	typeInt32
	typeInt64
)

// typeCode returns t's type byte, or 0 for a type that is not one of the eight.
func typeCode(t api.EdmType) byte {
	switch t {
	case api.EdmString:
		return typeString
	case api.EdmInt32:
		return typeInt32
	case api.EdmDouble:
		return typeDouble
	case api.EdmDateTime:
		return typeDateTime
	case api.EdmInt64:
		return typeInt64
	case api.EdmBoolean:
		return typeBoolean
	case api.EdmGuid:
		return typeGuid
	case api.EdmBinary:
		return typeBinary
	}
	return 0
}

// edmTypes are the EDM types by type byte.
var edmTypes = [...]api.EdmType{
	typeString: api.EdmString, typeBinary: api.EdmBinary, typeBoolean: api.EdmBoolean,
	typeDateTime: api.EdmDateTime, typeDouble: api.EdmDouble, typeGuid: api.EdmGuid,
	typeInt32: api.EdmInt32, typeInt64: api.EdmInt64,
}

// Names interns property names, for every table of a service: a body stores a small id
// instead of the name, and a decoded entity shares the one interned copy. Reads are
// lock-free; a name seen for the first time takes a mutex. Ids are never reused, so a body
// stays decodable for ever. A Names is safe for concurrent use.
type Names struct {
	read  atomic.Pointer[map[string]uint32] // immutable snapshot of ids
	names atomic.Pointer[[]string]          // names by id; elements are never rewritten

	// recent holds names looked up lately, each in the slot recentSlot gives it, so that
	// the names most writes send are found without hashing them: a slot's name has the id
	// it holds. An entry, once made, is never rewritten.
	recent  [recentSlots]atomic.Pointer[nameID]
	entries atomic.Pointer[[]*nameID] // the entry of each name, by id; elements are never rewritten

	mu     sync.Mutex
	all    map[string]uint32 // every id; guarded by mu
	list   []string          // guarded by mu
	ids    []*nameID         // guarded by mu
	misses int               // look-ups that missed read since it was published; guarded by mu
}

// nameID is an interned name and its id.
type nameID struct {
	name  string
	id    uint32
	units uint32 // api.UTF16Len(name)
}

const recentSlots = 64

// recentSlot returns the slot of Names.recent that name is kept in.
func recentSlot(name string) int {
	if name == "" {
		return 0
	}
	return (len(name) + 3*int(name[0]) + 5*int(name[len(name)-1])) % recentSlots
}

// lookup returns name's id, if it has been interned.
func (n *Names) lookup(name string) (uint32, bool) {
	if e := n.entry(name); e != nil {
		return e.id, true
	}
	return 0, false
}

// entry returns name's entry, if it has been interned.
func (n *Names) entry(name string) *nameID {
	slot := &n.recent[recentSlot(name)]
	if r := slot.Load(); r != nil && r.name == name {
		return r
	}
	id, ok := (*n.read.Load())[name]
	if !ok {
		return nil
	}
	e := (*n.entries.Load())[id]
	slot.Store(e)
	return e
}

// NewNames returns an empty name table.
func NewNames() *Names {
	n := &Names{all: map[string]uint32{}}
	n.read.Store(&map[string]uint32{})
	n.names.Store(&[]string{})
	n.entries.Store(&[]*nameID{})
	return n
}

// Known reports whether name has been interned: some entity has been encoded with a
// property of that name (possibly one that was never committed).
func (n *Names) Known(name string) bool {
	_, ok := n.lookup(name)
	return ok
}

// Interned returns the id of name if it has been interned (Known): ids are never reused, so
// a writer may be handed it later (Listed.IDs).
// It also returns the name's length in UTF-16 code units (api.UTF16Len).
func (n *Names) Interned(name string) (id uint32, units int, ok bool) {
	if e := n.entry(name); e != nil {
		return e.id, int(e.units), true
	}
	return 0, 0, false
}

// Marks in Listed.IDs: NoID for a name not interned when it was looked up, Skip for a
// property not to be stored.
const (
	NoID = math.MaxUint32
	Skip = math.MaxUint32 - 1
)

// id returns name's id, interning the name on first sight.
func (n *Names) id(name string) uint32 {
	if id, ok := n.lookup(name); ok {
		return id
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	id, ok := n.all[name]
	if !ok {
		kept := strings.Clone(name) // name is the caller's
		id = uint32(len(n.list))
		n.list = append(n.list, kept)
		n.all[kept] = id
		list := n.list
		n.names.Store(&list)
		n.ids = append(n.ids, &nameID{name: kept, id: id, units: uint32(api.UTF16Len(kept))})
		ids := n.ids
		n.entries.Store(&ids)
	}
	// Publish a fresh snapshot once the misses have paid for copying it (amortised O(1)).
	if n.misses++; n.misses >= len(n.all) {
		snapshot := make(map[string]uint32, len(n.all))
		for k, v := range n.all {
			snapshot[k] = v
		}
		n.read.Store(&snapshot)
		n.misses = 0
	}
	return id
}

// Keep says which of the properties handed to the writer are stored; the others are left
// out as if they had not been sent. The caller decides; the store applies it.
type Keep func(name string, v api.Value) bool

// encodeEntity appends to scratch[:0] the encoding of an entity with keys pk, rk and the
// properties of props that keep accepts, with Timestamp, id and ETag left out (Writer.Put
// adds them), and returns it with the number of properties encoded and the entity's size by
// api.EntitySize's accounting. The values have been validated.
func (n *Names) encodeEntity(scratch []byte, pk, rk string, props map[string]api.Value, keep Keep) (buf []byte, count, size int) {
	buf, count, size = n.encodeProperties(scratch, pk, rk, props, keep)
	size += api.KeysSize(pk, rk)
	setBodyCounts(buf[len(pk)+len(rk):], count, size)
	return buf, count, size
}

// encodeListed is encodeEntity of the properties l lists. It appends the name id of each
// property it encodes to ids[:0] and returns them.
func (n *Names) encodeListed(scratch []byte, pk, rk string, l *Listed, ids []uint32) (buf []byte, count, size int, _ []uint32) {
	buf, ids = n.encodeListedProperties(scratch, pk, rk, l, ids)
	count, size = len(ids), l.Size
	setBodyCounts(buf[len(pk)+len(rk):], count, size)
	return buf, count, size, ids
}

// encodeMergeListed is encodeMerge of the properties l lists. ids is a scratch list of name
// ids.
func (n *Names) encodeMergeListed(scratch []byte, pk, rk string, l *Listed, old string, ids []uint32) (buf []byte, count, size int, _ []uint32) {
	buf, ids = n.encodeListedProperties(scratch, pk, rk, l, ids)
	buf, count, size = n.appendUnreplaced(buf, pk, rk, len(ids), l.Size, old, ids)
	return buf, count, size, ids
}

// appendUnreplaced completes a listed merge's encoding buf, which holds count new
// properties, their name ids in replaced, and whose size so far (keys and new properties)
// is size: it appends every property of the old body whose name is not replaced, counting
// its size, and writes the merged entity's count and size. It may reorder replaced.
func (n *Names) appendUnreplaced(buf []byte, pk, rk string, count, size int, old string, replaced []uint32) ([]byte, int, int) {
	const linearIDs = 16 // up to this many, a linear scan beats a binary search
	if len(replaced) > linearIDs {
		slices.Sort(replaced)
	}
	var names []string
	i := bodyHeader
	for range bodyProperties(old) {
		start := i
		id, j := uvarintAt(old, i)
		var found bool
		if len(replaced) <= linearIDs {
			found = slices.Contains(replaced, uint32(id))
		} else {
			_, found = slices.BinarySearch(replaced, uint32(id))
		}
		if found {
			i = valueEnd(old, j)
			continue
		}
		end, v := skipValue(old, j)
		i = end
		if names == nil {
			names = *n.names.Load()
		}
		count++
		size += api.PropertySize(names[id], v)
		buf = append(buf, old[start:end]...)
	}
	setBodyCounts(buf[len(pk)+len(rk):], count, size)
	return buf, count, size
}

// encodeListedProperties appends to scratch[:0] the keys, a header to fill, and the
// properties of l to store, and returns it with the name ids of those properties appended
// to ids[:0].
func (n *Names) encodeListedProperties(scratch []byte, pk, rk string, l *Listed, ids []uint32) ([]byte, []uint32) {
	buf := append(scratch[:0], pk...)
	buf = append(buf, rk...)
	buf = append(buf, make([]byte, bodyHeader)...)
	ids = ids[:0]
	ps, known := l.Properties, l.IDs
	known = known[:len(ps)] // one for each property
	for i := range ps {
		p := &ps[i]
		id := known[i]
		switch id {
		case Skip:
			continue
		case NoID:
			id = n.id(p.Name)
		}
		ids = append(ids, id)
		buf = binary.AppendUvarint(buf, uint64(id))
		buf = appendValue(buf, p.Value)
	}
	return buf, ids
}

// encodeMerge is encodeEntity of the entity that overlays props on the entity with the
// encoded body old: the properties of props that keep accepts, and every property of old
// that none of those names. Old properties are copied as they are, and only the sizes of
// those replaced are counted again.
func (n *Names) encodeMerge(scratch []byte, pk, rk string, props map[string]api.Value, keep Keep, old string) (buf []byte, count, size int) {
	buf, count, size = n.encodeProperties(scratch, pk, rk, props, keep)
	return n.appendOld(buf, pk, rk, count, size, old, func(name string) bool {
		nv, ok := props[name]
		return ok && keep(name, nv)
	})
}

// appendOld completes a merge's encoding buf, which holds count new properties of size
// size: it appends every property of the old body that replaced does not report, and
// writes the merged entity's count and size.
func (n *Names) appendOld(buf []byte, pk, rk string, count, size int, old string, replaced func(name string) bool) ([]byte, int, int) {
	size += bodyEntitySize(old) // the same keys, and every old property until replaced
	names := *n.names.Load()
	i := bodyHeader
	for range bodyProperties(old) {
		start := i
		id, j := uvarintAt(old, i)
		end, v := skipValue(old, j)
		i = end
		name := names[id]
		if replaced(name) {
			size -= api.PropertySize(name, v)
			continue
		}
		count++
		buf = append(buf, old[start:end]...)
	}
	setBodyCounts(buf[len(pk)+len(rk):], count, size)
	return buf, count, size
}

// encodeProperties appends to scratch[:0] the keys, a header to fill, and the properties of
// props that keep accepts, and returns it with their number and the size they add to their
// entity.
func (n *Names) encodeProperties(scratch []byte, pk, rk string, props map[string]api.Value, keep Keep) (buf []byte, count, size int) {
	buf = append(scratch[:0], pk...)
	buf = append(buf, rk...)
	buf = append(buf, make([]byte, bodyHeader)...)
	for name, v := range props {
		if !keep(name, v) {
			continue
		}
		count++
		size += api.PropertySize(name, v)
		buf = binary.AppendUvarint(buf, uint64(n.id(name)))
		buf = appendValue(buf, v)
	}
	return buf, count, size
}

// skipValue returns the end of the encoded value (type byte and payload) at i, and a value
// of its type whose api.ValueSize is its size: the value itself for String and Binary, the
// type's zero value for the types of fixed size.
func skipValue(b string, i int) (end int, v api.Value) {
	end = valueEnd(b, i)
	switch code := b[i]; code {
	case typeString, typeBinary:
		_, j := uvarintAt(b, i+1)
		return end, api.Value{Type: edmTypes[code], Str: b[j:end]}
	case typeBoolean, typeDateTime, typeDouble, typeGuid, typeInt32, typeInt64:
		return end, api.Value{Type: edmTypes[code]}
	}
	return end, api.Value{} // unreachable for bodies this package wrote
}

// valueEnd returns the end of the encoded value (type byte and payload) at i.
func valueEnd(b string, i int) int {
	switch b[i] {
	case typeString, typeBinary:
		l, j := uvarintAt(b, i+1)
		return j + int(l)
	case typeBoolean:
		return i + 2
	case typeDateTime, typeDouble:
		return i + 9
	case typeGuid:
		return i + 17
	case typeInt32, typeInt64:
		_, end := uvarintAt(b, i+1)
		return end
	}
	return len(b) // unreachable for bodies this package wrote
}

// bodyProperties returns the number of properties of an encoded body.
func bodyProperties(body string) int { return int(body[bodyCount]) }

// bodyEntitySize returns the entity size written in an encoded body.
func bodyEntitySize(body string) int { return int(le32(body, bodySize) & MaxEntitySize) }

// setBodyCounts writes the property count and the entity size of an encoded body. Put
// refuses to store a body whose count or size the header cannot hold, so clamping them
// here is harmless.
func setBodyCounts(body []byte, count, size int) {
	binary.LittleEndian.PutUint32(body[bodySize:], uint32(min(count, MaxProperties))<<24|uint32(min(size, MaxEntitySize)))
}

// appendValue appends v's type byte and payload; v has been validated.
func appendValue(buf []byte, v api.Value) []byte {
	code := typeCode(v.Type)
	buf = append(buf, code)
	switch code {
	case typeString, typeBinary:
		buf = binary.AppendUvarint(buf, uint64(len(v.Str)))
		buf = append(buf, v.Str...)
	case typeBoolean:
		b := byte(0)
		if v.Bool {
			b = 1
		}
		buf = append(buf, b)
	case typeDateTime:
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v.DateTimeTicks()))
	case typeDouble:
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v.Float()))
	case typeGuid:
		g := parseGuid(v.Str)
		buf = append(buf, g[:]...)
	case typeInt32, typeInt64:
		buf = binary.AppendVarint(buf, v.Int())
	}
	return buf
}

// StoredValue returns the value that v, valid and as api's constructors make it, reads back
// as once stored (Record.Entity, Record.ListedInto): v itself, but a Guid in lower case.
func StoredValue(v api.Value) api.Value {
	if v.Type == api.EdmGuid {
		v.Str = strings.ToLower(v.Str)
	}
	return v
}

// stampBody completes an encoded body: it writes the Timestamp and the id, and appends the
// ETag and its length.
func stampBody(buf []byte, bodyStart int, ticks int64, id uint32, etag []byte) []byte {
	body := buf[bodyStart:]
	binary.LittleEndian.PutUint64(body, uint64(ticks))
	binary.LittleEndian.PutUint32(body[bodyID:], id)
	buf = append(buf, etag...)
	return append(buf, byte(len(etag)))
}

// bodyTicks returns the Timestamp ticks of an encoded body.
func bodyTicks(body string) int64 { return int64(le64(body, 0)) }

// bodyEntityID returns the entity id written in an encoded body.
func bodyEntityID(body string) uint32 { return le32(body, bodyID) }

// bodyETag returns the ETag of an encoded body, shared with the body.
func bodyETag(body string) string {
	end := len(body) - 1
	return body[end-int(body[end]) : end]
}

// decodeProperties returns the properties of an encoded body in props, which must be
// empty, or in a new map of their number when props is nil.
func (n *Names) decodeProperties(body string, props map[string]api.Value) map[string]api.Value {
	names := *n.names.Load()
	count := bodyProperties(body)
	if props == nil {
		props = make(map[string]api.Value, count)
	}
	i := bodyHeader
	for range count {
		var p api.Property
		next, ok := decodeProperty(body, i, names, &p)
		if !ok {
			// Unreachable for bodies this package wrote; answer what was read rather than
			// crash the process.
			return props
		}
		props[p.Name] = p.Value
		i = next
	}
	return props
}

// appendProperties appends the properties of an encoded body to ps, in the body's order.
func (n *Names) appendProperties(ps []api.Property, body string) []api.Property {
	names := *n.names.Load()
	count := bodyProperties(body)
	ps = slices.Grow(ps, count)
	i := bodyHeader
	for range count {
		ps = ps[:len(ps)+1]
		next, ok := decodeProperty(body, i, names, &ps[len(ps)-1])
		if !ok {
			return ps[:len(ps)-1] // unreachable, as in decodeProperties
		}
		i = next
	}
	return ps
}

// decodeProperty decodes the property encoded at body[i:] into p, its name from names, and
// returns the index after it; ok is false for a type byte this package never writes.
func decodeProperty(body string, i int, names []string, p *api.Property) (next int, ok bool) {
	id := uint64(body[i]) // a one-byte uvarint, read inline, for every id below 128
	if id < 0x80 {
		i++
	} else {
		id, i = uvarintAt(body, i)
	}
	p.Name = names[id]
	code := body[i]
	i++
	switch code {
	case typeString:
		l := uint64(body[i])
		if l < 0x80 {
			i++
		} else {
			l, i = uvarintAt(body, i)
		}
		end := i + int(l)
		p.Value = api.Value{Type: api.EdmString, Str: body[i:end]}
		return end, true
	case typeBinary:
		l, j := uvarintAt(body, i)
		end := j + int(l)
		p.Value = api.BinaryString(body[j:end])
		return end, true
	case typeBoolean:
		p.Value = api.Value{Type: api.EdmBoolean, Bool: body[i] == 1}
		return i + 1, true
	case typeDateTime:
		p.Value = api.DateTimeTicks(int64(le64(body, i)))
		return i + 8, true
	case typeDouble:
		p.Value = api.Double(math.Float64frombits(le64(body, i)))
		return i + 8, true
	case typeGuid:
		var g [16]byte
		copy(g[:], body[i:i+16])
		p.Value = api.Value{Type: api.EdmGuid, Str: formatGuid(g)}
		return i + 16, true
	case typeInt32, typeInt64:
		x, j := varintAt(body, i)
		if code == typeInt64 {
			p.Value = api.Int64(x)
		} else {
			p.Value = api.Int32(int32(x))
		}
		return j, true
	}
	return i, false
}

func le32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func le64(s string, i int) uint64 {
	_ = s[i+7]
	return load64(s, i)
}

// uvarintAt decodes the uvarint at s[i:] and returns it with the index after it.
func uvarintAt(s string, i int) (uint64, int) {
	var x uint64
	var shift uint
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return x, i
}

func varintAt(s string, i int) (int64, int) {
	ux, j := uvarintAt(s, i)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, j
}

// parseGuid returns the 16 bytes of a GUID in the 8-4-4-4-12 hexadecimal form, in either
// case, which the caller has validated; whatever is not a hexadecimal digit reads as 0.
func parseGuid(s string) [16]byte {
	var g [16]byte
	j := 0
	for i := 0; i+1 < len(s) && j < len(g); {
		if s[i] == '-' {
			i++
			continue
		}
		g[j] = hexValue(s[i])<<4 | hexValue(s[i+1])
		j++
		i += 2
	}
	return g
}

func hexValue(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// formatGuid renders g in its canonical lower-case 8-4-4-4-12 form.
func formatGuid(g [16]byte) string {
	const hexChars = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range g {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexChars[c>>4], hexChars[c&0xf]
		j += 2
	}
	return string(b[:])
}
