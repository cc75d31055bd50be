package gen

import (
	"strings"

	"pgregory.net/rapid"

	"github.com/tableconform/conform/reference/api"
)

var comparisons = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// Filter draws a $filter expression: comparisons of the keys and of custom properties
// (present or not, of any type) with literals of any type, bare boolean properties, not,
// and, or, up to two levels deep.
func Filter(c Config) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string { return filterAt(t, c, 0) })
}

func filterAt(t *rapid.T, c Config, depth int) string {
	kind := 0
	if depth < 2 {
		kind = pick(t, "filter", []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{16, 4, 4, 2, 2, 1, 2, 2})
	}
	switch kind {
	case 5:
		return rapid.SampledFrom([]string{"true", "false"}).Draw(t, "constant")
	case 6:
		// A point query: both keys equal.
		return "PartitionKey eq " + Literal(api.String(PartitionKey(c).Draw(t, "pk"))) +
			" and RowKey eq " + Literal(api.String(RowKey(c).Draw(t, "rk")))
	case 7:
		// and binds more tightly than or, without parentheses.
		return filterAt(t, c, depth+1) + " or " + filterAt(t, c, depth+1) + " and " + filterAt(t, c, depth+1)
	case 1:
		return filterAt(t, c, depth+1) + " and " + filterAt(t, c, depth+1)
	case 2:
		return "(" + filterAt(t, c, depth+1) + ") or (" + filterAt(t, c, depth+1) + ")"
	case 3:
		return "not (" + filterAt(t, c, depth+1) + ")"
	case 4:
		return PropertyName(c).Draw(t, "bare")
	}
	op := rapid.SampledFrom(comparisons).Draw(t, "op")
	if rapid.IntRange(0, 29).Draw(t, "upper case") == 29 {
		op = strings.ToUpper(op) // the service knows its operators in lower case only
	}
	switch pick(t, "subject", []int{0, 1, 2}, []int{6, 2, 2}) {
	case 1:
		return "PartitionKey " + op + " " + Literal(api.String(PartitionKey(c).Draw(t, "pk")))
	case 2:
		return "RowKey " + op + " " + Literal(api.String(RowKey(c).Draw(t, "rk")))
	}
	name := PropertyName(c).Draw(t, "property")
	typ := api.AllEdmTypes[rapid.IntRange(0, len(api.AllEdmTypes)-1).Draw(t, "literal type")]
	literal := Literal(TypedValue(Config{NoLimits: true}, typ).Draw(t, "literal"))
	if rapid.IntRange(0, 7).Draw(t, "literal first") == 7 {
		return literal + " " + op + " " + name
	}
	return name + " " + op + " " + literal
}

// QuerySpec draws a query: a filter most of the time, sometimes $top (at its edges too) and
// $select (of present and missing properties and of the system properties), read through
// up to four pages.
func Queries(c Config) *rapid.Generator[QuerySpec] {
	return rapid.Custom(func(t *rapid.T) QuerySpec {
		q := QuerySpec{Pages: rapid.IntRange(1, 4).Draw(t, "pages")}
		if rapid.IntRange(0, 9).Draw(t, "has filter") < 7 {
			q.Filter = Filter(c).Draw(t, "filter")
		}
		switch pick(t, "top", []int{0, 1, 2}, []int{6, 3, 1}) {
		case 1:
			q.Top = api.TopOf(rapid.IntRange(1, 3).Draw(t, "n"))
		case 2:
			q.Top = api.TopOf(rapid.SampledFrom([]int{0, 1000, 1001, -1}).Draw(t, "n"))
		}
		if rapid.IntRange(0, 4).Draw(t, "has select") == 4 {
			q.Select = Selection(c).Draw(t, "select")
		}
		return q
	})
}

// Selection draws a $select list of one to three names, custom or system.
func Selection(c Config) *rapid.Generator[[]string] {
	names := append(append([]string{}, PropertyNames...), "PartitionKey", "RowKey", "Timestamp", "Missing")
	return rapid.SliceOfNDistinct(rapid.SampledFrom(names), 1, 3, func(s string) string { return s })
}

// ETag draws an If-Match choice.
func ETag() *rapid.Generator[ETagRef] {
	return rapid.Custom(func(t *rapid.T) ETagRef {
		return pick(t, "if-match", []ETagRef{MatchAny, MatchCurrent, MatchStale, MatchNone}, []int{4, 4, 2, 1})
	})
}

var batchKinds = []api.BatchOpKind{api.BatchInsert, api.BatchInsertOrReplace, api.BatchInsertOrMerge, api.BatchReplace,
	api.BatchMerge, api.BatchDelete, api.BatchRetrieve}

// Steps draws the operations of a batch: mostly one to four in one partition, sometimes in
// two partitions, twice on one entity, a retrieve beside writes, none at all, or 100 or 101
// operations, all of which the service refuses or answers in its own documented way.
func Steps(c Config) *rapid.Generator[[]Step] {
	return rapid.Custom(func(t *rapid.T) []Step {
		n := pick(t, "steps", []int{1, 2, 3, 4, 0}, []int{10, 4, 2, 2, 1})
		if !c.NoLimits && rapid.IntRange(0, 19).Draw(t, "large") == 19 {
			n = rapid.SampledFrom([]int{100, 101}).Draw(t, "steps")
		}
		pk := PartitionKey(c).Draw(t, "batch pk")
		steps := make([]Step, 0, n)
		for i := 0; i < n; i++ {
			if n > 10 {
				// At the limit: upserts of distinct rows of one partition, so that only the
				// count decides.
				e := api.NewEntity(pk, "r"+itoa(i), nil)
				steps = append(steps, Step{Kind: rapid.SampledFrom([]api.BatchOpKind{api.BatchInsertOrReplace, api.BatchInsertOrMerge}).Draw(t, "kind"), Entity: e})
				continue
			}
			e := Entity(c).Draw(t, "entity")
			if rapid.IntRange(0, 9).Draw(t, "other partition") < 9 {
				e.PartitionKey = pk
			}
			s := Step{Kind: pick(t, "kind", batchKinds, []int{4, 4, 4, 2, 2, 3, 3}), Entity: e}
			switch s.Kind {
			case api.BatchReplace, api.BatchMerge, api.BatchDelete:
				s.IfMatch = ETag().Draw(t, "if-match")
				if s.IfMatch == MatchNone {
					s.IfMatch = MatchAny
				}
			}
			steps = append(steps, s)
		}
		return steps
	})
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

var opKinds = []Kind{Insert, Upsert, Batch, Query, Update, Delete, Get, CreateTable, DeleteTable, ListTables}
var opWeights = []int{20, 14, 14, 20, 12, 9, 8, 2, 1, 2}

// Operation draws one operation on one of c.Tables tables.
func Operation(c Config) *rapid.Generator[Op] {
	c = c.normalized()
	return rapid.Custom(func(t *rapid.T) Op {
		op := Op{Kind: pick(t, "op", opKinds, opWeights)}
		if c.Tables > 1 && op.Kind != ListTables {
			op.Table = rapid.IntRange(0, c.Tables-1).Draw(t, "table")
		}
		switch op.Kind {
		case Insert:
			op.Entity = Entity(c).Draw(t, "entity")
		case Upsert, Update:
			op.Entity = Entity(c).Draw(t, "entity")
			if rapid.Bool().Draw(t, "merge") {
				op.Mode = api.Merge
			}
			if op.Kind == Update {
				op.IfMatch = ETag().Draw(t, "if-match")
				if op.IfMatch == MatchNone {
					op.IfMatch = MatchAny
				}
			}
		case Delete:
			op.Entity = api.NewEntity(PartitionKey(c).Draw(t, "pk"), RowKey(c).Draw(t, "rk"), nil)
			op.IfMatch = ETag().Draw(t, "if-match")
		case Get:
			op.Entity = api.NewEntity(PartitionKey(c).Draw(t, "pk"), RowKey(c).Draw(t, "rk"), nil)
			if rapid.IntRange(0, 4).Draw(t, "has select") == 4 {
				op.Select = Selection(c).Draw(t, "select")
			}
		case Query:
			op.Query = Queries(c).Draw(t, "query")
		case Batch:
			op.Steps = Steps(c).Draw(t, "batch")
		}
		return op
	})
}

// Sequence draws a sequence of one to c.MaxOps operations. It shrinks towards fewer and
// more ordinary operations.
func Sequence(c Config) *rapid.Generator[[]Op] {
	c = c.normalized()
	return rapid.SliceOfN(Operation(c), 1, c.MaxOps)
}
