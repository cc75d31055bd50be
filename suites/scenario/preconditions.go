package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
)

// Preconditions: what a spec relies on from rules other than its own. A spec calls them
// before the step its rule is about; when one fails, the spec is blocked by that rule
// (framework.F.Requires), with the failure as evidence, never failed.

// RuleTransactions is the rule whose subject is a valid transaction being applied at all.
const RuleTransactions = "batch.all-kinds"

// probePartition holds the entity of a precondition probe; the probe removes it again, so
// the spec's own data is untouched.
const probePartition = "conform-probe"

// RequireTransactions is the precondition of every spec that submits a transaction: the
// backend applies a valid transaction of one insert (RuleTransactions). A backend that
// refuses every transaction would otherwise "pass" each rule whose spec expects a refusal
// (a transaction over two partitions, a failing operation rolled back) without its subject
// ever running.
func RequireTransactions(ctx context.Context, f *framework.F, b api.Backend, table string) {
	ginkgo.GinkgoHelper()
	f.Requires(RuleTransactions, "apply a valid transaction of one insert", func() {
		probe := api.NewEntity(probePartition, "transaction", map[string]api.Value{"V": api.Int32(1)})
		_, err := b.SubmitBatch(ctx, table, []api.BatchOp{{Kind: api.BatchInsert, Entity: probe}})
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "a valid transaction of one insert")
		got, err := b.GetEntity(ctx, table, probe.PartitionKey, probe.RowKey, nil)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "read back the entity a valid transaction inserted")
		gomega.Expect(got).To(matchers.MatchEntity(probe), "the entity a valid transaction inserted")
	})
	f.Requires("modify.delete.removes", "delete the probe entity of the transaction precondition", func() {
		err := b.DeleteEntity(ctx, table, probePartition, "transaction", api.IfMatchAny)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "delete the probe entity")
		// The spec may read its table by queries: the probe must be gone from them too.
		left, err := matchers.QueryAll(ctx, b, table, api.Query{Filter: "PartitionKey eq '" + probePartition + "'"}, MaxPages)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "query the probe's partition after its delete")
		gomega.Expect(left.Entities()).To(gomega.BeEmpty(), "a query of the probe's partition after its delete")
	})
}

// RuleTransactionFailureCode is the rule whose subject is a failed transaction reporting
// the code of its failing operation.
const RuleTransactionFailureCode = "batch.failure.code"

// ExpectTransactionFailure is the check of a spec that makes a transaction fail on purpose:
// the transaction failed with one of statuses, and, as a precondition, it reports code, the
// failing operation's (RuleTransactionFailureCode), which tells that it failed for the
// reason the spec set up. A backend that reports another code blocks the spec on that rule.
func ExpectTransactionFailure(f *framework.F, err error, statuses []int, code string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(err).To(matchers.HaveFailedWithStatusIn(statuses), "the transaction set up to fail")
	f.Requires(RuleTransactionFailureCode, "the failed transaction reports "+code, func() {
		gomega.Expect(err).To(matchers.HaveFailedWithStatusIn(statuses, code), "the transaction set up to fail")
	})
}

// RuleTopLimit is the rule whose subject is $top making pages at all: at most $top entities
// a page, and a continuation while matches remain.
const RuleTopLimit = "query.top.limit"

// RequirePaging is the precondition of a spec that relies on $top making pages (a paged
// query, $top=1000 accepted for what it means): the first page of q, whose $top is smaller
// than matches, the number of entities it selects, holds at most $top entities and carries
// a continuation (RuleTopLimit). A backend that ignores $top and never pages would
// otherwise pass such a spec without its subject ever running.
func RequirePaging(ctx context.Context, f *framework.F, b api.Backend, table string, q api.Query, matches int) {
	ginkgo.GinkgoHelper()
	top, ok := q.Top.Value()
	if !ok || top >= matches {
		ginkgo.Fail(fmt.Sprintf("scenario.RequirePaging: a spec's $top %v cannot page %d matches", q.Top, matches))
	}
	f.Requires(RuleTopLimit, fmt.Sprintf("a first page of $top=%d over %d matches", top, matches), func() {
		page, err := b.QueryEntities(ctx, table, q)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "the first page of $top=%d", top)
		gomega.Expect(len(page.Entities)).To(gomega.BeNumerically("<=", top), "the first page of $top=%d over %d matches", top, matches)
		gomega.Expect(page.Continuation.IsZero()).To(gomega.BeFalse(),
			"the first page of $top=%d held %d of %d matches and no continuation", top, len(page.Entities), matches)
	})
}

// RuleStableReads is the rule whose subject is reads leaving an entity's ETag unchanged.
const RuleStableReads = "entities.reads.stable"

// ReadStable is the precondition of a spec that compares the ETag a read shows with one it
// got before: two reads of the entity agree on its ETag (RuleStableReads); it returns the
// second read. On a backend whose every read gives a new ETag, a read shows no ETag that
// any other answer could match, and such a spec is blocked rather than failed.
func ReadStable(ctx context.Context, f *framework.F, b api.Backend, table, pk, rk string) api.Entity {
	ginkgo.GinkgoHelper()
	var second api.Entity
	f.Requires(RuleStableReads, fmt.Sprintf("two reads of (%q, %q) show one ETag", pk, rk), func() {
		first, err := b.GetEntity(ctx, table, pk, rk, nil)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "Get Entity (%q, %q)", pk, rk)
		second, err = b.GetEntity(ctx, table, pk, rk, nil)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "Get Entity (%q, %q) again", pk, rk)
		gomega.Expect(second.ETag).To(gomega.Equal(first.ETag), "two reads of (%q, %q) in a row", pk, rk)
	})
	return second
}

// RequireRoundTrip is the precondition of a spec that reads back a value to judge another
// rule's subject (a type change, a merge): each of vs, stored in an entity of its own, comes
// back as itself (the round-trip rule of its type, matchers.RoundTripRule). A backend that
// returns a value in another form (an Edm.Int64 as an Edm.Int32 of the same number) would
// otherwise fail such a spec although what it is about worked. Each probe has a property
// name of its own, which no other entity of the table holds; the probes are removed again.
// Once a probe passed, a later difference in the spec's values of that type is the spec's
// own failure (framework.NoteFailedPrecondition).
func RequireRoundTrip(ctx context.Context, f *framework.F, b api.Backend, table string, vs ...api.Value) {
	ginkgo.GinkgoHelper()
	for i, v := range vs {
		rule := matchers.RoundTripRule(v.Type)
		if rule == "" {
			ginkgo.Fail(fmt.Sprintf("scenario.RequireRoundTrip: no round-trip rule for %s", v))
		}
		kind := strings.TrimPrefix(v.Type.String(), "Edm.")
		// A RowKey in lower case: the probe's subject is the value, not the keys' letter case.
		probe := api.NewEntity(probePartition, fmt.Sprintf("round-trip-%s-%d", strings.ToLower(kind), i),
			map[string]api.Value{fmt.Sprintf("ConformRoundTripProbe%s%d", kind, i): v})
		f.Requires(rule, fmt.Sprintf("store %s and read it back as itself", v), func() {
			_, err := b.InsertEntity(ctx, table, probe)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "insert a probe entity holding %s", v)
			got, err := b.GetEntity(ctx, table, probe.PartitionKey, probe.RowKey, nil)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "read back the probe entity holding %s", v)
			gomega.Expect(got).To(matchers.MatchEntity(probe), "the probe entity holding %s", v)
		})
		f.Requires("modify.delete.removes", "delete the probe entity of the round-trip precondition", func() {
			err := b.DeleteEntity(ctx, table, probe.PartitionKey, probe.RowKey, api.IfMatchAny)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "delete the probe entity")
		})
	}
	// The spec may read its table by queries: the probes must be gone from them too.
	f.Requires("modify.delete.removes", "queries no longer return the deleted probe entities of the round-trip precondition", func() {
		left, err := matchers.QueryAll(ctx, b, table, api.Query{Filter: "PartitionKey eq '" + probePartition + "'"}, MaxPages)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "query the probes' partition after their delete")
		gomega.Expect(left.Entities()).To(gomega.BeEmpty(), "a query of the probes' partition after their delete")
	})
}

// RuleKeyIdentity is the rule whose subject is an entity being identified by its table,
// PartitionKey and RowKey together: the same RowKey in two partitions names two entities.
const RuleKeyIdentity = "entities.key.identity"

// RequireKeyIdentity is the precondition of a spec that reads by Get Entity entities that
// share a RowKey with entities of other partitions (a neighbour, an employee moved between
// departments, one Department entity in each partition): two probe entities with one
// RowKey in two partitions each read back as themselves (RuleKeyIdentity). A backend whose
// point reads go by RowKey alone would otherwise fail such a spec on the entity of another
// partition although what the spec is about worked. The probes are removed again, from
// reads and from queries.
func RequireKeyIdentity(ctx context.Context, f *framework.F, b api.Backend, table string) {
	ginkgo.GinkgoHelper()
	var probes []api.Entity
	// Neither partition's name begins with the other's: a backend that confuses keys of one
	// prefix is not this probe's subject.
	for i, pk := range []string{probePartition + "-1", probePartition + "-2"} {
		probes = append(probes, api.NewEntity(pk, "identity", map[string]api.Value{"ConformIdentityProbe": api.Int32(int32(i))}))
	}
	f.Requires(RuleKeyIdentity, "read back two entities of one RowKey in two partitions, each as itself", func() {
		for _, p := range probes {
			_, err := b.InsertEntity(ctx, table, p)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "insert the probe entity (%q, %q)", p.PartitionKey, p.RowKey)
		}
		for _, p := range probes {
			got, err := b.GetEntity(ctx, table, p.PartitionKey, p.RowKey, nil)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "read back the probe entity (%q, %q)", p.PartitionKey, p.RowKey)
			gomega.Expect(got).To(matchers.MatchEntity(p), "the probe entity (%q, %q)", p.PartitionKey, p.RowKey)
		}
	})
	f.Requires(RuleDeleteRemoves, "delete the probe entities of the key identity precondition", func() {
		for _, p := range probes {
			err := b.DeleteEntity(ctx, table, p.PartitionKey, p.RowKey, api.IfMatchAny)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "delete the probe entity (%q, %q)", p.PartitionKey, p.RowKey)
		}
	})
	RequireDeleted(ctx, f, b, table, matchers.Keys(probes)...)
}

// InsertRule is the rule whose subject is inserting an entity with key k into a table that
// holds the entities of earlier: a key that differs from one of earlier only in letter case
// names a new entity where keys are case-sensitive (matchers.RuleKeyCase); any other key is
// modify.insert.stores'.
func InsertRule(k api.Key, earlier []api.Key) string {
	for _, e := range earlier {
		if e != k && strings.EqualFold(e.PartitionKey, k.PartitionKey) && strings.EqualFold(e.RowKey, k.RowKey) {
			return matchers.RuleKeyCase
		}
	}
	return "modify.insert.stores"
}

// RuleDeleteRemoves is the rule whose subject is a deleted entity being gone, from reads
// and from queries.
const RuleDeleteRemoves = "modify.delete.removes"

// RequireDeleted is the precondition of a spec that reads its table by queries after
// deleting entities: a query of each deleted key's partition no longer returns it
// (RuleDeleteRemoves). A backend whose queries keep returning deleted entities would
// otherwise fail every such spec on a table state that its own rule does not cover.
func RequireDeleted(ctx context.Context, f *framework.F, b api.Backend, table string, keys ...api.Key) {
	ginkgo.GinkgoHelper()
	for _, k := range keys {
		f.Requires(RuleDeleteRemoves, fmt.Sprintf("queries no longer return the deleted (%q, %q)", k.PartitionKey, k.RowKey), func() {
			r, err := matchers.QueryAll(ctx, b, table, api.Query{Filter: "PartitionKey eq " + Quote(k.PartitionKey)}, MaxPages)
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "query the partition %q after a delete", k.PartitionKey)
			for _, e := range r.Entities() {
				gomega.Expect(e.Key()).NotTo(gomega.Equal(k), "a query of partition %q after (%q, %q) was deleted", k.PartitionKey, k.PartitionKey, k.RowKey)
			}
		})
	}
}

// RuleContinuation is the rule whose subject is a page carrying a continuation whenever
// matches remain after it.
const RuleContinuation = "pagination.continuation"

// RuleExactlyOnce is the rule whose subject is a query followed across its continuations
// returning every match exactly once.
const RuleExactlyOnce = "pagination.exactly-once"

// ExpectPagedKeys expects r, a query meant to page ($top below its matches, or more matches
// than a page holds) run to its end, to hold the entities of want, each once; a spec whose
// query fits one page compares its entities itself. When r came in several pages, that is
// RuleExactlyOnce's subject: a backend that loses or repeats entities where a continuation
// resumes blocks the spec by that rule instead of failing the spec's own (its order, its
// pages, its pattern). A query answered in one page that holds fewer entities than want
// ended while matches remained, which is RuleContinuation's subject; otherwise the spec's
// own rule holds it to want. Callers whose filter or $select must hold on every page check
// that first (pagination.options-resent).
func ExpectPagedKeys(f *framework.F, r matchers.Result, want []api.Key, description ...any) {
	ginkgo.GinkgoHelper()
	if len(r.Pages) <= 1 {
		f.Requires(RuleContinuation, fmt.Sprintf("a continuation while matches remain (%d matches)", len(want)), func() {
			gomega.Expect(len(r.Entities())).To(gomega.BeNumerically(">=", len(want)), description...)
		})
		gomega.Expect(r.Entities()).To(matchers.ConsistOfKeys(want...), description...)
		return
	}
	f.Requires(RuleExactlyOnce, fmt.Sprintf("every one of %d matches once across %d pages", len(want), len(r.Pages)), func() {
		gomega.Expect(r.Entities()).To(matchers.ConsistOfKeys(want...), description...)
	})
}

// RuleKeyOrder is the rule whose subject is query results sorted by PartitionKey, then
// RowKey; RuleGroupedPartitions the rule whose subject is the entities of a partition
// coming together, partitions in key order.
const (
	RuleKeyOrder          = "ordering.key-order"
	RuleGroupedPartitions = "ordering.across-partitions"
)

// RequireKeyOrder is the precondition of a spec that relies on key order for its own
// subject (an order of particular keys, a range returned in RowKey order, the newest
// entity first): in a table of its own, plain lower-case keys of one partition inserted in
// descending order come back ascending (RuleKeyOrder), and then two more partitions whose
// RowKeys interleave come back one partition after the other (RuleGroupedPartitions), each
// in one page. A backend that returns no key order at all blocks such a spec instead of
// failing it. Under a profile that promises no order (F.OrderPromised) it checks nothing.
func RequireKeyOrder(ctx context.Context, f *framework.F) {
	ginkgo.GinkgoHelper()
	if !f.OrderPromised(RuleKeyOrder) {
		return
	}
	table := f.NewTable(ctx)
	var stored []api.Key
	probe := func(rule string, keys ...api.Key) {
		f.Requires("modify.insert.stores", fmt.Sprintf("insert %v in the reverse order", keys), func() {
			for i := len(keys) - 1; i >= 0; i-- {
				_, err := f.Backend().InsertEntity(ctx, table, api.NewEntity(keys[i].PartitionKey, keys[i].RowKey, map[string]api.Value{"I": api.Int32(int32(i))}))
				gomega.Expect(err).To(matchers.SucceedOnBackend(), "insert (%q, %q)", keys[i].PartitionKey, keys[i].RowKey)
			}
		})
		stored = append(stored, keys...)
		f.Requires(rule, fmt.Sprintf("query %v, each inserted in the reverse order, in key order", stored), func() {
			page, err := f.Backend().QueryEntities(ctx, table, api.Query{})
			gomega.Expect(err).To(matchers.SucceedOnBackend(), "query the keys %v", stored)
			gomega.Expect(page.Entities).To(matchers.HaveKeys(stored...), "the keys %v, each inserted in the reverse order", stored)
		})
	}
	// Partitions of their own name: a spec's key that a backend folded to lower case must not
	// come back as one the probe wrote (matchers.RuleKeyCase).
	probe(RuleKeyOrder, Key("probe-a", "a"), Key("probe-a", "b"), Key("probe-a", "c"))
	probe(RuleGroupedPartitions, Key("probe-m", "b"), Key("probe-n", "a"))
}
