package scenario

import (
	"context"

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
