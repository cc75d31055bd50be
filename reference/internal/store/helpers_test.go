package store

import (
	"fmt"

	"github.com/tableconform/conform/reference/api"
)

// keepSent is the tests' Keep: nulls and a property named Timestamp are left out, as the
// reference leaves them out.
func keepSent(name string, v api.Value) bool { return !v.Null && name != "Timestamp" }

// etagOf is the tests' ETag of a write stamped with ticks.
func etagOf(ticks int64) []byte { return fmt.Appendf(nil, "W/\"%d\"", ticks) }

// write stores props at (pk, rk) through w, laid over what is there when merge, stamped with
// ticks.
func write(w *Writer, pk, rk string, props map[string]api.Value, merge bool, ticks int64) Record {
	e := w.Find(pk, rk)
	var enc *Encoded
	if merge {
		enc = w.EncodeMerge(e, props, keepSent)
	} else {
		enc = w.Encode(e, props, keepSent)
	}
	return w.Put(enc, ticks, etagOf(ticks))
}

// commitWrite writes and commits one entity.
func commitWrite(t *Table, pk, rk string, props map[string]api.Value, merge bool, ticks int64) Record {
	w := t.Begin()
	r := write(w, pk, rk, props, merge, ticks)
	w.Commit()
	return r
}

// commitRemove removes and commits one entity; it reports whether there was one.
func commitRemove(t *Table, pk, rk string) bool {
	w := t.Begin()
	e := w.Find(pk, rk)
	w.Remove(e)
	w.Commit()
	return e.Found()
}

// listedOf lists ps, whose stored properties add sentSize to an entity with keys pk and rk,
// as the reference hands them to a writer: each property keepSent refuses Skip, the others
// by their name's id when lookUp and it is interned, else NoID.
func listedOf(names *Names, pk, rk string, ps []api.Property, sentSize int, lookUp bool) *Listed {
	l := &Listed{Properties: ps, Size: api.KeysSize(pk, rk) + sentSize}
	for _, p := range ps {
		id, _, ok := names.Interned(p.Name)
		switch {
		case !keepSent(p.Name, p.Value):
			id = Skip
		case !ok || !lookUp:
			id = NoID
		}
		l.IDs = append(l.IDs, id)
	}
	return l
}
