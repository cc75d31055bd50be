package matchers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Matchers and helpers for the query, ordering and pagination specs.

type consistOfKeys struct {
	want                        []api.Key
	missing, unexpected, repeat []api.Key
	keyCase                     string // RuleKeyCase when the keys differ only by letter case
}

// ConsistOfKeys succeeds when a []api.Entity holds exactly the entities with the given keys,
// each once, in any order. Query specs use it so that a wrong order fails only the
// ordering rules.
func ConsistOfKeys(keys ...api.Key) types.GomegaMatcher { return &consistOfKeys{want: keys} }

func (m *consistOfKeys) Match(actual any) (bool, error) {
	es, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("ConsistOfKeys expects []api.Entity, got %T", actual)
	}
	want := make(map[api.Key]bool, len(m.want))
	for _, k := range m.want {
		want[k] = true
	}
	seen := make(map[api.Key]int, len(es))
	m.missing, m.unexpected, m.repeat = nil, nil, nil
	for _, e := range es {
		k := e.Key()
		seen[k]++
		switch {
		case seen[k] == 2:
			m.repeat = append(m.repeat, k)
		case seen[k] == 1 && !want[k]:
			m.unexpected = append(m.unexpected, k)
		}
	}
	for _, k := range m.want {
		if seen[k] == 0 {
			m.missing = append(m.missing, k)
		}
	}
	ok = len(m.missing) == 0 && len(m.unexpected) == 0 && len(m.repeat) == 0
	m.keyCase = ""
	if !ok {
		m.keyCase, _ = keysCaseRule(m.want, Keys(es), false)
	}
	return ok, nil
}

func (m *consistOfKeys) FailureMessage(actual any) string {
	var parts []string
	if len(m.missing) > 0 {
		parts = append(parts, "missing "+renderKeys(m.missing))
	}
	if len(m.unexpected) > 0 {
		parts = append(parts, "not expected "+renderKeys(m.unexpected))
	}
	if len(m.repeat) > 0 {
		parts = append(parts, "returned more than once "+renderKeys(m.repeat))
	}
	return noteKeyCaseFault(m.keyCase, fmt.Sprintf("the rule expects exactly the entities %s, each once; got %s: %s",
		renderKeys(m.want), KeyList(actual.([]api.Entity)), strings.Join(parts, "; ")))
}

func (m *consistOfKeys) NegatedFailureMessage(any) string {
	return "expected other entities than " + renderKeys(m.want)
}

type containKeys struct {
	want, missing []api.Key
	keyCase       string // RuleKeyCase when each missing key came back in another letter case
}

// ContainKeys succeeds when a []api.Entity holds the entities with the given keys, among any
// others.
func ContainKeys(keys ...api.Key) types.GomegaMatcher { return &containKeys{want: keys} }

func (m *containKeys) Match(actual any) (bool, error) {
	es, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("ContainKeys expects []api.Entity, got %T", actual)
	}
	got := make(map[api.Key]bool, len(es))
	for _, e := range es {
		got[e.Key()] = true
	}
	m.missing, m.keyCase = nil, ""
	for _, k := range m.want {
		if !got[k] {
			m.missing = append(m.missing, k)
		}
	}
	if len(m.missing) == 0 {
		return true, nil
	}
	// The missing keys came back in another letter case when each pairs with its own entity
	// of es under a key that is not itself wanted (caseFolded).
	wanted := make(map[api.Key]bool, len(m.want))
	for _, k := range m.want {
		wanted[k] = true
	}
	taken := map[api.Key]bool{}
	m.keyCase = RuleKeyCase
	for _, k := range m.missing {
		i := slices.IndexFunc(es, func(e api.Entity) bool {
			return !wanted[e.Key()] && !taken[e.Key()] && caseFolded(k, e.Key())
		})
		if i < 0 {
			m.keyCase = ""
			break
		}
		taken[es[i].Key()] = true
	}
	return false, nil
}

func (m *containKeys) FailureMessage(actual any) string {
	return noteKeyCaseFault(m.keyCase, fmt.Sprintf("the rule expects the entities %s among those returned; got %s: missing %s",
		renderKeys(m.want), KeyList(actual.([]api.Entity)), renderKeys(m.missing)))
}

func (m *containKeys) NegatedFailureMessage(any) string {
	return "expected the entities not to include " + renderKeys(m.want)
}

func renderKeys(keys []api.Key) string {
	var b strings.Builder
	b.WriteString("[")
	for i, k := range keys {
		if i == 20 && len(keys) > 24 {
			fmt.Fprintf(&b, " ... %d more", len(keys)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(%q,%q)", k.PartitionKey, k.RowKey)
	}
	b.WriteString("]")
	return b.String()
}

// BeRefused succeeds when the actual error is a service error that refuses the request: a
// 4xx status or 501 Not Implemented. Specs use it where the documentation says a request is
// not allowed but not which status the service answers.
func BeRefused() types.GomegaMatcher {
	return &serviceFailure{
		name:    "BeRefused",
		expects: "to refuse the request (4xx or 501)",
		negated: "to accept the request",
		accept:  func(e *driver.Error) bool { return (e.Status >= 400 && e.Status < 500) || e.Status == 501 },
	}
}

// BeDocumentedRefusal succeeds when the actual error is a refusal the documentation
// allows where a rule lets a backend refuse or accept: a service error with a 4xx status
// and an error code. A 5xx (a server error, such as a 500 to an empty transaction) or an
// answer without a code is not a refusal, and the rule fails (issue 11).
func BeDocumentedRefusal() types.GomegaMatcher {
	return &serviceFailure{
		name:    "BeDocumentedRefusal",
		expects: "to refuse the request with a 4xx status and an error code",
		negated: "to accept the request",
		accept:  func(e *driver.Error) bool { return e.Status >= 400 && e.Status < 500 && e.Code != "" },
	}
}

type propertyNames struct{ want []string }

// HavePropertyNames succeeds when an api.Entity has exactly the given custom properties,
// with non-null values, among those the running spec wrote (WrittenOnly).
func HavePropertyNames(names ...string) types.GomegaMatcher { return &propertyNames{want: names} }

func (m *propertyNames) Match(actual any) (bool, error) {
	e, ok := actual.(api.Entity)
	if !ok {
		return false, fmt.Errorf("HavePropertyNames expects api.Entity, got %T", actual)
	}
	e = WrittenOnly(e)
	if len(e.Properties) != len(m.want) {
		return false, nil
	}
	for _, n := range m.want {
		v, ok := e.Properties[n]
		if !ok || v.Null {
			return false, nil
		}
	}
	return true, nil
}

func (m *propertyNames) FailureMessage(actual any) string {
	e := actual.(api.Entity)
	return fmt.Sprintf("the rule expects entity (%q,%q) to carry exactly the properties %v, got %s",
		e.PartitionKey, e.RowKey, m.want, e)
}

func (m *propertyNames) NegatedFailureMessage(any) string {
	return fmt.Sprintf("expected other properties than %v", m.want)
}

// Result is a query run to its end: every page in the order they came.
type Result struct {
	Pages []api.Page
}

// Entities returns the entities of every page, in order.
func (r Result) Entities() []api.Entity {
	var out []api.Entity
	for _, p := range r.Pages {
		out = append(out, p.Entities...)
	}
	return out
}

// PageSizes returns how many entities each page held.
func (r Result) PageSizes() []int {
	out := make([]int, len(r.Pages))
	for i, p := range r.Pages {
		out[i] = len(p.Entities)
	}
	return out
}

// QueryAll runs q from its start (or from q.Continuation) and follows continuations until a
// page carries none, re-sending Filter, Select and Top with each one (EVIDENCE.md 3.5). It fails
// after maxPages pages, so that a backend that never ends a query fails the spec instead of
// hanging it. A service failure is returned wrapped, with the page it happened on, and
// still matches HaveFailedWith.
func QueryAll(ctx context.Context, b api.Backend, table string, q api.Query, maxPages int) (Result, error) {
	var r Result
	for len(r.Pages) < maxPages {
		p, err := b.QueryEntities(ctx, table, q)
		if err != nil {
			return r, fmt.Errorf("query %s (filter %q, top %v, select %v) page %d: %w", table, q.Filter, q.Top, q.Select, len(r.Pages)+1, err)
		}
		r.Pages = append(r.Pages, p)
		if p.Continuation.IsZero() {
			return r, nil
		}
		q.Continuation = p.Continuation
	}
	return r, fmt.Errorf("query %s (filter %q, top %v) still returned a continuation after %d pages (%d entities); the rule expects the query to end",
		table, q.Filter, q.Top, maxPages, len(r.Entities()))
}

// InsertAll inserts es one by one, in order.
func InsertAll(ctx context.Context, b api.Backend, table string, es ...api.Entity) error {
	for _, e := range es {
		if _, err := b.InsertEntity(ctx, table, e); err != nil {
			return fmt.Errorf("insert %s into %s: %w", e, table, err)
		}
	}
	return nil
}
