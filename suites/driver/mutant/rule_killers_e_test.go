package mutant

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/inproc"
)

// TestStringEqualities: deletes-stale-in-value-index faults only a filter made of String
// equalities joined by and, read with the service's lexer.
func TestStringEqualities(t *testing.T) {
	for _, c := range []struct {
		filter string
		want   map[string]string
		ok     bool
	}{
		{"(PartitionKey eq 'email_Sales') and (EmployeeId eq '000223')", map[string]string{"PartitionKey": "email_Sales", "EmployeeId": "000223"}, true},
		{"PartitionKey eq 'O''Neil' and Name eq 'a and b'", map[string]string{"PartitionKey": "O'Neil", "Name": "a and b"}, true},
		{"PartitionKey eq 'p' or Name eq 'a'", nil, false},
		{"PartitionKey eq 'p' and Age eq 5", nil, false},
		{"PartitionKey eq 'p' and Name ne 'a'", nil, false},
		{"not (Name eq 'a')", nil, false},
	} {
		got, ok := stringEqualities(c.filter)
		if ok != c.ok || (ok && !maps.Equal(got, c.want)) {
			t.Errorf("stringEqualities(%q) = %v, %v; want %v, %v", c.filter, got, ok, c.want, c.ok)
		}
	}
}

// TestTableDate: next-day-table-held holds only names that end in a real yyyyMMdd date
// after something else.
func TestTableDate(t *testing.T) {
	for _, c := range []struct {
		name string
		want string
		ok   bool
	}{
		{"cfabcp1t5d20240101", "2024-01-01", true},
		{"logins20241231", "2024-12-31", true},
		{"20240101", "", false},
		{"cfabcp1t12345678", "", false},
		{"cfabcp1t12", "", false},
		{"logins2024013x", "", false},
	} {
		got, ok := tableDate(c.name)
		if ok != c.ok || (ok && got.Format(time.DateOnly) != c.want) {
			t.Errorf("tableDate(%q) = %v, %v; want %s, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestNextDayLock: after a day's table is deleted, the next day's table is refused for the
// hold and created after it; other names are the wrapped backend's.
func TestNextDayLock(t *testing.T) {
	ctx := context.Background()
	m := &nextDayLock{Backend: inproc.New(), hold: time.Hour}
	if err := m.CreateTable(ctx, "logsd20240101"); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteTable(ctx, "logsd20240101"); err != nil {
		t.Fatal(err)
	}
	if e, ok := driver.AsError(m.CreateTable(ctx, "otherd20240102")); !ok || e.Status != 409 || e.Code != "TableBeingDeleted" {
		t.Errorf("create of the next day's table answered %v; want 409 TableBeingDeleted", e)
	}
	for _, name := range []string{"otherd20240103", "plain"} {
		if err := m.CreateTable(ctx, name); err != nil {
			t.Errorf("create %s: %v; want it passed to the wrapped backend", name, err)
		}
	}
	m.hold = 0
	if err := m.CreateTable(ctx, "otherd20240102"); err != nil {
		t.Errorf("create of the next day's table after the hold: %v", err)
	}
}

// TestUpsertFindsRowKeyElsewhere: an upsert of a new entity whose RowKey another partition
// holds replaces that entity; an upsert of an existing entity or of a new RowKey does not.
func TestUpsertFindsRowKeyElsewhere(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "upsert-finds-rowkey-elsewhere").Wrap(inproc.New())
	seed(t, b, "tbl", api.Key{PartitionKey: "Sales", RowKey: "000010"})
	if _, err := b.UpdateEntity(ctx, "tbl", api.NewEntity("Marketing", "000010", map[string]api.Value{"V": api.Int32(2)}), api.Replace, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetEntity(ctx, "tbl", "Marketing", "000010", nil); err == nil {
		t.Error("the upsert created the entity in the new partition")
	}
	if got, err := b.GetEntity(ctx, "tbl", "Sales", "000010", nil); err != nil || got.Properties["V"].Int() != 2 {
		t.Errorf("the entity of the other partition was not replaced: %v, %v", got, err)
	}
	if _, err := b.UpdateEntity(ctx, "tbl", api.NewEntity("Sales", "new", nil), api.Replace, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetEntity(ctx, "tbl", "Sales", "new", nil); err != nil {
		t.Errorf("an upsert of a new RowKey did not create it: %v", err)
	}
}

// TestDeletesStaleInValueIndex: a deleted entity comes back to a query of its partition that
// compares one of its String properties with eq, and to no other query.
func TestDeletesStaleInValueIndex(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "deletes-stale-in-value-index").Wrap(inproc.New())
	seed(t, b, "tbl", api.Key{PartitionKey: "p", RowKey: "keep"})
	if _, err := b.InsertEntity(ctx, "tbl", api.NewEntity("p", "gone", map[string]api.Value{"Id": api.String("7")})); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteEntity(ctx, "tbl", "p", "gone", api.IfMatchAny); err != nil {
		t.Fatal(err)
	}
	count := func(filter string) int {
		p, err := b.QueryEntities(ctx, "tbl", api.Query{Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Entities)
	}
	if n := count("(PartitionKey eq 'p') and (Id eq '7')"); n != 1 {
		t.Errorf("the indexed query returned %d entities; want the deleted one", n)
	}
	if n := count("PartitionKey eq 'p'"); n != 1 {
		t.Errorf("the partition query returned %d entities; want only the kept one", n)
	}
}

// TestDropRepeatedSubsets: an entity of three or more properties that another entity repeats
// among more of its own is dropped; one that differs in a value, or is too small, is kept.
func TestDropRepeatedSubsets(t *testing.T) {
	full := api.NewEntity("Sales", "empid_1", map[string]api.Value{"A": api.String("a"), "B": api.String("b"), "C": api.String("c"), "D": api.String("d")})
	slim := api.NewEntity("Sales", "email_1", map[string]api.Value{"A": api.String("a"), "B": api.String("b"), "C": api.String("c")})
	other := api.NewEntity("Sales", "email_2", map[string]api.Value{"A": api.String("a"), "B": api.String("b"), "C": api.String("x")})
	small := api.NewEntity("Sales", "x", map[string]api.Value{"A": api.String("a")})
	p := api.Page{Entities: []api.Entity{slim, full, other, small}}
	dropRepeatedSubsets(&p)
	var keys []string
	for _, e := range p.Entities {
		keys = append(keys, e.RowKey)
	}
	if want := []string{"empid_1", "email_2", "x"}; !equalStrings(keys, want) {
		t.Errorf("kept %v; want %v", keys, want)
	}
}

// TestDropOffFormatRowKeys: only a page whose first three RowKeys are digit strings of one
// width loses its other entities.
func TestDropOffFormatRowKeys(t *testing.T) {
	page := func(rks ...string) *api.Page {
		p := &api.Page{}
		for _, rk := range rks {
			p.Entities = append(p.Entities, api.NewEntity("Sales", rk, nil))
		}
		return p
	}
	rowKeys := func(p *api.Page) []string {
		var out []string
		for _, e := range p.Entities {
			out = append(out, e.RowKey)
		}
		return out
	}
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"000010", "000020", "000030", "Department"}, []string{"000010", "000020", "000030"}},
		{[]string{"121", "2", "322", "R~"}, []string{"121", "2", "322", "R~"}},
		{[]string{"00001", "00002", "Department", "Empty"}, []string{"00001", "00002", "Department", "Empty"}},
		{[]string{"000010", "000020", "000030"}, []string{"000010", "000020", "000030"}},
	} {
		p := page(c.in...)
		dropOffFormatRowKeys(p)
		if got := rowKeys(p); !equalStrings(got, c.want) {
			t.Errorf("dropOffFormatRowKeys(%v) kept %v; want %v", c.in, got, c.want)
		}
	}
}

// TestRewriteBlobAddress: only an https address of the public blob endpoint is rewritten.
func TestRewriteBlobAddress(t *testing.T) {
	e := api.NewEntity("p", "r", map[string]api.Value{
		"Photo": api.String("https://contoso.blob.core.windows.net/photos/Sales/000223.jpg"),
		"Other": api.String("https://conform.example/x"),
		"Text":  api.String("contoso.blob.core.windows.net/photos"),
	})
	rewriteBlobAddress(&e)
	if got := e.Properties["Photo"].Str; got != "http://127.0.0.1:10000/contoso/photos/Sales/000223.jpg" {
		t.Errorf("Photo = %q", got)
	}
	if e.Properties["Other"].Str != "https://conform.example/x" || e.Properties["Text"].Str != "contoso.blob.core.windows.net/photos" {
		t.Errorf("values other than blob addresses changed: %v", e)
	}
}

// TestDropExtendedNames: a property whose name begins with another's is dropped.
func TestDropExtendedNames(t *testing.T) {
	e := api.NewEntity("p", "r", map[string]api.Value{"Manager": api.String("1"), "ManagerEmail": api.String("m"), "Email": api.String("e")})
	dropExtendedNames(&e)
	if _, ok := e.Properties["ManagerEmail"]; ok || len(e.Properties) != 2 {
		t.Errorf("got %v; want Manager and Email only", e)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBatchMergesPast64Dropped: a transaction of 70 merges answers for all 70 and applies
// the first 64.
func TestBatchMergesPast64Dropped(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "batch-merges-past-64-dropped").Wrap(inproc.New())
	var keys []api.Key
	for i := range 70 {
		keys = append(keys, api.Key{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i)})
	}
	seed(t, b, "tbl", keys...)
	var ops []api.BatchOp
	for _, k := range keys {
		ops = append(ops, api.BatchOp{Kind: api.BatchMerge, IfMatch: api.IfMatchAny, Entity: api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"W": api.Int32(2)})})
	}
	results, err := b.SubmitBatch(ctx, "tbl", ops)
	if err != nil || len(results) != len(ops) {
		t.Fatalf("the transaction answered %d results, %v; want %d and success", len(results), err, len(ops))
	}
	for i, k := range keys {
		got, err := b.GetEntity(ctx, "tbl", k.PartitionKey, k.RowKey, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, merged := got.Properties["W"]; merged != (i < mergeBufferRows) {
			t.Errorf("merge %d applied: %v; want %v", i, merged, i < mergeBufferRows)
		}
	}
}
