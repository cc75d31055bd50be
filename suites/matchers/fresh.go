package matchers

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver/record"
)

// A spec that reads back by Get Entity what its acknowledged writes left, to judge its own
// rule (HoldEntity, LackEntity, HoldProperty), relies on that read showing them: the subject
// of RuleReadYourWrites, not of the spec's rule. A Get Entity answer that a query of the same
// key contradicts as an older state blocks the spec by that rule
// (record.NotePrecondition) rather than failing its own:
//   - the Get returned the entity with the keys asked for but another ETag, and a Timestamp
//     no later, than the one entity the query returns, and the query's entity holds what the
//     spec expects while the Get's does not; or
//   - the Get returned an entity where the spec expects none, and the query returns none.
//
// Any other difference (the query shows the same state, or one the spec does not expect
// either, or the Get returned other keys) fails the spec's rule as before. The query runs
// only when the comparison fails, as its failure message is written.

// RuleReadYourWrites is the rule whose subject is a read after an acknowledged write showing
// that write's result.
const RuleReadYourWrites = "modify.read-your-writes"

// staleReadStep is the step a stale point read fails.
const staleReadStep = "read back by Get Entity the state the spec's acknowledged writes left, which a query of the key shows"

// queryKey returns the entities a query of exactly the keys (pk, rk) returns; ok is false
// when the query fails.
func queryKey(ctx context.Context, b api.Backend, table, pk, rk string) ([]api.Entity, bool) {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	q := api.Query{Filter: "PartitionKey eq " + quote(pk) + " and RowKey eq " + quote(rk)}
	es, err := ReadQuery(ctx, b, table, q, fmt.Sprintf("query of (%q,%q) in table %s", pk, rk, table))
	return es, err == nil
}

// staleGet reports whether got, the Get Entity answer for (pk, rk) that does not fit what
// the spec expects, shows an older state of the entity than a query of its key, whose
// entity fits.
func staleGet(ctx context.Context, b api.Backend, table, pk, rk string, got api.Entity, fits func(api.Entity) bool) bool {
	if got.PartitionKey != pk || got.RowKey != rk {
		return false
	}
	es, ok := queryKey(ctx, b, table, pk, rk)
	if !ok || len(es) != 1 {
		return false
	}
	now := es[0]
	return now.PartitionKey == pk && now.RowKey == rk && now.ETag != "" && now.ETag != got.ETag &&
		!got.Timestamp.After(now.Timestamp) && fits(now)
}

// staleGetOfMissing reports whether an entity (pk, rk) that Get Entity returned where the
// spec expects none is absent from a query of its key.
func staleGetOfMissing(ctx context.Context, b api.Backend, table, pk, rk string) bool {
	es, ok := queryKey(ctx, b, table, pk, rk)
	return ok && len(es) == 0
}

// noteStaleRead announces, for a comparison about to fail with message, that a stale point
// read blocks it (stale).
func noteStaleRead(stale bool, message string) string {
	if stale {
		record.NotePrecondition(RuleReadYourWrites, staleReadStep, message)
	}
	return message
}

type holdProperty struct {
	ctx    context.Context
	b      api.Backend
	pk, rk string
	name   string
	want   api.Value
	got    api.Entity
	err    error
}

// HoldProperty succeeds when a Get Entity of (pk, rk) from the table named by the actual
// string returns an entity whose property name holds want, of want's type: for a spec whose
// rule is about the one property a write set, not about the entity's others.
func HoldProperty(ctx context.Context, b api.Backend, pk, rk, name string, want api.Value) types.GomegaMatcher {
	return &holdProperty{ctx: ctx, b: b, pk: pk, rk: rk, name: name, want: want}
}

func (m *holdProperty) holds(e api.Entity) bool {
	v, ok := e.Properties[m.name]
	return ok && v.Equal(m.want)
}

func (m *holdProperty) Match(actual any) (bool, error) {
	table, ok := actual.(string)
	if !ok {
		return false, fmt.Errorf("HoldProperty expects a table name, got %T", actual)
	}
	m.got, m.err = m.b.GetEntity(m.ctx, table, m.pk, m.rk, nil)
	if m.err != nil {
		return false, nil
	}
	return m.holds(m.got), nil
}

func (m *holdProperty) FailureMessage(actual any) string {
	if m.err != nil {
		return fmt.Sprintf("reading (%q,%q) from table %v: the rule expects property %s = %s, but %s",
			m.pk, m.rk, actual, m.name, m.want, describeOutcome(m.err))
	}
	table, _ := actual.(string)
	return noteStaleRead(staleGet(m.ctx, m.b, table, m.pk, m.rk, m.got, m.holds), fmt.Sprintf("entity (%q,%q) of table %v: the rule expects property %s = %s, but the entity reads %s",
		m.pk, m.rk, actual, m.name, m.want, m.got))
}

func (m *holdProperty) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("entity (%q,%q) of table %v holds property %s = %s, which the rule forbids", m.pk, m.rk, actual, m.name, m.want)
}
