package mutant

import (
	"context"
	"slices"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/inproc"
)

// A failed transaction puts the other tables back as they were at the last committed
// one, and leaves its own table as a correct rollback does.
func TestBatchFailureRollsBackAccount(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "batch-failure-rolls-back-account").Wrap(inproc.New())
	seed(t, b, "other", api.Key{PartitionKey: "p", RowKey: "dup"})
	seed(t, b, "neighbour", api.Key{PartitionKey: "n", RowKey: "before"})
	if _, err := b.SubmitBatch(ctx, "other", []api.BatchOp{{Kind: api.BatchInsert, Entity: api.NewEntity("p", "committed", nil)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InsertEntity(ctx, "neighbour", api.NewEntity("n", "after", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := b.SubmitBatch(ctx, "other", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "new", nil)},
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "dup", nil)},
	})
	if e, ok := driver.AsError(err); !ok || e.Status != 409 {
		t.Fatalf("batch answered %v, want the 409 of operation 1", err)
	}
	if _, err := b.GetEntity(ctx, "neighbour", "n", "after", nil); err == nil {
		t.Error("the neighbour's write after the last committed transaction survived the failed one")
	}
	if _, err := b.GetEntity(ctx, "neighbour", "n", "before", nil); err != nil {
		t.Errorf("the neighbour's entity from before the committed transaction is gone: %v", err)
	}
	for _, rk := range []string{"dup", "committed"} {
		if _, err := b.GetEntity(ctx, "other", "p", rk, nil); err != nil {
			t.Errorf("the failed transaction's own table lost p/%s: %v", rk, err)
		}
	}
	if _, err := b.GetEntity(ctx, "other", "p", "new", nil); err == nil {
		t.Error("the failed transaction's own table kept p/new")
	}
}

// Query Tables lists every table with the neighbours', whatever the filter, in name order
// and paged by $top and NextTableName.
func TestTableFilterIgnored(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "tables-filter-ignored").Wrap(inproc.New())
	for _, n := range []string{"alpha", "beta"} {
		seed(t, b, n)
	}
	var all []string
	q := api.TableQuery{Filter: "TableName eq 'alpha'", Top: 2}
	for range 5 {
		p, err := b.QueryTables(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Tables) > 2 {
			t.Fatalf("a page of $top=2 held %v", p.Tables)
		}
		all = append(all, p.Tables...)
		if p.NextTableName == "" {
			break
		}
		q.NextTableName = p.NextTableName
	}
	if want := []string{"alpha", "beta", "othersInvoices", "othersOrders"}; !slices.Equal(all, want) {
		t.Errorf("listed %v, want %v", all, want)
	}
}
