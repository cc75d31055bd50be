package odata

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

// String renders the filter canonically, for messages: the constant after the property,
// literals in the forms FormatLiteral writes, and parentheses only where precedence needs
// them. The rendering parses back to an equivalent filter. A match-all filter renders as "",
// a match-nothing one as "false".
func (f *Filter) String() string {
	if f == nil || f.root == nil {
		if f != nil && f.none {
			return "false"
		}
		return ""
	}
	var b strings.Builder
	f.root.render(&b)
	return b.String()
}

func (n *node) render(b *strings.Builder) {
	switch n.kind {
	case nodeAnd, nodeOr:
		sep := " and "
		if n.kind == nodeOr {
			sep = " or "
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			// and binds tighter than or: only an or inside an and needs parentheses.
			paren := n.kind == nodeAnd && k.kind == nodeOr
			if paren {
				b.WriteByte('(')
			}
			k.render(b)
			if paren {
				b.WriteByte(')')
			}
		}
	case nodeNot:
		b.WriteString("not ")
		k := n.kids[0]
		if k.kind == nodeBoolProperty || k.kind == nodeConstant || k.kind == nodeNot {
			k.render(b)
			return
		}
		b.WriteByte('(')
		k.render(b)
		b.WriteByte(')')
	case nodeBoolProperty:
		b.WriteString(n.prop.name)
	case nodeConstant:
		b.WriteString(strconv.FormatBool(n.lit.Bool))
	case nodeCompare:
		b.WriteString(n.prop.name)
		b.WriteByte(' ')
		b.WriteString(n.op.String())
		b.WriteByte(' ')
		s, err := FormatLiteral(n.lit)
		if err != nil { // unreachable: parsed constants are always formattable
			s = n.lit.String()
		}
		b.WriteString(s)
	}
}

// QuoteString returns s as a $filter string literal: in single quotes, with every embedded
// single quote doubled (EVIDENCE.md 3.1).
func QuoteString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// FormatLiteral returns v as a $filter constant of its EDM type (EVIDENCE.md 3.1): 'text',
// 30, 123L, 100.25 (a whole Double gets ".0"), true, datetime'2008-07-10T00:00:00Z' (UTC,
// trailing zeros of the fraction trimmed), guid'…' (lower case), X'…' (upper-case hex).
// A null value, a NaN or infinite Double, an Int32 out of range, a malformed Guid or an
// unknown type has no literal and is an error.
func FormatLiteral(v api.Value) (string, error) {
	if v.Null {
		return "", errors.New("odata: a filter may not contain null values")
	}
	switch v.Type {
	case api.EdmString:
		return QuoteString(v.Str), nil
	case api.EdmInt32:
		if v.Int() < math.MinInt32 || v.Int() > math.MaxInt32 {
			return "", fmt.Errorf("odata: Edm.Int32 value %d is out of range", v.Int())
		}
		return strconv.FormatInt(v.Int(), 10), nil
	case api.EdmInt64:
		return strconv.FormatInt(v.Int(), 10) + "L", nil
	case api.EdmDouble:
		if math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0) {
			return "", fmt.Errorf("odata: Edm.Double %v has no filter literal", v.Float())
		}
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s, nil
	case api.EdmBoolean:
		return strconv.FormatBool(v.Bool), nil
	case api.EdmDateTime:
		return "datetime'" + api.FormatDateTime(v.Time()) + "'", nil
	case api.EdmGuid:
		g, ok := api.CanonicalGuid(v.Str)
		if !ok {
			return "", fmt.Errorf("odata: %q is not a Guid", v.Str)
		}
		return "guid'" + g + "'", nil
	case api.EdmBinary:
		return "X'" + strings.ToUpper(hex.EncodeToString(v.Bin())) + "'", nil
	}
	return "", fmt.Errorf("odata: no filter literal for type %q", v.Type)
}
