package matchers

import (
	"context"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// firstPartitionScan answers a query without a PartitionKey condition with the entities of
// the first partition only, and a PartitionKey eq query with that partition's entities.
type firstPartitionScan struct {
	api.Backend
	entities []api.Entity
}

func (s firstPartitionScan) QueryEntities(_ context.Context, _ string, q api.Query) (api.Page, error) {
	var out []api.Entity
	for _, e := range s.entities {
		switch {
		case q.Filter == "":
			if e.PartitionKey == s.entities[0].PartitionKey {
				out = append(out, e)
			}
		case strings.Contains(q.Filter, "'"+e.PartitionKey+"'"):
			out = append(out, e)
		}
	}
	return api.Page{Entities: out}, nil
}

func TestHoldExactlyReadsTheExpectedPartitions(t *testing.T) {
	a := api.NewEntity("a", "1", map[string]api.Value{"V": api.Int32(1)})
	b := api.NewEntity("b", "1", map[string]api.Value{"V": api.Int32(2)})
	ghost := api.NewEntity("c", "1", nil)
	ctx := context.Background()

	ok, err := HoldExactly(ctx, firstPartitionScan{entities: []api.Entity{a, b}}, a, b).Match("t")
	if err != nil || !ok {
		t.Errorf("a table whose scan stops after partition a holds a and b: got %v, %v", ok, err)
	}
	extra := api.NewEntity("a", "2", nil)
	m := HoldExactly(ctx, firstPartitionScan{entities: []api.Entity{a, extra, b}}, a, b)
	if ok, _ := m.Match("t"); ok || !strings.Contains(m.FailureMessage("t"), `("a","2") is not expected`) {
		t.Errorf("an entity the rule does not expect went unnoticed: %s", m.FailureMessage("t"))
	}
	m = HoldExactly(ctx, firstPartitionScan{entities: []api.Entity{a, ghost}}, a, b)
	if ok, _ := m.Match("t"); ok || !strings.Contains(m.FailureMessage("t"), `("b","1") is missing`) {
		t.Errorf("a missing entity went unnoticed: %s", m.FailureMessage("t"))
	}
}
