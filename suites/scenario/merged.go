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

// Merges on the way: a spec whose writes merge a few properties into stored entities to
// reach its own subject (two copies of a value changed by one transaction, a count kept
// equal to the entities it counts, a name changed on every entity) judges the properties it
// merged; that the merge kept the properties it did not send is the subject of the merge's
// own rule, a precondition.

// Rules whose subject is a merge keeping the stored properties it does not send: Merge Entity
// (RuleMergeKeepsOmitted) and a merge inside a transaction (RuleTransactionMerge).
const (
	RuleMergeKeepsOmitted = "modify.merge.keeps-omitted"
	RuleTransactionMerge  = "batch.merge-replace"
)

// ExpectMerged is the check of a spec that merged the properties named merged into the
// entity want's keys name: a Get Entity shows each with want's value, which the spec's rule
// requires; that the entity is want, holding also the properties the merge did not send, is
// mergeRule's subject (RuleMergeKeepsOmitted, RuleTransactionMerge), a precondition.
func ExpectMerged(ctx context.Context, f *framework.F, b api.Backend, table, mergeRule string, want api.Entity, merged ...string) {
	ginkgo.GinkgoHelper()
	for _, n := range merged {
		v, ok := want.Properties[n]
		if !ok {
			ginkgo.Fail(fmt.Sprintf("scenario.ExpectMerged: the expected entity (%q, %q) has no merged property %s", want.PartitionKey, want.RowKey, n))
		}
		gomega.Expect(table).To(matchers.HoldProperty(ctx, b, want.PartitionKey, want.RowKey, n, v), "the merged %s of (%q, %q)", n, want.PartitionKey, want.RowKey)
	}
	f.Requires(mergeRule, fmt.Sprintf("the merge of %v into (%q, %q) keeps the properties it does not send", merged, want.PartitionKey, want.RowKey), func() {
		gomega.Expect(table).To(matchers.HoldEntity(ctx, b, want))
	})
}

// ExpectMergedTable is ExpectMerged for a whole table: it holds the entities of want, no
// other, each with want's values of the properties named merged, which the spec's rule
// requires; that each is exactly the entity of want is mergeRule's subject, a precondition.
func ExpectMergedTable(ctx context.Context, f *framework.F, b api.Backend, table, mergeRule string, want []api.Entity, merged ...string) {
	ginkgo.GinkgoHelper()
	got, err := matchers.ReadTable(ctx, b, table)
	gomega.Expect(err).To(matchers.SucceedOnBackend(), "reading table %s", table)
	byKey := make(map[api.Key]api.Entity, len(got))
	for _, e := range got {
		byKey[e.Key()] = e
	}
	// A query of each partition the spec expects entities in adds what the scan missed, as
	// HoldExactly does: a scan that stops short is query.table-scan's failure.
	queried := map[string]bool{}
	for _, w := range want {
		if queried[w.PartitionKey] {
			continue
		}
		queried[w.PartitionKey] = true
		part, err := matchers.ReadQuery(ctx, b, table, api.Query{Filter: Cmp("PartitionKey", "eq", w.PartitionKey)}, "query of partition "+w.PartitionKey)
		gomega.Expect(err).To(matchers.SucceedOnBackend(), "reading partition %q of table %s", w.PartitionKey, table)
		for _, e := range part {
			if _, ok := byKey[e.Key()]; !ok {
				byKey[e.Key()] = e
				got = append(got, e)
			}
		}
	}
	// A key come back in another letter case is RuleKeyCase's subject: ConsistOfKeys blocks the spec by it.
	gomega.Expect(got).To(matchers.ConsistOfKeys(matchers.Keys(want)...), "the keys of the entities table %s holds", table)
	for _, w := range want {
		g := byKey[w.Key()]
		for _, n := range merged {
			gomega.Expect(g.Properties).To(gomega.HaveKeyWithValue(n, w.Properties[n]), "the merged %s of (%q, %q), which reads %s", n, w.PartitionKey, w.RowKey, g)
		}
	}
	f.Requires(mergeRule, fmt.Sprintf("the merges of %v keep the properties they do not send", merged), func() {
		gomega.Expect(table).To(matchers.HoldExactly(ctx, b, want...))
	})
}
