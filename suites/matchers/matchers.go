package matchers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// describeOutcome renders an error as the backend's answer.
func describeOutcome(err error) string {
	if err == nil {
		return "it succeeded"
	}
	if e, ok := driver.AsError(err); ok {
		s := fmt.Sprintf("it failed with %d %s", e.Status, e.Code)
		if e.Indexed {
			s += fmt.Sprintf(" at operation %d", e.FailedIndex)
		}
		if e.Message != "" {
			s += fmt.Sprintf(" (%q)", firstLine(e.Message))
		}
		if e.RequestID != "" {
			s += " [request id " + e.RequestID + "]"
		}
		return s
	}
	return "it had a transport error (conform:transport): " + err.Error()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

type failedWith struct {
	status int
	codes  []string
}

// HaveFailedWith succeeds when the actual error is a service error with the given HTTP
// status and one of the given codes (no code: any code).
func HaveFailedWith(status int, codes ...string) types.GomegaMatcher {
	return &failedWith{status: status, codes: codes}
}

func (m *failedWith) Match(actual any) (bool, error) {
	err, ok := asError(actual)
	if !ok {
		return false, fmt.Errorf("HaveFailedWith expects an error, got %T", actual)
	}
	e, ok := driver.AsError(err)
	if !ok || e.Status != m.status {
		return false, nil
	}
	if len(m.codes) == 0 {
		return true, nil
	}
	for _, c := range m.codes {
		if e.Code == c {
			return true, nil
		}
	}
	return false, nil
}

func (m *failedWith) want() string {
	if len(m.codes) == 0 {
		return fmt.Sprintf("%d", m.status)
	}
	return fmt.Sprintf("%d %s", m.status, strings.Join(m.codes, " or "))
}

func (m *failedWith) FailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend to fail with %s, but %s", m.want(), describeOutcome(err))
}

func (m *failedWith) NegatedFailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend not to fail with %s, but %s", m.want(), describeOutcome(err))
}

func asError(actual any) (error, bool) {
	if actual == nil {
		return nil, true
	}
	err, ok := actual.(error)
	return err, ok
}

type succeed struct{}

// SucceedOnBackend succeeds when the actual error is nil. Unlike gomega.Succeed, its
// failure message tells service failures from transport errors.
func SucceedOnBackend() types.GomegaMatcher { return succeed{} }

func (succeed) Match(actual any) (bool, error) {
	err, ok := asError(actual)
	if !ok {
		return false, fmt.Errorf("SucceedOnBackend expects an error, got %T", actual)
	}
	return err == nil, nil
}

func (succeed) FailureMessage(actual any) string {
	err, _ := asError(actual)
	return "the rule expects the backend to succeed, but " + describeOutcome(err)
}

func (succeed) NegatedFailureMessage(any) string {
	return "the rule expects the backend to refuse the request, but it succeeded"
}

type keyOrder struct{ at int }

// BeInKeyOrder succeeds when a []api.Entity is sorted by PartitionKey, then RowKey, as
// ordinal strings (SPEC.md 3.2), with no key repeated.
func BeInKeyOrder() types.GomegaMatcher { return &keyOrder{} }

func (m *keyOrder) Match(actual any) (bool, error) {
	es, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("BeInKeyOrder expects []api.Entity, got %T", actual)
	}
	for i := 1; i < len(es); i++ {
		if !es[i-1].Key().Less(es[i].Key()) {
			m.at = i
			return false, nil
		}
	}
	return true, nil
}

func (m *keyOrder) FailureMessage(actual any) string {
	es := actual.([]api.Entity)
	return fmt.Sprintf("results are not sorted by PartitionKey, RowKey: entity %d (%q, %q) came after (%q, %q); the order was %s",
		m.at, es[m.at].PartitionKey, es[m.at].RowKey, es[m.at-1].PartitionKey, es[m.at-1].RowKey, KeyList(es))
}

func (m *keyOrder) NegatedFailureMessage(any) string { return "expected results out of key order" }

// KeyList renders the keys of es, abbreviated for long lists.
func KeyList(es []api.Entity) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range es {
		if i == 20 && len(es) > 24 {
			fmt.Fprintf(&b, " ... %d more", len(es)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "(%q,%q)", e.PartitionKey, e.RowKey)
	}
	b.WriteString("]")
	return b.String()
}

// Keys returns the keys of es, in order.
func Keys(es []api.Entity) []api.Key {
	out := make([]api.Key, len(es))
	for i, e := range es {
		out[i] = e.Key()
	}
	return out
}

type matchEntity struct {
	want api.Entity
	diff []string
}

// MatchEntity succeeds when an api.Entity has the expected keys and exactly the expected
// custom properties with the same EDM types and values. Timestamp and ETag are ignored.
func MatchEntity(want api.Entity) types.GomegaMatcher { return &matchEntity{want: want} }

func (m *matchEntity) Match(actual any) (bool, error) {
	got, ok := actual.(api.Entity)
	if !ok {
		if p, okp := actual.(*api.Entity); okp && p != nil {
			got, ok = *p, true
		}
	}
	if !ok {
		return false, fmt.Errorf("MatchEntity expects api.Entity, got %T", actual)
	}
	m.diff = EntityDiff(m.want, got)
	return len(m.diff) == 0, nil
}

// EntityDiff lists the differences between two entities' keys and custom properties.
func EntityDiff(want, got api.Entity) []string {
	var diff []string
	if want.PartitionKey != got.PartitionKey || want.RowKey != got.RowKey {
		diff = append(diff, fmt.Sprintf("keys: want (%q,%q), got (%q,%q)", want.PartitionKey, want.RowKey, got.PartitionKey, got.RowKey))
	}
	names := map[string]bool{}
	for n := range want.Properties {
		names[n] = true
	}
	for n := range got.Properties {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		w, inWant := want.Properties[n]
		g, inGot := got.Properties[n]
		switch {
		case !inGot:
			diff = append(diff, fmt.Sprintf("property %s: want %s, missing", n, w))
		case !inWant:
			diff = append(diff, fmt.Sprintf("property %s: not expected, got %s", n, g))
		case !w.Equal(g):
			diff = append(diff, fmt.Sprintf("property %s: want %s, got %s", n, w, g))
		}
	}
	return diff
}

func (m *matchEntity) FailureMessage(any) string {
	return "the entity that came back differs from what was stored:\n  " + strings.Join(m.diff, "\n  ")
}

func (m *matchEntity) NegatedFailureMessage(any) string {
	return "expected the entity to differ from " + m.want.String()
}

type haveKeys struct {
	want []api.Key
}

// HaveKeys succeeds when a []api.Entity holds exactly the entities with the given keys, in
// the given order.
func HaveKeys(keys ...api.Key) types.GomegaMatcher { return &haveKeys{want: keys} }

func (m *haveKeys) Match(actual any) (bool, error) {
	es, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("HaveKeys expects []api.Entity, got %T", actual)
	}
	if len(es) != len(m.want) {
		return false, nil
	}
	for i := range es {
		if es[i].Key() != m.want[i] {
			return false, nil
		}
	}
	return true, nil
}

func (m *haveKeys) FailureMessage(actual any) string {
	var want strings.Builder
	for i, k := range m.want {
		if i > 0 {
			want.WriteString(" ")
		}
		fmt.Fprintf(&want, "(%q,%q)", k.PartitionKey, k.RowKey)
	}
	return fmt.Sprintf("want the entities [%s] in that order, got %s", want.String(), KeyList(actual.([]api.Entity)))
}

func (m *haveKeys) NegatedFailureMessage(any) string { return "expected other entities" }
