package persist

import (
	"context"
	"fmt"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// TestListedReadsAgreeWithMapped: the listed reads a server prefers answer as the mapped
// ones do, through the Store as through the Service.
func TestListedReadsAgreeWithMapped(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CreateTable(ctx, "tbl"); err != nil {
		t.Fatal(err)
	}
	for r := range 5 {
		e := api.NewEntity("p", fmt.Sprintf("r%d", r), map[string]api.Value{"b": api.Int32(int32(r)), "a": api.String(fmt.Sprint(r))})
		if _, err := s.InsertEntity(ctx, "tbl", e); err != nil {
			t.Fatal(err)
		}
	}
	q := api.Query{Filter: "PartitionKey eq 'p'", Top: api.TopOf(3)}
	want, err := s.QueryEntities(ctx, "tbl", q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.QueryEntitiesListed(ctx, "tbl", q, nil)
	if err != nil || got.Continuation != want.Continuation || len(got.Entities) != len(want.Entities) {
		t.Fatalf("listed page %+v, %v; want %+v", got, err, want)
	}
	for i, e := range got.Entities {
		if e.RowKey != want.Entities[i].RowKey || len(e.Properties) != 2 || e.Properties[0].Name != "a" ||
			e.Properties[0].Value != want.Entities[i].Properties["a"] || e.Properties[1].Value != want.Entities[i].Properties["b"] {
			t.Fatalf("listed entity %+v, want %v", e, want.Entities[i])
		}
	}
	e, err := s.GetEntityListed(ctx, "tbl", "p", "r4", nil, nil)
	if err != nil || e.ETag == "" || len(e.Properties) != 2 || e.Properties[1].Value != api.Int32(4) {
		t.Fatalf("listed get %+v, %v", e, err)
	}
	if _, err := s.GetEntityListed(ctx, "tbl", "p", "none", nil, nil); err == nil {
		t.Fatal("listed get of a missing entity succeeded")
	}
}
