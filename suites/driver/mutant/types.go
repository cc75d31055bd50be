package mutant

import (
	"context"
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func readValues(fn func(v api.Value) api.Value) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend {
		return &readMapper{Backend: b, fn: func(e *api.Entity) {
			for name, v := range e.Properties {
				if !v.Null {
					e.Properties[name] = fn(v)
				}
			}
		}}
	}
}

func writeValues(fn func(v api.Value) (api.Value, bool)) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend {
		return &writeMapper{Backend: b, fn: func(e api.Entity) api.Entity { return mapValues(e, fn) }}
	}
}

// Types (EVIDENCE.md 1.5).
var (
	_ = define(Mutant{
		Name:        "int64-narrowed",
		Description: "returns an Edm.Int64 whose value fits 32 bits as an Edm.Int32",
		Breaks:      []string{"types.int64.round-trip"},
		Areas:       []spec.Area{spec.AreaModification, spec.AreaBatch},
	}, readValues(func(v api.Value) api.Value {
		if v.Type == api.EdmInt64 && v.Int() >= math.MinInt32 && v.Int() <= math.MaxInt32 {
			return api.Int32(int32(v.Int()))
		}
		return v
	}), hooks{})

	_ = define(Mutant{
		Name:        "whole-double-as-int32",
		Description: "returns an Edm.Double with a whole value that fits 32 bits (5.0) as an Edm.Int32, as a JSON reader that drops the decimal point",
		Breaks:      []string{"types.double.round-trip", "types.double.negative-zero"},
	}, readValues(func(v api.Value) api.Value {
		f := v.Float()
		if v.Type == api.EdmDouble && f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32 {
			return api.Int32(int32(f))
		}
		return v
	}), hooks{})

	_ = define(Mutant{
		Name:        "int32-widened",
		Description: "returns every Edm.Int32 as an Edm.Int64, as a store that keeps one integer type",
		Breaks:      []string{"types.int32.round-trip"},
	}, readValues(func(v api.Value) api.Value {
		if v.Type == api.EdmInt32 {
			return api.Int64(v.Int())
		}
		return v
	}), hooks{})

	_ = define(Mutant{
		Name:        "booleans-as-int32",
		Description: "returns an Edm.Boolean as an Edm.Int32 0 or 1, as a store with a bit column",
		Breaks:      []string{"types.boolean.round-trip"},
	}, readValues(func(v api.Value) api.Value {
		if v.Type == api.EdmBoolean {
			if v.Bool {
				return api.Int32(1)
			}
			return api.Int32(0)
		}
		return v
	}), hooks{})

	_ = define(Mutant{
		Name: "type-annotations-lost",
		Description: "returns Edm.Int64, Edm.DateTime, Edm.Guid and Edm.Binary values as Edm.String, " +
			"as a reader of no-metadata JSON that does not know the types",
		Breaks: []string{"types.int64.round-trip", "types.datetime.round-trip", "types.guid.round-trip", "types.binary.round-trip", "types.all-in-one"},
		Areas:  []spec.Area{spec.AreaModification, spec.AreaRelationships, spec.AreaPatterns},
	}, readValues(func(v api.Value) api.Value {
		switch v.Type {
		case api.EdmInt64:
			return api.String(strconv.FormatInt(v.Int(), 10))
		case api.EdmDateTime:
			return api.String(api.FormatDateTime(v.Time()))
		case api.EdmGuid:
			return api.String(v.Str)
		case api.EdmBinary:
			return api.String(base64.StdEncoding.EncodeToString(v.Bin()))
		}
		return v
	}), hooks{})

	_ = define(Mutant{
		Name:        "datetime-milliseconds",
		Description: "stores Edm.DateTime values with millisecond precision instead of 100 ns ticks",
		Breaks:      []string{"types.datetime.round-trip"},
		Areas:       []spec.Area{spec.AreaModification, spec.AreaPatterns, spec.AreaOrdering},
	}, writeValues(func(v api.Value) (api.Value, bool) {
		if v.Type == api.EdmDateTime && !v.Null {
			v = api.DateTime(v.Time().Truncate(time.Millisecond))
		}
		return v, true
	}), hooks{})

	_ = define(Mutant{
		Name:        "datetime-clamped",
		Description: "stores an Edm.DateTime before 1601 as 1601-01-01 instead of refusing it",
		Breaks:      []string{"types.datetime.before-1601"},
	}, writeValues(func(v api.Value) (api.Value, bool) {
		if v.Type == api.EdmDateTime && !v.Null && v.Time().Before(spec.MinDateTime) {
			v = api.DateTime(spec.MinDateTime)
		}
		return v, true
	}), hooks{})

	_ = define(Mutant{
		Name:        "empty-values-dropped",
		Description: "does not store an empty Edm.String or Edm.Binary, treating it as null",
		Breaks:      []string{"types.string.round-trip", "types.binary.round-trip"},
	}, writeValues(func(v api.Value) (api.Value, bool) {
		if !v.Null && (v.Type == api.EdmString && v.Str == "" || v.Type == api.EdmBinary && v.Str == "") {
			return v, false
		}
		return v, true
	}), hooks{})
)

// Limits (EVIDENCE.md 1.4).
var (
	_ = define(Mutant{
		Name:        "oversize-truncated",
		Description: "stores a value over 64 KiB truncated to the limit, and drops the largest properties of an entity over 1 MiB, instead of refusing them",
		Breaks:      []string{"limits.binary.size", "limits.string.size", "limits.entity.size"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		return &retryTrimmed{Backend: b, codes: []string{spec.ErrPropertyValueTooLarge.Code, spec.ErrEntityTooLarge.Code}, trim: trimOversize}
	}, hooks{})

	_ = define(Mutant{
		Name:        "extra-properties-dropped",
		Description: "drops the properties beyond the 252nd instead of refusing the entity",
		Breaks:      []string{"limits.properties.count"},
		Areas:       []spec.Area{spec.AreaPatterns},
	}, func(b api.Backend) api.Backend {
		return &retryTrimmed{Backend: b, codes: []string{spec.ErrTooManyProperties.Code}, trim: dropLastProperty}
	}, hooks{})

	_ = define(Mutant{
		Name:        "long-names-truncated",
		Description: "truncates property names to 255 characters and keys to 1 KiB instead of refusing them",
		Breaks:      []string{"limits.property-name.length", "limits.key.size"},
	}, func(b api.Backend) api.Backend {
		return &truncateNames{writeMapper{Backend: b, fn: truncateEntityNames}}
	}, hooks{})
)

// retryTrimmed retries a write refused with one of codes with the entity trimmed by trim,
// until it is accepted or trim gives up: a backend that enforces a limit by silently
// cutting data.
type retryTrimmed struct {
	api.Backend
	codes []string
	trim  func(e api.Entity) (api.Entity, bool)
}

// maxTrims bounds the retries of one write.
const maxTrims = 300

func (m *retryTrimmed) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	for i := 0; i < maxTrims && isCode(err, m.codes...); i++ {
		var ok bool
		if e, ok = m.trim(e.Clone()); !ok {
			break
		}
		got, err = m.Backend.InsertEntity(ctx, table, e)
	}
	return got, err
}

func (m *retryTrimmed) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	etag, err := m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	for i := 0; i < maxTrims && isCode(err, m.codes...); i++ {
		var ok bool
		if e, ok = m.trim(e.Clone()); !ok {
			break
		}
		etag, err = m.Backend.UpdateEntity(ctx, table, e, mode, ifMatch)
	}
	return etag, err
}

// trimOversize truncates every String and Binary value over its limit; when none is, it
// drops the largest property.
func trimOversize(e api.Entity) (api.Entity, bool) {
	cut := false
	for name, v := range e.Properties {
		switch {
		case v.Type == api.EdmBinary && len(v.Str) > spec.MaxBinaryBytes:
			v = api.BinaryString(v.Str[:spec.MaxBinaryBytes])
		case v.Type == api.EdmString && len(utf16.Encode([]rune(v.Str))) > spec.MaxStringChars:
			v.Str = string(utf16.Decode(utf16.Encode([]rune(v.Str))[:spec.MaxStringChars-1]))
		default:
			continue
		}
		e.Properties[name] = v
		cut = true
	}
	if cut {
		return e, true
	}
	largest, size := "", -1
	for _, name := range e.PropertyNames() {
		v := e.Properties[name]
		if n := len(v.Str); n > size { // a Binary's bytes are in Str too
			largest, size = name, n
		}
	}
	if largest == "" {
		return e, false
	}
	delete(e.Properties, largest)
	return e, true
}

func dropLastProperty(e api.Entity) (api.Entity, bool) {
	names := e.PropertyNames()
	if len(names) == 0 {
		return e, false
	}
	delete(e.Properties, names[len(names)-1])
	return e, true
}

type truncateNames struct{ writeMapper }

func truncateKey(k string) string {
	u := utf16.Encode([]rune(k))
	// The reference counts a key in UTF-16 bytes (EVIDENCE.md 1.4): 512 code units.
	if limit := spec.MaxKeyBytes / 2; len(u) > limit {
		return string(utf16.Decode(u[:limit]))
	}
	return k
}

func truncateEntityNames(e api.Entity) api.Entity {
	e.PartitionKey, e.RowKey = truncateKey(e.PartitionKey), truncateKey(e.RowKey)
	for name, v := range e.Properties {
		if r := []rune(name); len(r) > spec.MaxPropertyNameLength {
			delete(e.Properties, name)
			e.Properties[string(r[:spec.MaxPropertyNameLength])] = v
		}
	}
	return e
}

func (m *truncateNames) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	return m.Backend.GetEntity(ctx, table, truncateKey(pk), truncateKey(rk), sel)
}

func (m *truncateNames) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	return m.Backend.DeleteEntity(ctx, table, truncateKey(pk), truncateKey(rk), ifMatch)
}
