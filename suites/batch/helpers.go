package batch

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// pk is the PartitionKey of every transaction's entities.
const pk = "p"

// props builds a property map from name/value pairs.
func props(kv ...any) map[string]api.Value {
	m := make(map[string]api.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return m
}

// entity builds an entity of partition pk.
func entity(rk string, kv ...any) api.Entity { return api.NewEntity(pk, rk, props(kv...)) }

func opOf(kind api.BatchOpKind, e api.Entity) api.BatchOp { return api.BatchOp{Kind: kind, Entity: e} }

func insertOp(rk string, kv ...any) api.BatchOp  { return opOf(api.BatchInsert, entity(rk, kv...)) }
func replaceOp(rk string, kv ...any) api.BatchOp { return opOf(api.BatchReplace, entity(rk, kv...)) }
func mergeOp(rk string, kv ...any) api.BatchOp   { return opOf(api.BatchMerge, entity(rk, kv...)) }
func upsertReplaceOp(rk string, kv ...any) api.BatchOp {
	return opOf(api.BatchInsertOrReplace, entity(rk, kv...))
}
func upsertMergeOp(rk string, kv ...any) api.BatchOp {
	return opOf(api.BatchInsertOrMerge, entity(rk, kv...))
}
func deleteOp(rk string) api.BatchOp   { return opOf(api.BatchDelete, entity(rk)) }
func retrieveOp(rk string) api.BatchOp { return opOf(api.BatchRetrieve, entity(rk)) }

// withIfMatch returns op conditioned on etag.
func withIfMatch(op api.BatchOp, etag string) api.BatchOp {
	op.IfMatch = etag
	return op
}

// seed inserts es one by one (not by transaction, so that setting up never depends on the
// feature under test) and returns them as the spec expects the table to hold them: each
// entity as sent, with the ETag its insert answered, on which a spec may condition an
// operation. The rest of the insert's answer is not used: what it says is the subject of
// the insert's own rules. That the table holds the entities sent is modify.insert.stores'
// subject, a precondition, checked by reading the table back.
func seed(ctx context.Context, b api.Backend, table string, es ...api.Entity) []api.Entity {
	GinkgoHelper()
	out := make([]api.Entity, len(es))
	for i, e := range es {
		framework.Requires("modify.insert.stores", "insert the spec's entities", func() {
			got, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend(), "setting up: insert %s", e)
			out[i] = e.Clone()
			out[i].ETag = got.ETag
		})
	}
	framework.Requires("modify.insert.stores", "the table holds the inserted entities", func() {
		held := map[api.Key]api.Entity{}
		for _, e := range snapshot(ctx, b, table) {
			held[e.Key()] = e
		}
		for _, e := range es {
			got, ok := held[e.Key()]
			Expect(ok).To(BeTrue(), "setting up: the inserted (%q, %q) is missing from table %s", e.PartitionKey, e.RowKey, table)
			Expect(got).To(MatchEntity(e), "setting up: the inserted (%q, %q)", e.PartitionKey, e.RowKey)
		}
	})
	return out
}

// snapshot reads the whole table.
func snapshot(ctx context.Context, b api.Backend, table string) []api.Entity {
	GinkgoHelper()
	all, err := ReadTable(ctx, b, table)
	Expect(err).To(SucceedOnBackend(), "reading table %s", table)
	return all
}

// etagOf reads the current ETag of entity rk, once two reads agree on it (the precondition
// scenario.ReadStable: a read that changes the ETag shows none another answer could match).
func etagOf(ctx context.Context, f *framework.F, b api.Backend, table, rk string) string {
	GinkgoHelper()
	return scenario.ReadStable(ctx, f, b, table, pk, rk).ETag
}

// describeOps renders a transaction for failure messages.
func describeOps(ops []api.BatchOp) string {
	s := ""
	for i, op := range ops {
		if i > 0 {
			s += ", "
		}
		if i == 10 && len(ops) > 12 {
			return s + fmt.Sprintf("... %d more", len(ops)-i)
		}
		s += fmt.Sprintf("%d:%s(%q)", i, op.Kind, op.Entity.RowKey)
	}
	return s
}

// transactionTable returns the backend and a new table for a spec that submits a
// transaction, once the backend has shown it applies a valid one
// (scenario.RequireTransactions): a backend that refuses every transaction blocks the spec
// by batch.all-kinds instead of passing a rule that expects a refusal.
func transactionTable(ctx context.Context, f *framework.F) (api.Backend, string) {
	GinkgoHelper()
	b, table := f.Backend(), f.NewTable(ctx)
	scenario.RequireTransactions(ctx, f, b, table)
	return b, table
}
