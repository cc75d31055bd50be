package odata

// How a comparison `Property op constant` evaluates. This is the one place where conform
// decides the typed semantics of $filter; EVIDENCE.md 3.2 marks them UNCERTAIN in the
// documentation, so they follow what a live Storage account answered in
// Andrei15193/CloudStub (TableQueryComparisonTestData.cs and TableClientQueryTests.cs, a
// test suite that runs against a real account; encoded as facts in eval_test.go).
//
//  1. Same type: values compare by type. String ordinally (api.CompareKeyStrings), Int32 and
//     Int64 as integers, Double per IEEE 754 (a NaN makes every operator false except ne),
//     Boolean false < true, DateTime as instants, Guid in canonical lower-case form (which is
//     also .NET's Guid order), Binary bytewise with a shorter prefix first.
//  2. Numeric widening: the constant is widened to the property's type when .NET could do so
//     implicitly. An Int64 property compares with an Int32 constant (`Int64Prop eq 3` is
//     true for 3L), and a Double property with Int32 and Int64 constants (`DoubleProp eq 3`
//     and `eq 3L` are true for 3.0). The converse does not hold: an Int32 property against
//     3L or 3.0, or an Int64 property against 3.0, is a type mismatch.
//  3. Type mismatch: the values are not compared; the service answers as if the property
//     sorted below the constant, whatever the two types: eq false, ne TRUE, lt true,
//     le true, gt false, ge false (observed for every pair of the eight types, e.g. an
//     Int32 property 3 is `lt '3'`, and a String property '3' is `lt 3`). A constant
//     written first (`3 gt Age`) is mirrored to `Age lt 3` before this rule applies; which
//     side the service treats as "below" in that spelling is UNCERTAIN (not observed).
//  4. Missing property: every comparison is false, ne included (live: a filter on an absent
//     property returns no entity for all six operators and all types). A property stored
//     as null counts as missing (Storage never stores nulls, EVIDENCE.md 1.3).
//  5. `not` is plain boolean negation of the evaluated operand, so `not (Age eq 30)` is true
//     for an entity without Age. Live Storage returns the entity that has none of the
//     properties for `not (StringProp ne 'test' and Int32Prop ne 3 and ...)`
//     (TableClientQueryTests, Query_WhenUsingInvertedOrFilter...). EVIDENCE.md 3.2 called this
//     UNCERTAIN.
//  6. A bare property (`IsActive`) is true only when the property is a Boolean true; any
//     other type, or a missing property, is false (live: a bare Int32, String, ... property
//     matches nothing).
//  7. A Boolean constant standing as a condition inside a larger one (`PartitionKey eq 'p'
//     and true`) is that truth value; this is the reference's choice (Azurite does the
//     same; no answer of the service is known, E-filter-bare-boolean-open).
//  8. PartitionKey and RowKey are String properties and Timestamp a DateTime property of
//     every entity; for Query Tables, TableName is the only property (a String).

import (
	"math"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

type nodeKind uint8

const (
	nodeAnd nodeKind = iota
	nodeOr
	nodeNot
	nodeCompare      // prop op lit
	nodeBoolProperty // a bare property
	nodeConstant     // a bare true or false, its value in lit.Bool
)

// node is one compiled condition.
type node struct {
	kind nodeKind
	kids []*node
	prop propertyRef
	op   Op
	lit  api.Value
}

// propertyKind tells where a property's value lives, resolved once at compile time.
type propertyKind uint8

const (
	propCustom propertyKind = iota
	propPartitionKey
	propRowKey
	propTimestamp
)

type propertyRef struct {
	name      string
	kind      propertyKind
	tableName bool // the TableName property of Query Tables
}

func resolveProperty(name string) propertyRef {
	ref := propertyRef{name: name, tableName: name == "TableName"}
	switch name {
	case "PartitionKey":
		ref.kind = propPartitionKey
	case "RowKey":
		ref.kind = propRowKey
	case "Timestamp":
		ref.kind = propTimestamp
	}
	return ref
}

// subject is what a filter is evaluated against: an entity, or a table name.
type subject struct {
	entity *api.Entity
	table  string
}

func (s *subject) lookup(ref *propertyRef) (api.Value, bool) {
	if s.entity == nil {
		if ref.tableName {
			return api.String(s.table), true
		}
		return api.Value{}, false
	}
	switch ref.kind {
	case propPartitionKey:
		return api.String(s.entity.PartitionKey), true
	case propRowKey:
		return api.String(s.entity.RowKey), true
	case propTimestamp:
		return api.DateTime(s.entity.Timestamp), true
	}
	v, ok := s.entity.Properties[ref.name]
	if !ok || v.Null {
		return api.Value{}, false
	}
	return v, true
}

// Match reports whether entity e satisfies the filter. PartitionKey, RowKey and Timestamp
// are addressable as properties. A nil filter, or one parsed from an empty expression,
// matches every entity.
func (f *Filter) Match(e *api.Entity) bool {
	if f == nil || f.root == nil {
		return f == nil || !f.none
	}
	if e == nil {
		return false
	}
	s := subject{entity: e}
	return f.root.eval(&s)
}

// MatchTable reports whether the table named name satisfies a filter of Query Tables, where
// the only property is TableName (a String compared ordinally).
func (f *Filter) MatchTable(name string) bool {
	if f == nil || f.root == nil {
		return f == nil || !f.none
	}
	s := subject{table: name}
	return f.root.eval(&s)
}

func (n *node) eval(s *subject) bool {
	switch n.kind {
	case nodeAnd:
		for _, k := range n.kids {
			if !k.eval(s) {
				return false
			}
		}
		return true
	case nodeOr:
		for _, k := range n.kids {
			if k.eval(s) {
				return true
			}
		}
		return false
	case nodeNot:
		return !n.kids[0].eval(s)
	case nodeBoolProperty:
		v, ok := s.lookup(&n.prop)
		return ok && v.Type == api.EdmBoolean && v.Bool
	case nodeConstant:
		return n.lit.Bool
	case nodeCompare:
		v, ok := s.lookup(&n.prop)
		return ok && compareValues(v, n.op, n.lit)
	}
	return false
}

// compareValues evaluates `property op constant` for a present property value (rules 1-3
// above).
func compareValues(p api.Value, op Op, c api.Value) bool {
	order, comparable := orderValues(p, c)
	if !comparable {
		return mismatchAnswer(op)
	}
	if order == unordered {
		return op == OpNe
	}
	switch op {
	case OpEq:
		return order == 0
	case OpNe:
		return order != 0
	case OpGt:
		return order > 0
	case OpGe:
		return order >= 0
	case OpLt:
		return order < 0
	case OpLe:
		return order <= 0
	}
	return false
}

// mismatchAnswer is rule 3: the property counts as below the constant.
func mismatchAnswer(op Op) bool {
	switch op {
	case OpNe, OpLt, OpLe:
		return true
	}
	return false
}

// unordered is the order of a comparison that involves a NaN.
const unordered = 2

// orderValues returns -1, 0 or 1 (or unordered) for property p against constant c, and
// false when the two types are not compared (rules 1 and 2).
func orderValues(p, c api.Value) (int, bool) {
	switch p.Type {
	case api.EdmString:
		if c.Type == api.EdmString {
			return api.CompareKeyStrings(p.Str, c.Str), true
		}
	case api.EdmInt32:
		if c.Type == api.EdmInt32 {
			return cmpOrdered(p.Int(), c.Int()), true
		}
	case api.EdmInt64:
		if c.Type == api.EdmInt64 || c.Type == api.EdmInt32 {
			return cmpOrdered(p.Int(), c.Int()), true
		}
	case api.EdmDouble:
		var f float64
		switch c.Type {
		case api.EdmDouble:
			f = c.Float()
		case api.EdmInt32, api.EdmInt64:
			f = float64(c.Int())
		default:
			return 0, false
		}
		if math.IsNaN(p.Float()) || math.IsNaN(f) {
			return unordered, true
		}
		return cmpOrdered(p.Float(), f), true
	case api.EdmBoolean:
		if c.Type == api.EdmBoolean {
			return cmpOrdered(boolRank(p.Bool), boolRank(c.Bool)), true
		}
	case api.EdmDateTime:
		if c.Type == api.EdmDateTime {
			return p.Time().Compare(c.Time()), true
		}
	case api.EdmGuid:
		if c.Type == api.EdmGuid {
			return strings.Compare(strings.ToLower(p.Str), strings.ToLower(c.Str)), true
		}
	case api.EdmBinary:
		if c.Type == api.EdmBinary {
			return strings.Compare(p.Str, c.Str), true // a Binary's bytes, without copies
		}
	}
	return 0, false
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
