package reference

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// TestListedAnswersAgreeWithMapped holds QueryEntitiesListed and GetEntityListed to
// QueryEntities and GetEntity: the same entities, order, continuations and errors, the
// properties in name order. One buffer serves every query and one every get, so that an
// element decoded over an earlier answer's must show nothing of it.
func TestListedAnswersAgreeWithMapped(t *testing.T) {
	s, _ := newTestService(t)
	r := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "B", "zz", "Data", "Seq", "é", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11", "n12", "n13", "n14"}
	for pk := 0; pk < 4; pk++ {
		for rk := 0; rk < 30; rk++ {
			props := map[string]api.Value{}
			for _, n := range names[:r.IntN(len(names))] {
				if r.IntN(3) > 0 {
					props[n] = api.String(fmt.Sprintf("%s-%d-%d", n, pk, rk))
				} else {
					props[n] = api.Int64(r.Int64())
				}
			}
			mustInsert(t, s, api.NewEntity(fmt.Sprintf("p%d", pk), fmt.Sprintf("r%02d", rk), props))
		}
	}
	queries := []api.Query{
		{},
		{Filter: "PartitionKey eq 'p1'"},
		{Filter: "PartitionKey eq 'p2' and RowKey ge 'r05' and RowKey lt 'r20'", Top: api.TopOf(4)},
		{Filter: "PartitionKey ge 'p1' and PartitionKey lt 'p3'", Top: api.TopOf(7)},
		{Filter: "PartitionKey eq 'p0'", Select: []string{"a", "zz", "RowKey", "missing"}},
		{Filter: "a ne 'x' or Seq gt 0L", Top: api.TopOf(9)},
		{Filter: "PartitionKey eq 'nothing'"},
		{Top: api.TopOf(0)},
		{Filter: "PartitionKey eq"},
		{Select: []string{"bad name!"}},
	}
	var into []api.ListedEntity
	for _, q := range queries {
		for page := 0; ; page++ {
			want, werr := s.QueryEntities(bg, "Tbl", q)
			got, gerr := s.QueryEntitiesListed(bg, "Tbl", q, into)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("%+v: error %v, want %v", q, gerr, werr)
			}
			if werr != nil {
				break
			}
			into = got.Entities
			if got.Continuation != want.Continuation || len(got.Entities) != len(want.Entities) {
				t.Fatalf("%+v page %d: %d entities, continuation %v; want %d, %v", q, page, len(got.Entities), got.Continuation, len(want.Entities), want.Continuation)
			}
			for i := range want.Entities {
				checkListed(t, fmt.Sprintf("%+v page %d entity %d", q, page, i), got.Entities[i], want.Entities[i])
			}
			if want.Continuation.IsZero() {
				break
			}
			q.Continuation = want.Continuation
		}
	}
	var props []api.Property
	for i := 0; i < 200; i++ {
		pk, rk := fmt.Sprintf("p%d", r.IntN(5)), fmt.Sprintf("r%02d", r.IntN(32))
		var sel []string
		if i%3 == 0 {
			sel = []string{"n1", "PartitionKey", "Timestamp", "nope"}
		}
		want, werr := s.GetEntity(bg, "Tbl", pk, rk, sel)
		got, gerr := s.GetEntityListed(bg, "Tbl", pk, rk, sel, props)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("get %s %s: error %v, want %v", pk, rk, gerr, werr)
		}
		if werr == nil {
			checkListed(t, "get "+pk+" "+rk, got, want)
			props = got.Properties
		}
	}
	if _, err := s.GetEntityListed(bg, "Nope", "p0", "r00", nil, nil); fmt.Sprint(err) != fmt.Sprint(func() error { _, err := s.GetEntity(bg, "Nope", "p0", "r00", nil); return err }()) {
		t.Fatalf("missing table: %v", err)
	}
}

func checkListed(t *testing.T, what string, got api.ListedEntity, want api.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || !got.Timestamp.Equal(want.Timestamp) ||
		got.ETag != want.ETag || got.Absent != want.Absent || len(got.Properties) != len(want.Properties) {
		t.Fatalf("%s: %+v, want %v", what, got, want)
	}
	for i, p := range got.Properties {
		if i > 0 && got.Properties[i-1].Name >= p.Name {
			t.Fatalf("%s: properties out of order: %v", what, got.Properties)
		}
		if v, ok := want.Properties[p.Name]; !ok || v != p.Value {
			t.Fatalf("%s: property %s = %v, want %v", what, p.Name, p.Value, v)
		}
	}
}
