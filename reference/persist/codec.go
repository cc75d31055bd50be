package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// Record kinds.
const (
	kindCreateTable byte = 1
	kindDeleteTable byte = 2
	kindEntities    byte = 3 // puts and deletes of one write on one table
	kindSnapshotEnd byte = 9 // the last record of a complete snapshot
)

// record is one change: a table created or deleted at At, or the resulting state of the
// entities one write touched.
type record struct {
	Kind    byte
	Table   string
	At      time.Time
	Puts    []api.Entity // with the Timestamp they were stored with
	Deletes []api.Key
}

var errCorrupt = errors.New("corrupt record")

// encoder appends the binary form of records. Strings and byte strings are a uvarint
// length then the bytes; times are Unix seconds (varint) and nanoseconds (uvarint).
type encoder struct{ b []byte }

func (e *encoder) byte(v byte)      { e.b = append(e.b, v) }
func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) string(s string)  { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) time(t time.Time) { e.varint(t.Unix()); e.uvarint(uint64(t.Nanosecond())) }

var edmCodes = func() map[api.EdmType]byte {
	m := map[api.EdmType]byte{}
	for i, t := range api.AllEdmTypes {
		m[t] = byte(i + 1)
	}
	return m
}()

func (e *encoder) entity(x api.Entity) error {
	e.string(x.PartitionKey)
	e.string(x.RowKey)
	e.time(x.Timestamp)
	e.uvarint(uint64(len(x.Properties)))
	for name, v := range x.Properties {
		e.string(name)
		if v.Null {
			e.byte(0)
			continue
		}
		code, ok := edmCodes[v.Type]
		if !ok {
			return fmt.Errorf("property %q: unknown type %q", name, v.Type)
		}
		e.byte(code)
		switch v.Type {
		case api.EdmString, api.EdmGuid:
			e.string(v.Str)
		case api.EdmBinary:
			e.bytes(v.Bin())
		case api.EdmBoolean:
			if v.Bool {
				e.byte(1)
			} else {
				e.byte(0)
			}
		case api.EdmDateTime:
			e.time(v.Time())
		case api.EdmDouble:
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v.Float()))
		case api.EdmInt32, api.EdmInt64:
			e.varint(v.Int())
		}
	}
	return nil
}

func (e *encoder) record(r record) error {
	e.byte(r.Kind)
	e.string(r.Table)
	e.time(r.At)
	e.uvarint(uint64(len(r.Puts)))
	for _, x := range r.Puts {
		if err := e.entity(x); err != nil {
			return err
		}
	}
	e.uvarint(uint64(len(r.Deletes)))
	for _, k := range r.Deletes {
		e.string(k.PartitionKey)
		e.string(k.RowKey)
	}
	return nil
}

// decoder reads what encoder wrote; the first fault sticks and every later read returns
// zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) string() string { return string(d.raw()) }

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// count reads a length that must fit in what is left (each item takes at least min bytes).
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *decoder) entity() api.Entity {
	x := api.Entity{PartitionKey: d.string(), RowKey: d.string(), Timestamp: d.time()}
	n := d.count(2)
	x.Properties = make(map[string]api.Value, n)
	for range n {
		name := d.string()
		code := d.byte()
		if code == 0 {
			x.Properties[name] = api.Value{Null: true}
			continue
		}
		if int(code) > len(api.AllEdmTypes) {
			d.fail()
			break
		}
		var v api.Value
		switch t := api.AllEdmTypes[code-1]; t {
		case api.EdmString:
			v = api.String(d.string())
		case api.EdmGuid:
			v = api.Guid(d.string())
		case api.EdmBinary:
			v = api.Binary(d.raw())
		case api.EdmBoolean:
			v = api.Bool(d.byte() == 1)
		case api.EdmDateTime:
			v = api.DateTime(d.time())
		case api.EdmDouble:
			if len(d.b) < 8 {
				d.fail()
				break
			}
			v = api.Double(math.Float64frombits(binary.LittleEndian.Uint64(d.b)))
			d.b = d.b[8:]
		case api.EdmInt32, api.EdmInt64:
			v = api.Int64(d.varint())
			v.Type = t // the log holds what validation accepted
		}
		x.Properties[name] = v
	}
	return x
}

func decodeRecord(p []byte) (record, error) {
	d := &decoder{b: p}
	r := record{Kind: d.byte(), Table: d.string(), At: d.time()}
	switch r.Kind {
	case kindCreateTable, kindDeleteTable, kindEntities, kindSnapshotEnd:
	default:
		return record{}, errCorrupt
	}
	n := d.count(4)
	for range n {
		r.Puts = append(r.Puts, d.entity())
	}
	n = d.count(2)
	for range n {
		r.Deletes = append(r.Deletes, api.Key{PartitionKey: d.string(), RowKey: d.string()})
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	if d.err != nil {
		return record{}, d.err
	}
	return r, nil
}
