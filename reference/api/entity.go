package api

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Absent flags system properties that an answer did not carry (a $select projection
// returns PartitionKey, RowKey and Timestamp only when they are selected; EVIDENCE.md 3.4).
type Absent uint8

// The system properties an answer may leave out.
const (
	AbsentPartitionKey Absent = 1 << iota
	AbsentRowKey
	AbsentTimestamp
)

// Entity is one entity: its keys, the service-maintained Timestamp and ETag, and its custom
// properties. Timestamp and ETag are ignored when an entity is sent; they are filled in on
// what comes back. Properties never holds the system properties.
type Entity struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         string
	Properties   map[string]Value
	Absent       Absent
}

// NewEntity returns an entity with the given keys and properties (props may be nil).
func NewEntity(pk, rk string, props map[string]Value) Entity {
	if props == nil {
		props = map[string]Value{}
	}
	return Entity{PartitionKey: pk, RowKey: rk, Properties: props}
}

// With returns a copy of e with property name set to v.
func (e Entity) With(name string, v Value) Entity {
	c := e.Clone()
	c.Properties[name] = v
	return c
}

// Clone returns a deep copy of e.
func (e Entity) Clone() Entity {
	c := e
	c.Properties = make(map[string]Value, len(e.Properties))
	for k, v := range e.Properties {
		c.Properties[k] = v.Clone()
	}
	return c
}

// Key returns the entity's identity within a table.
func (e Entity) Key() Key { return Key{PartitionKey: e.PartitionKey, RowKey: e.RowKey} }

// PropertyNames returns the custom property names in ordinal order.
func (e Entity) PropertyNames() []string {
	names := make([]string, 0, len(e.Properties))
	for k := range e.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// String renders e for failure messages.
func (e Entity) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "(PartitionKey=%q, RowKey=%q", abbreviate(e.PartitionKey), abbreviate(e.RowKey))
	for _, n := range e.PropertyNames() {
		fmt.Fprintf(&b, ", %s=%s", n, e.Properties[n])
	}
	b.WriteString(")")
	return b.String()
}

// Key identifies an entity within a table.
type Key struct {
	PartitionKey string
	RowKey       string
}

// Less reports whether k sorts before o in the service's result order: PartitionKey, then
// RowKey, each compared as ordinal strings (EVIDENCE.md 3.2).
func (k Key) Less(o Key) bool {
	if k.PartitionKey != o.PartitionKey {
		return CompareKeyStrings(k.PartitionKey, o.PartitionKey) < 0
	}
	return CompareKeyStrings(k.RowKey, o.RowKey) < 0
}

// CompareKeyStrings is the single place that decides the ordinal order of key strings.
// Storage's exact order is UNCERTAIN (EVIDENCE.md 3.2, 11.9); conform takes ordinal by UTF-16
// code unit, the order of .NET's String.CompareOrdinal that the service is built on. For
// strings without surrogate pairs this equals Go's byte order of UTF-8; it differs only when
// a character above U+FFFF meets one in U+E000..U+FFFF.
func CompareKeyStrings(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmpInt(len(a), len(b))
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ra == rb { // invalid UTF-8 on both sides: fall back to bytes
		return strings.Compare(a[i:], b[i:])
	}
	if (ra >= 0x10000 && rb >= 0xE000 && rb <= 0xFFFF) || (rb >= 0x10000 && ra >= 0xE000 && ra <= 0xFFFF) {
		// A surrogate pair (0xD800..0xDBFF) sorts below U+E000..U+FFFF in UTF-16.
		return -cmpInt(int(ra), int(rb))
	}
	return cmpInt(int(ra), int(rb))
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// UnionPropertyNames returns the names of the custom properties of a and b together, each once,
// in byte order: the order in which two entities' properties are compared and reported.
func UnionPropertyNames(a, b Entity) []string {
	names := make([]string, 0, len(a.Properties)+len(b.Properties))
	for n := range a.Properties {
		names = append(names, n)
	}
	for n := range b.Properties {
		if _, ok := a.Properties[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
