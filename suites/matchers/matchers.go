package matchers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/record"
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
	if m, ok := driver.AsMalformed(err); ok {
		return fmt.Sprintf("it answered %d with an answer that cannot be read: %s", m.Status, err.Error())
	}
	return "it had a transport error: " + err.Error()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// HaveFailedWith succeeds when the actual error is a service error with the given HTTP
// status and one of the given codes (no code: any code).
func HaveFailedWith(status int, codes ...string) types.GomegaMatcher {
	want := fmt.Sprintf("%d", status)
	if len(codes) > 0 {
		want = fmt.Sprintf("%d %s", status, strings.Join(codes, " or "))
	}
	return failingWith("HaveFailedWith", want, func(e *driver.Error) bool {
		return e.Status == status && (len(codes) == 0 || slices.Contains(codes, e.Code))
	})
}

// serviceFailure is what every matcher of a service error shares: the actual value must be
// an error (nil included), it matches a service error that accept takes, and its failure
// messages say what the rule expects and what the backend answered (describeOutcome).
type serviceFailure struct {
	name    string // the matcher's name, for an actual value that is not an error
	expects string // completes "the rule expects the backend ..."
	negated string // the same, for the negated matcher
	accept  func(*driver.Error) bool
}

// failingWith returns the serviceFailure whose rule expects the backend to fail with want.
func failingWith(name, want string, accept func(*driver.Error) bool) *serviceFailure {
	return &serviceFailure{name: name, expects: "to fail with " + want, negated: "not to fail with " + want, accept: accept}
}

func (m *serviceFailure) Match(actual any) (bool, error) {
	err, ok := asError(actual)
	if !ok {
		return false, fmt.Errorf("%s expects an error, got %T", m.name, actual)
	}
	e, ok := driver.AsError(err)
	return ok && m.accept(e), nil
}

func (m *serviceFailure) FailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend %s, but %s", m.expects, describeOutcome(err))
}

func (m *serviceFailure) NegatedFailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend %s, but %s", m.negated, describeOutcome(err))
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
// ordinal strings (EVIDENCE.md 3.2), with no key repeated.
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
func KeyList(es []api.Entity) string { return renderKeys(Keys(es)) }

// Keys returns the keys of es, in order.
func Keys(es []api.Entity) []api.Key {
	out := make([]api.Key, len(es))
	for i, e := range es {
		out[i] = e.Key()
	}
	return out
}

type matchEntity struct {
	want      api.Entity
	diff      []string
	roundTrip string // the round-trip rule the differences are faults of, if any
}

// MatchEntity succeeds when an api.Entity has the expected keys and exactly the expected
// custom properties with the same EDM types and values (EntityDiff: a member the running
// spec never wrote is left to the rule about unexpected members). Timestamp and ETag are
// ignored.
func MatchEntity(want api.Entity) types.GomegaMatcher { return &matchEntity{want: want} }

func (m *matchEntity) Match(actual any) (bool, error) {
	got, ok := entityOf(actual)
	if !ok {
		return false, fmt.Errorf("MatchEntity expects api.Entity, got %T", actual)
	}
	m.diff = EntityDiff(m.want, got)
	m.roundTrip = ""
	if len(m.diff) > 0 {
		m.roundTrip, _ = roundTripRule(m.want, got)
	}
	return len(m.diff) == 0, nil
}

// EntityDiff lists the differences between two entities' keys and custom properties. A
// rule compares what it is about: a property of got that want lacks counts only when the
// running spec wrote a property of that name (record.WrittenByRunningSpec), so a member no
// spec wrote (an emulator's "ETag" beside the properties) fails the one rule about
// unexpected members (HaveOnlyWrittenProperties), not every rule that reads an entity back.
// Outside a spec every property of got counts.
func EntityDiff(want, got api.Entity) []string {
	var diff []string
	if want.PartitionKey != got.PartitionKey || want.RowKey != got.RowKey {
		diff = append(diff, fmt.Sprintf("keys: want (%q,%q), got (%q,%q)", want.PartitionKey, want.RowKey, got.PartitionKey, got.RowKey))
	}
	for _, n := range api.UnionPropertyNames(want, got) {
		w, inWant := want.Properties[n]
		g, inGot := got.Properties[n]
		switch {
		case !inGot:
			diff = append(diff, fmt.Sprintf("property %s: want %s, missing", n, w))
		case !inWant:
			if written, tracked := record.WrittenByRunningSpec(n); tracked && !written {
				continue
			}
			diff = append(diff, fmt.Sprintf("property %s: not expected, got %s", n, g))
		case !w.Equal(g):
			diff = append(diff, fmt.Sprintf("property %s: want %s, got %s", n, w, g))
		}
	}
	return diff
}

func (m *matchEntity) FailureMessage(any) string {
	return noteRoundTripFault(m.roundTrip, "the entity that came back differs from what was stored:\n  "+strings.Join(m.diff, "\n  "))
}

func (m *matchEntity) NegatedFailureMessage(any) string {
	return "expected the entity to differ from " + m.want.String()
}

type haveKeys struct {
	want    []api.Key
	keyCase string // RuleKeyCase when the keys differ only by letter case
}

// HaveKeys succeeds when a []api.Entity holds exactly the entities with the given keys, in
// the given order.
func HaveKeys(keys ...api.Key) types.GomegaMatcher { return &haveKeys{want: keys} }

func (m *haveKeys) Match(actual any) (bool, error) {
	es, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("HaveKeys expects []api.Entity, got %T", actual)
	}
	m.keyCase, _ = keysCaseRule(m.want, Keys(es), true)
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
	return noteKeyCaseFault(m.keyCase, fmt.Sprintf("want the entities [%s] in that order, got %s", want.String(), KeyList(actual.([]api.Entity))))
}

func (m *haveKeys) NegatedFailureMessage(any) string { return "expected other entities" }

type haveKey struct {
	want    api.Key
	keyCase string // RuleKeyCase when the key differs only by letter case
}

// HaveEntityKey succeeds when an api.Entity has the given PartitionKey and RowKey.
func HaveEntityKey(k api.Key) types.GomegaMatcher { return &haveKey{want: k} }

func (m *haveKey) Match(actual any) (bool, error) {
	e, ok := entityOf(actual)
	if !ok {
		return false, fmt.Errorf("HaveEntityKey expects api.Entity, got %T", actual)
	}
	m.keyCase, _ = keysCaseRule([]api.Key{m.want}, []api.Key{e.Key()}, true)
	return e.Key() == m.want, nil
}

func (m *haveKey) FailureMessage(actual any) string {
	e, _ := entityOf(actual)
	return noteKeyCaseFault(m.keyCase, fmt.Sprintf("want the entity (%q,%q), got (%q,%q)", m.want.PartitionKey, m.want.RowKey, e.PartitionKey, e.RowKey))
}

func (m *haveKey) NegatedFailureMessage(any) string {
	return fmt.Sprintf("expected an entity other than (%q,%q)", m.want.PartitionKey, m.want.RowKey)
}

// WrittenOnly returns e without the custom properties the running spec never wrote
// (record.WrittenByRunningSpec); outside a spec, e itself. Whether such a member may come back
// is the subject of one rule (HaveOnlyWrittenProperties), not of a rule that counts or
// compares what it wrote.
func WrittenOnly(e api.Entity) api.Entity {
	if _, tracked := record.WrittenByRunningSpec(""); !tracked {
		return e
	}
	out := e
	out.Properties = make(map[string]api.Value, len(e.Properties))
	for n, v := range e.Properties {
		if written, _ := record.WrittenByRunningSpec(n); written {
			out.Properties[n] = v
		}
	}
	return out
}

type onlyWritten struct {
	extra []string
}

// HaveOnlyWrittenProperties succeeds when an api.Entity carries no custom property that the
// running spec did not write (record.WrittenByRunningSpec): the subject of the rule about
// unexpected members, which no other comparison judges.
func HaveOnlyWrittenProperties() types.GomegaMatcher { return &onlyWritten{} }

func (m *onlyWritten) Match(actual any) (bool, error) {
	got, ok := entityOf(actual)
	if !ok {
		return false, fmt.Errorf("HaveOnlyWrittenProperties expects api.Entity, got %T", actual)
	}
	m.extra = nil
	for _, n := range api.UnionPropertyNames(got, got) {
		if written, tracked := record.WrittenByRunningSpec(n); tracked && !written {
			m.extra = append(m.extra, fmt.Sprintf("%s = %s", n, got.Properties[n]))
		}
	}
	return len(m.extra) == 0, nil
}

func (m *onlyWritten) FailureMessage(actual any) string {
	return "the entity carries members that were never written to it: " + strings.Join(m.extra, ", ")
}

func (m *onlyWritten) NegatedFailureMessage(any) string {
	return "expected the entity to carry a member that was never written"
}
