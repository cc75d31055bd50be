package scenario

import (
	"context"
	"fmt"

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
