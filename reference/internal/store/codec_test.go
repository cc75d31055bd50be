package store

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// The sizes Encode and EncodeMerge report are api.EntitySize of what Put stores, and the
// counts its number of properties.
func TestEncodedSizeIsEntitySize(t *testing.T) {
	tbl := NewTable(NewNames(), Config{})
	r := rand.New(rand.NewPCG(8, 9))
	values := []api.Value{
		api.String(""), api.String("héllo 𝄞"), api.Binary([]byte{1, 2, 3}), api.Bool(true),
		api.DateTime(time.Date(2024, 5, 6, 7, 8, 9, 100, time.UTC)), api.Double(1.5),
		api.Guid("c9da6455-213d-42c9-9a79-3e9149a57833"), api.Int32(-7), api.Int64(1 << 40),
		api.Null(api.EdmString), api.String(strings.Repeat("long é ", 40)),
	}
	randomProps := func() map[string]api.Value {
		props := map[string]api.Value{}
		for range r.IntN(6) {
			props[[]string{"a", "bb", "ccé", "Timestamp", "d"}[r.IntN(5)]] = values[r.IntN(len(values))]
		}
		return props
	}
	kept := func(props map[string]api.Value) map[string]api.Value {
		out := map[string]api.Value{}
		for name, v := range props {
			if keepSent(name, v) {
				out[name] = v
			}
		}
		return out
	}
	for i := range 2000 {
		oldProps, props := randomProps(), randomProps()
		w := tbl.Begin()
		e := w.Find("pk", "rké")
		enc := w.Encode(e, oldProps, keepSent)
		want := kept(oldProps)
		if size := api.EntitySize(api.Entity{PartitionKey: "pk", RowKey: "rké", Properties: want}); enc.Size != size || enc.Properties != len(want) {
			t.Fatalf("Encode(%v): %d properties of size %d, want %d of %d", oldProps, enc.Properties, enc.Size, len(want), size)
		}
		w.Put(enc, int64(i+1), etagOf(int64(i+1)))
		w.Commit()

		w = tbl.Begin()
		e = w.Find("pk", "rké")
		enc = w.EncodeMerge(e, props, keepSent)
		merged := maps.Clone(want)
		maps.Copy(merged, kept(props))
		if size := api.EntitySize(api.Entity{PartitionKey: "pk", RowKey: "rké", Properties: merged}); enc.Size != size || enc.Properties != len(merged) {
			t.Fatalf("EncodeMerge(%v over %v): %d properties of size %d, want %d of %d", props, oldProps, enc.Properties, enc.Size, len(merged), size)
		}
		rec := w.Put(enc, int64(i+1), etagOf(int64(i+1)))
		w.Rollback()
		if got := rec.Entity(tbl.names); !sameProperties(got.Properties, merged) {
			t.Fatalf("EncodeMerge(%v over %v) stored %v, want %v", props, oldProps, got.Properties, merged)
		}

		// The same merge of the properties listed (EncodeMergeListed), and the listed
		// properties encoded alone (EncodeListed) at a key with no entity.
		var listed []api.Property
		for name, v := range props {
			listed = append(listed, api.Property{Name: name, Value: v})
		}
		api.SortProperties(listed)
		sentSize := 0
		for _, p := range listed {
			if keepSent(p.Name, p.Value) {
				sentSize += api.PropertySize(p.Name, p.Value)
			}
		}
		// The ids of the names interned so far, as a caller looks them up before the write
		// (every other time not: NoID).
		l := listedOf(tbl.names, "pk", "rké", listed, sentSize, i%2 == 0)
		w = tbl.Begin()
		e = w.Find("pk", "rké")
		enc = w.EncodeMergeListed(e, l)
		if size := api.EntitySize(api.Entity{PartitionKey: "pk", RowKey: "rké", Properties: merged}); enc.Size != size || enc.Properties != len(merged) {
			t.Fatalf("EncodeMergeListed(%v over %v): %d properties of size %d, want %d of %d", listed, oldProps, enc.Properties, enc.Size, len(merged), size)
		}
		rec = w.Put(enc, int64(i+1), etagOf(int64(i+1)))
		w.Rollback()
		if got := rec.Entity(tbl.names); !sameProperties(got.Properties, merged) {
			t.Fatalf("EncodeMergeListed(%v over %v) stored %v, want %v", listed, oldProps, got.Properties, merged)
		}
		w = tbl.Begin()
		e = w.Find("pk", "none")
		enc = w.EncodeListed(e, listedOf(tbl.names, "pk", "none", listed, sentSize, i%2 == 0))
		alone := kept(props)
		if size := api.EntitySize(api.Entity{PartitionKey: "pk", RowKey: "none", Properties: alone}); enc.Size != size || enc.Properties != len(alone) {
			t.Fatalf("EncodeListed(%v): %d properties of size %d, want %d of %d", listed, enc.Properties, enc.Size, len(alone), size)
		}
		rec = w.Put(enc, int64(i+1), etagOf(int64(i+1)))
		w.Rollback()
		if got := rec.Entity(tbl.names); !sameProperties(got.Properties, alone) {
			t.Fatalf("EncodeListed(%v) stored %v, want %v", listed, got.Properties, alone)
		}
	}
}

// A record gives back the keys, Timestamp, ETag and values it was written with, every EDM
// type at its edges; a Guid in lower case.
func TestRecordRoundTrip(t *testing.T) {
	names := NewNames()
	tbl := NewTable(names, Config{})
	props := map[string]api.Value{
		"s": api.String("a 𝄞 \x00 b"), "long": api.String(string(make([]byte, 300))),
		"bin": api.Binary([]byte{0, 255, 7}), "empty": api.Binary(nil),
		"t": api.Bool(true), "f": api.Bool(false),
		"min": api.DateTimeTicks(0), "max": api.DateTimeTicks(3_155_378_975_999_999_999),
		"negzero": api.Double(math.Copysign(0, -1)), "big": api.Double(1.7976931348623157e308),
		"g":   api.Guid("C9DA6455-213D-42C9-9A79-3E9149A57833"),
		"i32": api.Int32(-2147483648), "i64": api.Int64(-9223372036854775808), "i64max": api.Int64(9223372036854775807),
	}
	for _, tick := range []int64{-5, 0, 1, 1 << 62} {
		r := commitWrite(tbl, "pé", "r\x00k", props, false, tick)
		got := r.Entity(names)
		if got.PartitionKey != "pé" || got.RowKey != "r\x00k" || r.Ticks() != tick || got.ETag != string(etagOf(tick)) ||
			!got.Timestamp.Equal(api.TimeOfTicks(tick)) {
			t.Fatalf("record: %v (ticks %d)", got, r.Ticks())
		}
		want := maps.Clone(props)
		want["g"] = api.Guid("c9da6455-213d-42c9-9a79-3e9149a57833")
		if !sameProperties(got.Properties, want) {
			t.Fatalf("properties: %v, want %v", got.Properties, want)
		}
	}
}

// Put refuses an entity its header cannot hold, rather than store a wrong count.
func TestPutRefusesWhatTheHeaderCannotHold(t *testing.T) {
	tbl := NewTable(NewNames(), Config{})
	props := map[string]api.Value{}
	for i := range MaxProperties + 1 {
		props[fmt.Sprintf("p%d", i)] = api.Bool(true)
	}
	w := tbl.Begin()
	enc := w.Encode(w.Find("p", "r"), props, keepSent)
	defer func() {
		if recover() == nil {
			t.Fatal("Put stored 256 properties")
		}
	}()
	w.Put(enc, 1, etagOf(1))
}

func sameProperties(a, b map[string]api.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for name, v := range a {
		if w, ok := b[name]; !ok || !v.Equal(w) || v.Type != w.Type {
			return false
		}
	}
	return true
}

// TestNamesRecentKeepIds interns and looks up, from several goroutines at once, more names
// than Names.recent has slots, many sharing a slot: every look-up must give the name's own
// id, whichever name its slot held last. Run it with -race.
func TestNamesRecentKeepIds(t *testing.T) {
	n := NewNames()
	names := make([]string, 4*recentSlots)
	for i := range names {
		names[i] = fmt.Sprintf("p%d_%c", i, 'a'+i%7)
	}
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for r := range 20 {
				for i := range names {
					name := names[(i*(g+1)+r)%len(names)]
					id := n.id(name)
					if got := (*n.names.Load())[id]; got != name {
						t.Errorf("id(%q) = %d, the id of %q", name, id, got)
						return
					}
					if id2, ok := n.lookup(name); ok && id2 != id {
						t.Errorf("lookup(%q) = %d, want %d", name, id2, id)
						return
					}
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	if n.Known("never") {
		t.Error(`Known("never") = true`)
	}
}

// StoredValue gives each valid value as a record holding it reads it back, every EDM type at
// its edges: a Guid sent in upper or mixed case, -0, NaN and infinite Doubles, the first and
// last DateTime ticks.
func TestStoredValueIsWhatARecordReadsBack(t *testing.T) {
	names := NewNames()
	tbl := NewTable(names, Config{})
	values := []api.Value{
		api.String(""), api.String("a 𝄞 \x00 b"), api.String(strings.Repeat("é", 300)),
		api.Binary(nil), api.Binary([]byte{0, 255, 7}), api.Bool(true), api.Bool(false),
		api.DateTimeTicks(0), api.DateTimeTicks(3_155_378_975_999_999_999),
		api.DateTime(time.Date(2001, 2, 3, 4, 5, 6, 789_123_456, time.UTC)),
		api.Double(0), api.Double(math.Copysign(0, -1)), api.Double(math.NaN()), api.Double(math.Inf(1)),
		api.Double(math.Inf(-1)), api.Double(1.7976931348623157e308), api.Double(5e-324),
		api.Guid("C9DA6455-213D-42C9-9A79-3E9149A57833"), api.Guid("c9da6455-213d-42c9-9a79-3e9149a5783f"),
		api.Guid("c9DA6455-213d-42C9-9a79-3E9149A5783f"),
		api.Int32(-2147483648), api.Int32(2147483647), api.Int32(0),
		api.Int64(-9223372036854775808), api.Int64(9223372036854775807), api.Int64(-1),
	}
	for i, v := range values {
		rec := commitWrite(tbl, "p", fmt.Sprint(i), map[string]api.Value{"v": v}, false, 1)
		var got api.ListedEntity
		rec.ListedInto(names, &got)
		want := StoredValue(v)
		if len(got.Properties) != 1 || got.Properties[0].Value != want ||
			math.Float64bits(got.Properties[0].Value.Float()) != math.Float64bits(want.Float()) {
			t.Errorf("%v: read back %#v, StoredValue %#v", v, got.Properties, want)
		}
	}
}

// A listed merge of many properties over many (more than a linear search of the replaced
// names covers) keeps every old property not sent, and counts sizes as EntitySize does.
func TestListedMergeOfManyProperties(t *testing.T) {
	tbl := NewTable(NewNames(), Config{})
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		old, sent := map[string]api.Value{}, map[string]api.Value{}
		for range r.IntN(60) {
			old[fmt.Sprintf("n%02d", r.IntN(80))] = api.String(strings.Repeat("é", r.IntN(5)))
		}
		for range r.IntN(60) {
			v := api.Int32(int32(r.IntN(9)))
			if r.IntN(5) == 0 {
				v = api.Null(api.EdmInt32)
			}
			sent[fmt.Sprintf("n%02d", r.IntN(80))] = v
		}
		commitWrite(tbl, "p", "r", old, false, int64(round))
		var listed []api.Property
		sentSize := 0
		for name, v := range sent {
			listed = append(listed, api.Property{Name: name, Value: v})
			if keepSent(name, v) {
				sentSize += api.PropertySize(name, v)
			}
		}
		api.SortProperties(listed)
		merged := maps.Clone(old)
		for name, v := range sent {
			if keepSent(name, v) {
				merged[name] = v
			}
		}
		w := tbl.Begin()
		enc := w.EncodeMergeListed(w.Find("p", "r"), listedOf(tbl.names, "p", "r", listed, sentSize, round%2 == 0))
		size := api.EntitySize(api.Entity{PartitionKey: "p", RowKey: "r", Properties: merged})
		if enc.Size != size || enc.Properties != len(merged) {
			t.Fatalf("round %d: %d properties of size %d, want %d of %d", round, enc.Properties, enc.Size, len(merged), size)
		}
		rec := w.Put(enc, 1, etagOf(1))
		w.Commit()
		if got := rec.Entity(tbl.names); !sameProperties(got.Properties, merged) {
			t.Fatalf("round %d: stored %v, want %v", round, got.Properties, merged)
		}
	}
}

// valueEnd finds the end skipValue finds, for a value of every type.
func TestValueEndIsSkipValuesEnd(t *testing.T) {
	values := []api.Value{
		api.String(""), api.String(strings.Repeat("x", 200)), api.Binary([]byte{1, 2}), api.Bool(true),
		api.DateTimeTicks(7), api.Double(-1.5), api.Guid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		api.Int32(-300), api.Int64(1 << 50),
	}
	for _, v := range values {
		b := string(appendValue([]byte("prefix"), v))
		if end, _ := skipValue(b, len("prefix")); valueEnd(b, len("prefix")) != end || end != len(b) {
			t.Errorf("%v: valueEnd %d, skipValue %d, length %d", v, valueEnd(b, len("prefix")), end, len(b))
		}
	}
}

// Interned gives an interned name's id and UTF-16 length, found in the recent slots or in
// the snapshot alike (a name interned lately may not be published yet), and nothing for a
// name never interned.
func TestInternedGivesIDAndLength(t *testing.T) {
	names := NewNames()
	list := []string{"a", "Data", "é", "naïve", "𝄞x", strings.Repeat("n", 200), "Seq"}
	for round := range 20 { // the first round interns, the later ones find
		for _, name := range list {
			id := names.id(name)
			got, units, ok := names.Interned(name)
			if !ok && round < 19 {
				continue
			}
			if !ok || got != id || units != api.UTF16Len(name) {
				t.Fatalf("Interned(%q) = %d, %d, %v; want %d, %d, true", name, got, units, ok, id, api.UTF16Len(name))
			}
		}
	}
	if _, _, ok := names.Interned("never"); ok {
		t.Fatal("Interned reports a name never interned")
	}
}
