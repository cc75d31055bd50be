package odata

import (
	"fmt"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// MaxFilterNesting bounds how deeply parentheses and `not` may nest in one $filter. The
// service documents no bound; the reference refuses deeper filters with InvalidInput so that
// no input can exhaust the stack.
const MaxFilterNesting = 100

// Op is a comparison operator of $filter (EVIDENCE.md 3.1).
type Op uint8

// The comparison operators, spelled as in a filter.
const (
	OpEq Op = iota
	OpNe
	OpGt
	OpGe
	OpLt
	OpLe
)

var opNames = [...]string{"eq", "ne", "gt", "ge", "lt", "le"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

func lookupOp(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}

// mirror returns the operator that keeps the comparison's meaning when its sides swap:
// `30 lt Age` is `Age gt 30`.
func (o Op) mirror() Op {
	switch o {
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	}
	return o
}

// negate returns the operator of the comparison's complement, for comparisons whose sides
// are always present and of the same type.
func (o Op) negate() Op {
	switch o {
	case OpEq:
		return OpNe
	case OpNe:
		return OpEq
	case OpGt:
		return OpLe
	case OpGe:
		return OpLt
	case OpLt:
		return OpGe
	}
	return OpGt // OpLe
}

// The syntax tree as parsed, before the checks that the service applies after parsing.
type (
	expr      interface{ isExpr() }
	logicExpr struct { // and / or, n-ary
		or    bool
		items []expr
	}
	notExpr     struct{ x expr }
	compareExpr struct {
		op          Op
		left, right expr
	}
	propertyExpr struct{ name string }
	literalExpr  struct {
		val  api.Value
		null bool
	}
)

func (*logicExpr) isExpr()    {}
func (*notExpr) isExpr()      {}
func (*compareExpr) isExpr()  {}
func (*propertyExpr) isExpr() {}
func (*literalExpr) isExpr()  {}

// parser is a recursive-descent parser with OData's precedence: or < and < comparison <
// not < primary. Recursion happens only through parentheses and `not`, and is bounded by
// MaxFilterNesting.
type parser struct {
	lex         lexer
	tok         token
	depth       int
	comparisons int
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// fail reports a syntax error at the end of the current token.
func (p *parser) fail() error { return syntaxError(p.lex.src, p.tok.end) }

func (p *parser) isKeyword(k string) bool { return p.tok.kind == tokIdent && p.tok.text == k }

func (p *parser) parseOr() (expr, error) {
	return p.parseLogic(true)
}

func (p *parser) parseLogic(or bool) (expr, error) {
	sub := p.parseComparison
	kw := "and"
	if or {
		sub = func() (expr, error) { return p.parseLogic(false) }
		kw = "or"
	}
	first, err := sub()
	if err != nil {
		return nil, err
	}
	if !p.isKeyword(kw) {
		return first, nil
	}
	n := &logicExpr{or: or, items: []expr{first}}
	for p.isKeyword(kw) {
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := sub()
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, x)
	}
	return n, nil
}

func (p *parser) parseComparison() (expr, error) {
	left, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tokIdent {
		op, ok := lookupOp(p.tok.text)
		if !ok {
			break
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		p.comparisons++
		left = &compareExpr{op: op, left: left, right: right}
	}
	return left, nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxFilterNesting {
		return spec.ErrInvalidInput.Newf("The filter nests parentheses or 'not' more than %d levels deep.", MaxFilterNesting)
	}
	return nil
}

func (p *parser) parseUnary() (expr, error) {
	if !p.isKeyword("not") {
		return p.parsePrimary()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	p.depth--
	return &notExpr{x: x}, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.tok
	switch t.kind {
	case tokLParen:
		if err := p.enter(); err != nil {
			return nil, err
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.fail()
		}
		p.depth--
		return x, p.advance()
	case tokLiteral:
		return &literalExpr{val: t.val}, p.advance()
	case tokIdent:
		switch t.text {
		case "true", "false":
			return &literalExpr{val: api.Bool(t.text == "true")}, p.advance()
		case "null":
			return &literalExpr{null: true}, p.advance()
		case "and", "or", "not", "eq", "ne", "gt", "ge", "lt", "le":
			return nil, p.fail()
		}
		return &propertyExpr{name: t.text}, p.advance()
	}
	return nil, p.fail()
}

// parse parses src into a syntax tree and counts its comparisons.
func parse(src string) (expr, int, error) {
	p := &parser{lex: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, 0, err
	}
	x, err := p.parseOr()
	if err != nil {
		return nil, 0, err
	}
	if p.tok.kind != tokEOF {
		return nil, 0, p.fail()
	}
	return x, p.comparisons, nil
}

// Filter is a compiled $filter expression. It is immutable and safe for concurrent use.
type Filter struct {
	root        *node // nil matches everything, unless none
	none        bool  // the whole expression is `false`: nothing matches
	comparisons int
}

// ParseFilter compiles a $filter expression for Query Entities (EVIDENCE.md 3.1).
//
// Errors are *spec.Error:
//   - InvalidInput with spec.MsgFilterSyntaxFormat for syntax errors, at the position the
//     service reports (see syntaxError);
//   - InvalidInput with spec.MsgTooManyComparisons above spec.MaxFilterComparisons
//     comparisons (QTE; enforcement UNCERTAIN, EVIDENCE.md 11.8);
//   - InvalidInput for a null literal ("A query expression may not contain null values",
//     QE), for a literal that stands where a condition is expected (`Age eq 1 and 5`), and
//     for nesting deeper than MaxFilterNesting;
//   - NotImplemented (501) for a comparison that does not pit one property against one
//     constant (`a eq b`, `1 eq 2`, `(a eq 1) eq true`): live Storage answers 501
//     NotImplemented to `property1 eq propery2` and to `1 eq 2` (CloudStub
//     TableClientQueryTests, live account).
//
// An empty or all-blank expression is no filter: it matches every entity. A bare `true` or
// `false` as the whole expression matches every entity or none, as the live service runs
// such a query; inside a larger condition (`PartitionKey eq 'p' and true`) it is that truth
// value, as Azurite evaluates it, the reference's choice (E-filter-bare-boolean-open).
func ParseFilter(s string) (*Filter, error) {
	if strings.TrimSpace(s) == "" {
		return &Filter{}, nil
	}
	x, count, err := parse(s)
	if err != nil {
		return nil, err
	}
	if count > spec.MaxFilterComparisons {
		return nil, spec.ErrInvalidInput.Newf("%s", spec.MsgTooManyComparisons)
	}
	if lit, ok := x.(*literalExpr); ok && !lit.null && lit.val.Type == api.EdmBoolean {
		return &Filter{none: !lit.val.Bool}, nil // E-filter-bare-boolean
	}
	root, err := compileCondition(x)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root, comparisons: count}, nil
}

// ParseTableFilter compiles a $filter expression for Query Tables (EVIDENCE.md 2.2, QT). The
// grammar and errors are those of ParseFilter; evaluate it with MatchTable, where the only
// property is TableName.
func ParseTableFilter(s string) (*Filter, error) { return ParseFilter(s) }

// Comparisons returns the number of comparison operators in the filter (a bare boolean
// property is not counted).
func (f *Filter) Comparisons() int { return f.comparisons }

func errFilterSyntax(src string, pos int) error {
	return spec.ErrInvalidInput.Newf(spec.MsgFilterSyntaxFormat, pos, src)
}

// compileCondition turns a syntax tree in a boolean position into an evaluation node,
// applying the checks that come after parsing (see ParseFilter).
func compileCondition(x expr) (*node, error) {
	switch x := x.(type) {
	case *logicExpr:
		kind := nodeAnd
		if x.or {
			kind = nodeOr
		}
		n := &node{kind: kind, kids: make([]*node, 0, len(x.items))}
		for _, item := range x.items {
			k, err := compileCondition(item)
			if err != nil {
				return nil, err
			}
			if k.kind == kind { // flatten (a and (b and c)) into one node
				n.kids = append(n.kids, k.kids...)
			} else {
				n.kids = append(n.kids, k)
			}
		}
		return n, nil
	case *notExpr:
		k, err := compileCondition(x.x)
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeNot, kids: []*node{k}}, nil
	case *propertyExpr:
		return &node{kind: nodeBoolProperty, prop: resolveProperty(x.name)}, nil
	case *literalExpr:
		if x.null {
			return nil, errNullLiteral()
		}
		if x.val.Type == api.EdmBoolean {
			return &node{kind: nodeConstant, lit: x.val}, nil // E-filter-bare-boolean-open
		}
		return nil, spec.ErrInvalidInput.Newf("A %s constant cannot stand as a condition in a filter.", x.val.Type)
	case *compareExpr:
		return compileComparison(x)
	}
	return nil, spec.ErrInvalidInput.New()
}

func compileComparison(x *compareExpr) (*node, error) {
	lp, lIsProp := x.left.(*propertyExpr)
	rp, rIsProp := x.right.(*propertyExpr)
	ll, lIsLit := x.left.(*literalExpr)
	rl, rIsLit := x.right.(*literalExpr)
	if (lIsLit && ll.null) || (rIsLit && rl.null) {
		return nil, errNullLiteral()
	}
	switch {
	case lIsProp && rIsLit:
		return &node{kind: nodeCompare, prop: resolveProperty(lp.name), op: x.op, lit: rl.val}, nil
	case lIsLit && rIsProp:
		// The constant may come first (`30 lt Age`); it is kept as `Age gt 30`.
		return &node{kind: nodeCompare, prop: resolveProperty(rp.name), op: x.op.mirror(), lit: ll.val}, nil
	}
	return nil, errNotImplemented()
}

func errNullLiteral() error {
	return spec.ErrInvalidInput.Newf("A query expression may not contain null values.")
}

func errNotImplemented() error { return spec.ErrNotImplemented.New() }
