package gen

import (
	"math"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Config bounds what a sequence draws.
type Config struct {
	// Tables is the number of tables a sequence works on (at least 1).
	Tables int
	// MaxOps is the most operations of one sequence (at least 1).
	MaxOps int
	// NoLimits leaves out the values drawn at the documented size limits (keys of 1 KiB,
	// strings of 32 Ki characters, batches of 100 operations): for workloads that want only
	// ordinary data.
	NoLimits bool
}

// DefaultConfig is what conform explore draws unless told otherwise.
var DefaultConfig = Config{Tables: 2, MaxOps: 24}

func (c Config) normalized() Config {
	if c.Tables < 1 {
		c.Tables = 1
	}
	if c.MaxOps < 1 {
		c.MaxOps = 1
	}
	return c
}

// pick draws from choices with the given weights, shrinking towards the first choice, which
// is therefore the most ordinary one. rapid favours small numbers, so the first choices come
// about twice as often as their weights say and the last ones less.
func pick[V any](t *rapid.T, label string, choices []V, weights []int) V {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := rapid.IntRange(0, total-1).Draw(t, label)
	for i, w := range weights {
		if n < w {
			return choices[i]
		}
		n -= w
	}
	return choices[len(choices)-1]
}

// ordinaryKeys are the keys most operations use, so that they meet each other's entities.
var ordinaryPartitionKeys = []string{"p0", "p1", "p2"}
var ordinaryRowKeys = []string{"r0", "r1", "r2", "r3", "r10"}

// edgeKeys reach the edges of the key rules: the empty key, case, trailing space, non-ASCII
// and astral characters, characters that need escaping in a URL or a literal, the forbidden
// characters (/ \ # ? and control characters) and sizes at the 1 KiB limit.
func edgeKeys(limits bool) []string {
	keys := []string{"", "P0", "p0 ", "é", "日本", "\U0001F600", "\uFFFD", "a'b", "a%b", "a+b", "a b", "a&b=c",
		"p/0", "p\\0", "p#0", "p?0", "p\x01", "p\u007f", "p\u0085"}
	if limits {
		half := spec.MaxKeyBytes / 2
		keys = append(keys, strings.Repeat("k", half-1), strings.Repeat("k", half), strings.Repeat("k", half+1),
			strings.Repeat("k", spec.MaxKeyBytes), strings.Repeat("k", spec.MaxKeyBytes+1))
	}
	return keys
}

// PartitionKey draws a partition key: mostly one of a few ordinary ones, sometimes an edge.
func PartitionKey(c Config) *rapid.Generator[string] {
	return keyGen(ordinaryPartitionKeys, edgeKeys(!c.NoLimits))
}

// RowKey draws a row key: mostly one of a few ordinary ones, sometimes an edge.
func RowKey(c Config) *rapid.Generator[string] {
	return keyGen(ordinaryRowKeys, edgeKeys(!c.NoLimits))
}

func keyGen(ordinary, edges []string) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		if rapid.IntRange(0, 9).Draw(t, "edge") < 9 {
			return rapid.SampledFrom(ordinary).Draw(t, "key")
		}
		return rapid.SampledFrom(edges).Draw(t, "edgekey")
	})
}

// PropertyNames are the names properties are drawn from: few, so that entities share them
// with different types and filters meet entities that lack them.
var PropertyNames = []string{"A", "B", "C", "Num", "Text"}

// edgeNames are valid and invalid property names: case, underscore, the 255-character limit
// and one over it, a leading digit, a system property's name, an OData annotation's shape.
func edgeNames(limits bool) []string {
	names := []string{"a", "_x", "Étoile", "1a", "a-b", "Timestamp", "odata.etag", "PartitionKey", "id", "etag", "ResourceId"}
	if limits {
		names = append(names, strings.Repeat("n", spec.MaxPropertyNameLength), strings.Repeat("n", spec.MaxPropertyNameLength+1))
	}
	return names
}

// PropertyName draws a property name, now and then an edge one.
func PropertyName(c Config) *rapid.Generator[string] {
	edges := edgeNames(!c.NoLimits)
	return rapid.Custom(func(t *rapid.T) string {
		if rapid.IntRange(0, 29).Draw(t, "edge") < 29 {
			return rapid.SampledFrom(PropertyNames).Draw(t, "name")
		}
		return rapid.SampledFrom(edges).Draw(t, "edgename")
	})
}

var (
	minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime = time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)
)

// Value draws a value of any EDM type (or a null), with the edges of each type: the ends of
// the integer ranges, signed zero and the non-finite doubles, the ends of the DateTime range
// and sub-second ticks, the empty string and binary, strings of non-ASCII and astral
// characters, and strings at the 32 Ki character limit.
func Value(c Config) *rapid.Generator[api.Value] {
	return rapid.Custom(func(t *rapid.T) api.Value {
		typ := rapid.IntRange(0, len(api.AllEdmTypes)).Draw(t, "type")
		if typ == len(api.AllEdmTypes) {
			return api.Null(0)
		}
		return TypedValue(c, api.AllEdmTypes[typ]).Draw(t, "value")
	})
}

// TypedValue draws a value of type typ, ordinary ones first and the type's edges after.
func TypedValue(c Config, typ api.EdmType) *rapid.Generator[api.Value] {
	return rapid.Custom(func(t *rapid.T) api.Value {
		edge := rapid.IntRange(0, 3).Draw(t, "edge") == 3
		switch typ {
		case api.EdmString:
			if !edge {
				return api.String(rapid.SampledFrom([]string{"a", "b", "abc", "B", "10", "9"}).Draw(t, "s"))
			}
			edges := []string{"", " ", "a'b", "é", "\U0001F600", "\u0000", "\uFFFF", "true", "2020-01-01T00:00:00Z"}
			if !c.NoLimits {
				edges = append(edges, strings.Repeat("s", spec.MaxStoredStringUnits), strings.Repeat("s", spec.MaxStringChars),
					strings.Repeat("s", spec.MaxStringChars+1))
			}
			return api.String(rapid.SampledFrom(edges).Draw(t, "s"))
		case api.EdmBinary:
			if !edge {
				return api.Binary([]byte{byte(rapid.IntRange(0, 3).Draw(t, "b"))})
			}
			return api.Binary(rapid.SampledFrom([][]byte{{}, {0, 255}, []byte("binary")}).Draw(t, "b"))
		case api.EdmBoolean:
			return api.Bool(rapid.Bool().Draw(t, "bool"))
		case api.EdmDateTime:
			if !edge {
				return api.DateTime(time.Date(2020, 1, 1+rapid.IntRange(0, 3).Draw(t, "day"), 0, 0, 0, 0, time.UTC))
			}
			return api.DateTime(rapid.SampledFrom([]time.Time{minDateTime, maxDateTime, minDateTime.Add(-time.Second),
				time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
				time.Date(2020, 1, 1, 0, 0, 0, 100, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)}).Draw(t, "when"))
		case api.EdmDouble:
			if !edge {
				return api.Double(float64(rapid.IntRange(0, 4).Draw(t, "d")) / 2)
			}
			return api.Double(rapid.SampledFrom([]float64{math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64,
				-1e300, 1e-7, 3, math.Inf(1), math.Inf(-1), math.NaN()}).Draw(t, "d"))
		case api.EdmGuid:
			return api.Guid(rapid.SampledFrom([]string{"00000000-0000-0000-0000-000000000000",
				"11111111-2222-3333-4444-555555555555", "ffffffff-ffff-ffff-ffff-ffffffffffff"}).Draw(t, "guid"))
		case api.EdmInt32:
			if !edge {
				return api.Int32(int32(rapid.IntRange(0, 10).Draw(t, "i")))
			}
			return api.Int32(rapid.SampledFrom([]int32{math.MinInt32, math.MaxInt32, -1}).Draw(t, "i"))
		case api.EdmInt64:
			if !edge {
				return api.Int64(int64(rapid.IntRange(0, 10).Draw(t, "l")))
			}
			return api.Int64(rapid.SampledFrom([]int64{math.MinInt64, math.MaxInt64, 1 << 53, (1 << 53) + 1, -1}).Draw(t, "l"))
		}
		return api.Null(typ)
	})
}

// Entity draws an entity: keys and up to four properties.
func Entity(c Config) *rapid.Generator[api.Entity] {
	return rapid.Custom(func(t *rapid.T) api.Entity {
		e := api.NewEntity(PartitionKey(c).Draw(t, "pk"), RowKey(c).Draw(t, "rk"), nil)
		n := rapid.IntRange(0, 4).Draw(t, "properties")
		for i := 0; i < n; i++ {
			e.Properties[PropertyName(c).Draw(t, "name")] = Value(c).Draw(t, "value")
		}
		if !c.NoLimits && rapid.IntRange(0, 49).Draw(t, "wide") == 49 {
			// At the limit of custom properties, or one over it.
			wide := rapid.SampledFrom([]int{spec.MaxCustomProperties, spec.MaxCustomProperties + 1}).Draw(t, "width")
			for i := len(e.Properties); i < wide; i++ {
				e.Properties["W"+strconv.Itoa(i)] = api.Int32(int32(i))
			}
		}
		return e
	})
}

// Literal writes v as a $filter literal: 'text' (quotes doubled), 5, 5L, 1.5, true,
// datetime'...', guid'...', X'...'. A non-finite double has no literal; it is written as the
// largest finite double of its sign (0 for NaN).
func Literal(v api.Value) string {
	if v.Null {
		return "null"
	}
	switch v.Type {
	case api.EdmString:
		return "'" + strings.ReplaceAll(v.Str, "'", "''") + "'"
	case api.EdmBinary:
		return "X'" + hexOf(v.Bin()) + "'"
	case api.EdmBoolean:
		return strconv.FormatBool(v.Bool)
	case api.EdmDateTime:
		return "datetime'" + v.Time().UTC().Format("2006-01-02T15:04:05.0000000Z") + "'"
	case api.EdmDouble:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			f = 0
		case math.IsInf(f, 1):
			f = math.MaxFloat64
		case math.IsInf(f, -1):
			f = -math.MaxFloat64
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case api.EdmGuid:
		return "guid'" + v.Str + "'"
	case api.EdmInt32:
		return strconv.FormatInt(v.Int(), 10)
	case api.EdmInt64:
		return strconv.FormatInt(v.Int(), 10) + "L"
	}
	return "null"
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
