package matchers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// Matchers for writes: the state a table holds after writes (HoldExactly, HoldEntity,
// LackEntity) and the answers of refused writes and transactions (HaveFailedWithStatusIn,
// NameFailedOperation).

// MaxScanPages bounds the pages ReadTable follows; the write specs keep tables small.
const MaxScanPages = 100

// ReadTable returns every entity of table, following continuations (at most MaxScanPages
// pages, then it fails: a backend that never ends a query must not hang a spec).
func ReadTable(ctx context.Context, b api.Backend, table string) ([]api.Entity, error) {
	return ReadQuery(ctx, b, table, api.Query{}, "query of table "+table)
}

// ReadQuery returns every entity q selects from table, following continuations (at most
// MaxScanPages pages, then it fails, naming the query as what).
func ReadQuery(ctx context.Context, b api.Backend, table string, q api.Query, what string) ([]api.Entity, error) {
	var all []api.Entity
	for range MaxScanPages {
		p, err := b.QueryEntities(ctx, table, q)
		if err != nil {
			return all, err
		}
		all = append(all, p.Entities...)
		if p.Continuation.IsZero() {
			return all, nil
		}
		q.Continuation = p.Continuation
	}
	return all, fmt.Errorf("%s still had a continuation after %d pages", what, MaxScanPages)
}

// partitionsOf returns the PartitionKeys of es, each once, in the order of es.
func partitionsOf(es []api.Entity) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range es {
		if !seen[e.PartitionKey] {
			seen[e.PartitionKey] = true
			out = append(out, e.PartitionKey)
		}
	}
	return out
}

// readPartition returns every entity of one partition of table, following continuations
// (at most MaxScanPages pages).
func readPartition(ctx context.Context, b api.Backend, table, pk string) ([]api.Entity, error) {
	q := api.Query{Filter: "PartitionKey eq '" + strings.ReplaceAll(pk, "'", "''") + "'"}
	return ReadQuery(ctx, b, table, q, fmt.Sprintf("query of partition %q of table %s", pk, table))
}

// ReadTableAndPartitions returns every entity of table that a scan of the whole table
// (ReadTable) returns, and besides those every entity of the partitions of want that a
// query of each returns: a scan that stops short is query.table-scan's failure, not that of
// a rule about writes, whose specs read their table back with it.
func ReadTableAndPartitions(ctx context.Context, b api.Backend, table string, want ...api.Entity) ([]api.Entity, error) {
	got, err := ReadTable(ctx, b, table)
	if err != nil {
		return got, err
	}
	seen := map[api.Key]bool{}
	for _, e := range got {
		seen[e.Key()] = true
	}
	for _, pk := range partitionsOf(want) {
		part, _ := readPartition(ctx, b, table, pk) // a partition query that fails adds nothing to the scan
		for _, e := range part {
			if !seen[e.Key()] {
				seen[e.Key()] = true
				got = append(got, e)
			}
		}
	}
	return got, nil
}

type holdExactly struct {
	ctx       context.Context
	b         api.Backend
	want      []api.Entity
	diff      []string
	roundTrip string // the round-trip rule the differences are faults of, if any
}

// HoldExactly succeeds when the table named by the actual string holds exactly the given
// entities: the same keys, and for each the same custom properties with the same types
// and values (Timestamp and ETag ignored). The failure message lists what is missing, what
// is unexpected and what differs.
func HoldExactly(ctx context.Context, b api.Backend, want ...api.Entity) types.GomegaMatcher {
	return &holdExactly{ctx: ctx, b: b, want: want}
}

func (m *holdExactly) Match(actual any) (bool, error) {
	table, ok := actual.(string)
	if !ok {
		return false, fmt.Errorf("HoldExactly expects a table name, got %T", actual)
	}
	got, err := ReadTableAndPartitions(m.ctx, m.b, table, m.want...)
	if err != nil {
		return false, fmt.Errorf("reading table %s to compare its entities: %s", table, describeOutcome(err))
	}
	m.diff = StateDiff(m.want, got)
	m.roundTrip = ""
	if len(m.diff) > 0 {
		m.roundTrip, _ = entitiesRoundTripRule(m.want, got)
	}
	return len(m.diff) == 0, nil
}

// StateDiff lists the differences between the entities a table should hold and those it
// holds, compared by key, in key order.
func StateDiff(want, got []api.Entity) []string {
	byKey := map[api.Key]api.Entity{}
	for _, e := range got {
		byKey[e.Key()] = e
	}
	var diff []string
	seen := map[api.Key]bool{}
	for _, w := range want {
		seen[w.Key()] = true
		g, ok := byKey[w.Key()]
		if !ok {
			diff = append(diff, fmt.Sprintf("entity (%q,%q) is missing; want %s", w.PartitionKey, w.RowKey, w))
			continue
		}
		for _, d := range EntityDiff(w, g) {
			diff = append(diff, fmt.Sprintf("entity (%q,%q): %s", w.PartitionKey, w.RowKey, d))
		}
	}
	for _, g := range got {
		if !seen[g.Key()] {
			diff = append(diff, fmt.Sprintf("entity (%q,%q) is not expected; got %s", g.PartitionKey, g.RowKey, g))
		}
	}
	sort.Strings(diff)
	return diff
}

func (m *holdExactly) FailureMessage(actual any) string {
	return noteRoundTripFault(m.roundTrip, fmt.Sprintf("table %v does not hold what the rule expects:\n  %s", actual, strings.Join(m.diff, "\n  ")))
}

func (m *holdExactly) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("table %v holds exactly the given entities, which the rule forbids", actual)
}

type holdEntity struct {
	ctx       context.Context
	b         api.Backend
	want      api.Entity
	got       api.Entity
	err       error
	diff      []string
	roundTrip string // the round-trip rule the differences are faults of, if any
}

// HoldEntity succeeds when a Get Entity of want's keys from the table named by the actual
// string returns an entity with exactly want's custom properties.
func HoldEntity(ctx context.Context, b api.Backend, want api.Entity) types.GomegaMatcher {
	return &holdEntity{ctx: ctx, b: b, want: want}
}

func (m *holdEntity) Match(actual any) (bool, error) {
	table, ok := actual.(string)
	if !ok {
		return false, fmt.Errorf("HoldEntity expects a table name, got %T", actual)
	}
	m.got, m.err = m.b.GetEntity(m.ctx, table, m.want.PartitionKey, m.want.RowKey, nil)
	if m.err != nil {
		return false, nil
	}
	m.diff = EntityDiff(m.want, m.got)
	m.roundTrip = ""
	if len(m.diff) > 0 {
		m.roundTrip, _ = roundTripRule(m.want, m.got)
	}
	return len(m.diff) == 0, nil
}

func (m *holdEntity) FailureMessage(actual any) string {
	if m.err != nil {
		return fmt.Sprintf("reading (%q,%q) from table %v: the rule expects %s, but %s",
			m.want.PartitionKey, m.want.RowKey, actual, m.want, describeOutcome(m.err))
	}
	message := fmt.Sprintf("entity (%q,%q) of table %v differs from what the rule expects:\n  %s",
		m.want.PartitionKey, m.want.RowKey, actual, strings.Join(m.diff, "\n  "))
	if m.roundTrip != "" {
		return noteRoundTripFault(m.roundTrip, message)
	}
	table, _ := actual.(string)
	return noteStaleRead(staleGet(m.ctx, m.b, table, m.want.PartitionKey, m.want.RowKey, m.got,
		func(e api.Entity) bool { return len(EntityDiff(m.want, e)) == 0 }), message)
}

func (m *holdEntity) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("table %v holds %s, which the rule forbids", actual, m.want)
}

type lackEntity struct {
	ctx    context.Context
	b      api.Backend
	pk, rk string
	got    api.Entity
	err    error
}

// LackEntity succeeds when a Get Entity of the keys from the table named by the actual
// string fails with 404: the entity does not exist.
func LackEntity(ctx context.Context, b api.Backend, pk, rk string) types.GomegaMatcher {
	return &lackEntity{ctx: ctx, b: b, pk: pk, rk: rk}
}

func (m *lackEntity) Match(actual any) (bool, error) {
	table, ok := actual.(string)
	if !ok {
		return false, fmt.Errorf("LackEntity expects a table name, got %T", actual)
	}
	m.got, m.err = m.b.GetEntity(m.ctx, table, m.pk, m.rk, nil)
	e, ok := driver.AsError(m.err)
	return ok && e.Status == 404, nil
}

func (m *lackEntity) FailureMessage(actual any) string {
	if m.err == nil {
		table, _ := actual.(string)
		return noteStaleRead(staleGetOfMissing(m.ctx, m.b, table, m.pk, m.rk),
			fmt.Sprintf("the rule expects no entity (%q,%q) in table %v, but it holds %s", m.pk, m.rk, actual, m.got))
	}
	return fmt.Sprintf("reading (%q,%q) from table %v: the rule expects 404, but %s", m.pk, m.rk, actual, describeOutcome(m.err))
}

func (m *lackEntity) NegatedFailureMessage(actual any) string {
	return fmt.Sprintf("the rule expects entity (%q,%q) in table %v, but %s", m.pk, m.rk, actual, describeOutcome(m.err))
}

type failedWithStatusIn struct {
	statuses []int
	codes    []string
}

// HaveFailedWithStatusIn succeeds when the actual error is a service error with one of the
// given statuses and, when codes are given, one of the codes. It serves rules whose status
// is UNCERTAIN between documented alternatives.
func HaveFailedWithStatusIn(statuses []int, codes ...string) types.GomegaMatcher {
	return &failedWithStatusIn{statuses: statuses, codes: codes}
}

func (m *failedWithStatusIn) Match(actual any) (bool, error) {
	err, ok := asError(actual)
	if !ok {
		return false, fmt.Errorf("HaveFailedWithStatusIn expects an error, got %T", actual)
	}
	e, ok := driver.AsError(err)
	if !ok {
		return false, nil
	}
	statusOK := false
	for _, s := range m.statuses {
		statusOK = statusOK || e.Status == s
	}
	if !statusOK {
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

func (m *failedWithStatusIn) want() string {
	s := make([]string, len(m.statuses))
	for i, st := range m.statuses {
		s[i] = fmt.Sprint(st)
	}
	w := strings.Join(s, " or ")
	if len(m.codes) > 0 {
		w += " with code " + strings.Join(m.codes, " or ")
	}
	return w
}

func (m *failedWithStatusIn) FailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend to fail with %s, but %s", m.want(), describeOutcome(err))
}

func (m *failedWithStatusIn) NegatedFailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the backend not to fail with %s, but %s", m.want(), describeOutcome(err))
}

type nameFailedOperation struct{ index int }

// NameFailedOperation succeeds when the actual error is a service error that names batch
// operation index, or names none (Storage leaves the index out in some answers, EVIDENCE.md 4).
func NameFailedOperation(index int) types.GomegaMatcher { return &nameFailedOperation{index: index} }

func (m *nameFailedOperation) Match(actual any) (bool, error) {
	err, ok := asError(actual)
	if !ok {
		return false, fmt.Errorf("NameFailedOperation expects an error, got %T", actual)
	}
	e, ok := driver.AsError(err)
	if !ok {
		return false, nil
	}
	return !e.Indexed || e.FailedIndex == m.index, nil
}

func (m *nameFailedOperation) FailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the failed transaction to name operation %d (or none), but %s", m.index, describeOutcome(err))
}

func (m *nameFailedOperation) NegatedFailureMessage(actual any) string {
	err, _ := asError(actual)
	return fmt.Sprintf("the rule expects the failed transaction not to name operation %d, but %s", m.index, describeOutcome(err))
}

// DescribeOutcome renders the outcome of a call (nil, a service error, a transport error) for
// failure messages and recorded choices.
func DescribeOutcome(err error) string { return describeOutcome(err) }
