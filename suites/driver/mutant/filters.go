package mutant

import (
	"context"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Filter mutants rewrite the $filter text a client sends into what a backend with a wrong
// evaluator would effectively evaluate, then let the wrapped backend evaluate it.

// rewriteTokens applies fn to the token list of a filter and joins the result with single
// spaces. fn sees tokens as they were written (literals whole, with their quotes), split by
// the service's own lexer (odata.Tokens).
func rewriteTokens(filter string, fn func(toks []string) []string) string {
	if strings.TrimSpace(filter) == "" {
		return filter
	}
	toks := odata.Tokens(filter)
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.Text
	}
	return strings.Join(fn(words), " ")
}

func isComparison(w string) bool {
	switch w {
	case "eq", "ne", "gt", "ge", "lt", "le":
		return true
	}
	return false
}

// isStringLiteral reports whether w is a plain '...' literal.
func isStringLiteral(w string) bool { return len(w) >= 2 && w[0] == '\'' && w[len(w)-1] == '\'' }

// filterMutant rewrites the filters of Query Entities, and of Query Tables when tables is set.
func filterMutant(fn func(string) string, tables bool) func(api.Backend) api.Backend {
	return func(b api.Backend) api.Backend {
		q := &queryMapper{Backend: b, fn: func(q api.Query) api.Query { q.Filter = fn(q.Filter); return q }}
		if !tables {
			return q
		}
		return &tableFilterMapper{queryMapper: q, fn: fn}
	}
}

type tableFilterMapper struct {
	*queryMapper
	fn func(string) string
}

func (m *tableFilterMapper) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	q.Filter = m.fn(q.Filter)
	return m.queryMapper.Backend.QueryTables(ctx, q)
}

// groupLeftToRight re-groups the top level of a filter strictly from left to right:
// "A or B and C" becomes "((A or B) and C)", as an evaluator without precedence does.
func groupLeftToRight(toks []string) []string {
	var operands [][]string
	var ops []string
	depth, start := 0, 0
	for i, w := range toks {
		switch {
		case w == "(":
			depth++
		case w == ")":
			depth--
		case depth == 0 && (w == "and" || w == "or"):
			operands = append(operands, toks[start:i])
			ops = append(ops, w)
			start = i + 1
		}
	}
	operands = append(operands, toks[start:])
	if len(ops) == 0 {
		return toks
	}
	out := operands[0]
	for i, op := range ops {
		next := append([]string{"("}, out...)
		next = append(next, op)
		next = append(next, operands[i+1]...)
		out = append(next, ")")
	}
	return out
}

// groupOrFirst re-groups the top level of a filter so that or binds more tightly than and:
// "A and B or C" becomes "A and ( B or C )", as an evaluator with the two precedences
// swapped does.
func groupOrFirst(toks []string) []string {
	var out, operand []string
	depth, hasOr := 0, false
	flush := func() {
		if hasOr {
			operand = append(append([]string{"("}, operand...), ")")
		}
		out = append(out, operand...)
		operand, hasOr = nil, false
	}
	for _, w := range toks {
		switch {
		case w == "(":
			depth++
		case w == ")":
			depth--
		case depth == 0 && w == "and":
			flush()
			out = append(out, w)
			continue
		case depth == 0 && w == "or":
			hasOr = true
		}
		operand = append(operand, w)
	}
	flush()
	return out
}

// literalAsString turns a typed literal into a string literal of its text.
func literalAsString(w string) string {
	if isStringLiteral(w) {
		return w
	}
	if i := strings.IndexByte(w, '\''); i > 0 && strings.HasSuffix(w, "'") {
		return w[i:]
	}
	if w == "true" || w == "false" || len(w) > 0 && (w[0] == '-' || w[0] >= '0' && w[0] <= '9') {
		return "'" + w + "'"
	}
	return w
}

// Queries (EVIDENCE.md 3.1).
var (
	_ = define(Mutant{
		Name:        "range-bounds-inclusive",
		Description: "evaluates gt as ge and lt as le, in entity and table filters",
		Breaks:      []string{"query.range", "query.prefix", "query.compare.int32", "query.compare.string", "tables.query.filter"},
		Areas:       []spec.Area{spec.AreaPatterns, spec.AreaRelationships},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i, w := range t {
				switch w {
				case "gt":
					t[i] = "ge"
				case "lt":
					t[i] = "le"
				}
			}
			return t
		})
	}, true), hooks{})

	_ = define(Mutant{
		Name:        "literals-as-strings",
		Description: "compares every literal as a string: numbers, Booleans, datetime'..', guid'..' and X'..' lose their types",
		Breaks: []string{"query.compare.int32", "query.compare.int64", "query.compare.double", "query.compare.boolean",
			"query.compare.datetime", "query.compare.guid", "query.compare.binary", "query.compare.widening"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i := 1; i < len(t); i++ {
				if isComparison(t[i-1]) {
					t[i] = literalAsString(t[i])
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "int64-suffix-dropped",
		Description: "reads an Int64 literal 123L as the Int32 literal 123",
		Breaks:      []string{"query.compare.int64"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i, w := range t {
				if n := len(w); n > 1 && (w[n-1] == 'L' || w[n-1] == 'l') && (w[0] == '-' || w[0] >= '0' && w[0] <= '9') {
					t[i] = w[:n-1]
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "precedence-ignored",
		Description: "evaluates and and or strictly from left to right, without and binding more tightly",
		Breaks:      []string{"query.logic.precedence"},
	}, filterMutant(func(f string) string { return rewriteTokens(f, groupLeftToRight) }, false), hooks{})

	_ = define(Mutant{
		Name:        "or-before-and",
		Description: "binds or more tightly than and: A and B or C is evaluated as A and (B or C)",
		Breaks:      []string{"query.logic.precedence"},
	}, filterMutant(func(f string) string { return rewriteTokens(f, groupOrFirst) }, false), hooks{})

	_ = define(Mutant{
		Name:        "parentheses-ignored",
		Description: "drops the parentheses of a filter, evaluating it with the default precedence only",
		Breaks:      []string{"query.logic.parentheses"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			out := t[:0]
			for i, w := range t {
				// Parentheses after not stay: "not A eq 1" is not a filter at all.
				if (w == "(" && (i == 0 || t[i-1] != "not")) || w == ")" {
					continue
				}
				out = append(out, w)
			}
			return balance(out)
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "not-ignored",
		Description: "ignores the not operator",
		Breaks:      []string{"query.logic.not"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			out := t[:0]
			for _, w := range t {
				if w != "not" {
					out = append(out, w)
				}
			}
			return out
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "bare-property-truthy",
		Description: "takes a bare property name as a condition to mean \"is not false\", so non-Boolean values match",
		Breaks:      []string{"query.logic.bare-boolean"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			var out []string
			for i, w := range t {
				prevOK := i == 0 || t[i-1] == "(" || t[i-1] == "and" || t[i-1] == "or" || t[i-1] == "not"
				nextOK := i == len(t)-1 || t[i+1] == ")" || t[i+1] == "and" || t[i+1] == "or"
				if isIdentifier(w) && prevOK && nextOK {
					out = append(out, "(", w, "ne", "false", ")")
					continue
				}
				out = append(out, w)
			}
			return out
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "operators-case-insensitive",
		Description: "accepts operators in any letter case (EQ, And, NOT)",
		Breaks:      []string{"query.filter.case.operators"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i, w := range t {
				if l := strings.ToLower(w); isKeyword(l) && w != l {
					t[i] = l
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "doubled-quotes-kept",
		Description: "does not undo the doubling of a quote in a string literal, so 'it''s' looks for it''s",
		Breaks:      []string{"query.literal.quote"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i, w := range t {
				if isStringLiteral(w) {
					t[i] = "'" + strings.ReplaceAll(w[1:len(w)-1], "''", "''''") + "'"
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "constant-left-not-mirrored",
		Description: "accepts a comparison written constant first but reads it as if the property came first (5 lt A as A lt 5)",
		Breaks:      []string{"query.logic.constant-left"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i := 0; i+2 < len(t); i++ {
				if isComparison(t[i+1]) && !isIdentifier(t[i]) && t[i] != "(" && t[i] != ")" && isIdentifier(t[i+2]) {
					t[i], t[i+2] = t[i+2], t[i]
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "timestamp-not-filterable",
		Description: "keeps Timestamp apart from the properties a filter sees, so a condition on it never holds",
		Breaks:      []string{"query.filter.timestamp"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			for i, w := range t {
				if w == "Timestamp" {
					t[i] = "TimestampNotIndexed"
				}
			}
			return t
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "key-eq-as-prefix",
		Description: "matches PartitionKey eq and RowKey eq as a prefix of the key, as a range scan of the index that forgot its upper bound",
		Breaks:      []string{"query.partition-scan.exact"},
	}, filterMutant(func(f string) string {
		return rewriteTokens(f, func(t []string) []string {
			var out []string
			for i := 0; i < len(t); i++ {
				if i+2 < len(t) && (t[i] == "PartitionKey" || t[i] == "RowKey") && t[i+1] == "eq" && isStringLiteral(t[i+2]) {
					lit := t[i+2]
					out = append(out, "(", t[i], "ge", lit, "and", t[i], "lt", lit[:len(lit)-1]+"\uffff'", ")")
					i += 2
					continue
				}
				out = append(out, t[i])
			}
			return out
		})
	}, false), hooks{})

	_ = define(Mutant{
		Name:        "filter-errors-as-empty",
		Description: "answers a query it cannot evaluate (bad filter, bad $top, a comparison of two properties) with an empty result instead of 400 or 501",
		Breaks: []string{"query.filter.syntax", "query.filter.bad-literal", "query.filter.null", "query.filter.case.operators",
			"query.top.negative", "query.top.over-max", "query.filter.property-vs-property"},
	}, func(b api.Backend) api.Backend { return &errorsAsEmpty{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "comparison-limit-10",
		Description: "refuses filters with more than 10 comparisons with 400 InvalidInput (the limit is 15)",
		Breaks:      []string{"query.filter.comparison-limit"},
	}, func(b api.Backend) api.Backend { return &comparisonLimit{Backend: b, limit: 10} }, hooks{})

	_ = define(Mutant{
		Name:        "top-max-999",
		Description: "refuses $top=1000 with 400 InvalidInput, taking the limit as exclusive",
		Breaks:      []string{"query.top.max"},
	}, func(b api.Backend) api.Backend { return &topMax{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "point-miss-404",
		Description: "answers a point query (PartitionKey eq and RowKey eq) that finds nothing with 404 ResourceNotFound, as Get Entity does",
		Breaks:      []string{"query.point.absent"},
	}, func(b api.Backend) api.Backend { return &pointMiss{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "scan-first-partition-only",
		Description: "answers a filter without a PartitionKey condition from the first partition it reaches only",
		Breaks:      []string{"query.table-scan"},
	}, func(b api.Backend) api.Backend { return &firstPartition{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "select-missing-as-empty-string",
		Description: "returns a selected property that the entity lacks as an empty string",
		Breaks:      []string{"query.select.missing"},
	}, func(b api.Backend) api.Backend { return &selectMissing{Backend: b} }, hooks{})
)

// balance drops unmatched closing parentheses and closes unmatched opening ones.
func balance(t []string) []string {
	depth := 0
	var out []string
	for _, w := range t {
		switch w {
		case "(":
			depth++
		case ")":
			if depth == 0 {
				continue
			}
			depth--
		}
		out = append(out, w)
	}
	for ; depth > 0; depth-- {
		out = append(out, ")")
	}
	return out
}

type errorsAsEmpty struct{ api.Backend }

func (m *errorsAsEmpty) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if e, ok := driver.AsError(err); ok && (e.Status == 400 || e.Status == 501) {
		return api.Page{Entities: []api.Entity{}}, nil
	}
	return p, err
}

func (m *errorsAsEmpty) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	p, err := m.Backend.QueryTables(ctx, q)
	if e, ok := driver.AsError(err); ok && e.Status == 400 {
		return api.TablePage{Tables: []string{}}, nil
	}
	return p, err
}

type comparisonLimit struct {
	api.Backend
	limit int
}

func (m *comparisonLimit) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	n := 0
	for _, t := range odata.Tokens(q.Filter) {
		if isComparison(t.Text) {
			n++
		}
	}
	if n > m.limit {
		return api.Page{}, spec.ErrInvalidInput.New()
	}
	return m.Backend.QueryEntities(ctx, table, q)
}

type topMax struct{ api.Backend }

func (m *topMax) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if n, ok := q.Top.Value(); ok && n >= spec.MaxTop {
		return api.Page{}, spec.ErrInvalidInput.New()
	}
	return m.Backend.QueryEntities(ctx, table, q)
}

type pointMiss struct{ api.Backend }

func (m *pointMiss) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	f := q.Filter
	if err == nil && len(p.Entities) == 0 && p.Continuation.IsZero() &&
		strings.Contains(f, "PartitionKey eq") && strings.Contains(f, "RowKey eq") && !strings.Contains(f, " or ") {
		return api.Page{}, spec.ErrResourceNotFound.New()
	}
	return p, err
}

type firstPartition struct{ api.Backend }

func (m *firstPartition) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err != nil || strings.Contains(q.Filter, "PartitionKey") || len(p.Entities) == 0 {
		return p, err
	}
	first := p.Entities[0].PartitionKey
	for i, e := range p.Entities {
		if e.PartitionKey != first {
			p.Entities, p.Continuation = p.Entities[:i], api.Continuation{}
			break
		}
	}
	if !q.Continuation.IsZero() {
		// A later page of a scan already left the first partition.
		p.Entities = p.Entities[:0]
		p.Continuation = api.Continuation{}
	}
	return p, nil
}

type selectMissing struct{ api.Backend }

func (m *selectMissing) fill(sel []string, e *api.Entity) {
	for _, n := range sel {
		switch n {
		case "PartitionKey", "RowKey", "Timestamp":
			continue
		}
		if v, ok := e.Properties[n]; !ok || v.Null {
			e.Properties[n] = api.String("")
		}
	}
}

func (m *selectMissing) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	p, err := m.Backend.QueryEntities(ctx, table, q)
	if err == nil && q.Select != nil {
		mapEntities(p.Entities, func(e *api.Entity) { m.fill(q.Select, e) })
	}
	return p, err
}

func (m *selectMissing) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	e, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil && sel != nil {
		m.fill(sel, &e)
	}
	return e, err
}

// A filter that is only a Boolean constant (query.filter.bare-constant, EVIDENCE.md
// E-filter-bare-boolean) may be run or refused, but when it is run it matches all or none.
var _ = define(Mutant{
	Name:        "bare-false-matches-all",
	Description: "runs the filter false as if no filter had been given, returning every entity",
	Breaks:      []string{"query.filter.bare-constant"},
}, filterMutant(func(f string) string {
	if strings.TrimSpace(f) == "false" {
		return ""
	}
	return f
}, false), hooks{})
