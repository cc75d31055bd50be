package mutant

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/odata"
)

// Faults of the design guide's patterns (E-design-guide) that no general mutant reaches
// without first breaking a rule the pattern's spec requires: each cuts a corner only on the
// queries or reads the pattern makes, so that the pattern's own subject is what fails.

// getMapper changes the entity Get Entity returns.
type getMapper struct {
	api.Backend
	fn func(e *api.Entity)
}

func (m *getMapper) GetEntity(ctx context.Context, table, pk, rk string, sel []string) (api.Entity, error) {
	got, err := m.Backend.GetEntity(ctx, table, pk, rk, sel)
	if err == nil {
		m.fn(&got)
	}
	return got, err
}

// dropProperty removes the property name from e, when it has one.
func dropProperty(name string) func(e *api.Entity) {
	return func(e *api.Entity) { delete(e.Properties, name) }
}

// dropLastNamed removes the property of e whose name sorts last.
func dropLastNamed(e *api.Entity) { dropLastProperty(*e) }

// partitionOfFilter returns the PartitionKey of a filter that is a single PartitionKey
// equality and nothing else, read with the service's own lexer (odata.Tokens).
func partitionOfFilter(filter string) (string, bool) {
	toks := odata.Tokens(filter)
	if len(toks) != 3 || toks[0].Text != "PartitionKey" || toks[1].Text != "eq" || toks[2].Kind != odata.TokenLiteral {
		return "", false
	}
	lit := toks[2].Text
	if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
		return "", false
	}
	return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'"), true
}

// comparesWith reports whether filter compares the property prop with op (any op when op
// is ""), read with the service's own lexer (odata.Tokens).
func comparesWith(filter, prop, op string) bool {
	toks := odata.Tokens(filter)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].Kind == odata.TokenWord && toks[i].Text == prop && toks[i+1].Kind == odata.TokenWord && (op == "" || toks[i+1].Text == op) {
			return true
		}
	}
	return false
}

// allDigits reports whether s is a non-empty run of ASCII digits.
func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// topIs reports whether q asks for pages of exactly n.
func topIs(q api.Query, n int) bool {
	top, ok := q.Top.Value()
	return ok && top == n
}

var (
	_ = define(Mutant{
		Name:        "projected-range-drops-property",
		Description: "answers a query that selects two or more custom properties of a RowKey range without the selected one whose name sorts last",
		Breaks:      []string{"pattern.compound-key.projection"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if !comparesWith(q.Filter, "RowKey", "ge") || !comparesWith(q.Filter, "RowKey", "lt") {
				return
			}
			var names []string
			for _, name := range q.Select {
				if name != "PartitionKey" && name != "RowKey" && name != "Timestamp" {
					names = append(names, name)
				}
			}
			if len(names) < 2 {
				return
			}
			mapEntities(p.Entities, dropProperty(slices.Max(names)))
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "filtered-continuation-drops-age",
		Description: "answers the continued pages of a query filtered on Age without the Age property",
		Breaks:      []string{"pattern.impl.saved-continuation"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Continuation.IsZero() || !comparesWith(q.Filter, "Age", "") {
				return
			}
			mapEntities(p.Entities, dropProperty("Age"))
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "unfiltered-segments-drop-property",
		Description: "answers the continued pages of an unfiltered query of $top=50 with each entity's last-named property dropped",
		Breaks:      []string{"pattern.impl.segments"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Continuation.IsZero() || q.Filter != "" || !topIs(q, 50) {
				return
			}
			mapEntities(p.Entities, dropLastNamed)
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "level-scan-pages-drop-level",
		Description: "answers the continued pages of a query of $top=2 filtered on Level without the Level property",
		Breaks:      []string{"pattern.log-data.scan"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Continuation.IsZero() || !topIs(q, 2) || !comparesWith(q.Filter, "Level", "") {
				return
			}
			mapEntities(p.Entities, dropProperty("Level"))
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "partition-first-page-reversed",
		Description: "returns the first page of $top=10 over one partition in descending key order",
		Breaks:      []string{"pattern.log-tail.newest-first"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if _, ok := partitionOfFilter(q.Filter); ok && q.Continuation.IsZero() && topIs(q, 10) {
				slices.Reverse(p.Entities)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "partition-next-pages-drop-property",
		Description: "answers the continued pages of $top=10 over one partition with each entity's last-named property dropped",
		Breaks:      []string{"pattern.log-tail.next-page"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if _, ok := partitionOfFilter(q.Filter); ok && !q.Continuation.IsZero() && topIs(q, 10) {
				mapEntities(p.Entities, dropLastNamed)
			}
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "digit-rowkeys-numeric-order",
		Description: "sorts the entities of a page whose RowKeys are all digits by their numeric value, so that \"9\" comes before \"1000\"",
		Breaks:      []string{"pattern.log-tail.string-order"},
		AlsoFails: map[string]string{
			"ordering.zero-padding": "unpadded numbers as keys sort as strings, which the mutant sorts as numbers: the same subject as the log tail's string order",
		},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) {
			for _, e := range p.Entities {
				if !allDigits(e.RowKey) {
					return
				}
			}
			slices.SortStableFunc(p.Entities, func(x, y api.Entity) int {
				if c := strings.Compare(x.PartitionKey, y.PartitionKey); c != 0 {
					return c
				}
				nx, _ := strconv.ParseUint(x.RowKey, 10, 64)
				ny, _ := strconv.ParseUint(y.RowKey, 10, 64)
				switch {
				case nx < ny:
					return -1
				case nx > ny:
					return 1
				}
				return 0
			})
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "hour-partition-drops-last",
		Description: "answers a query for one partition whose key is a ten-digit hour (yyyyMMddHH) without the partition's last entity",
		Breaks:      []string{"pattern.prepend-append.hot-partition"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			pk, ok := partitionOfFilter(q.Filter)
			if !ok || len(pk) != 10 || !allDigits(pk) || !p.Continuation.IsZero() || len(p.Entities) == 0 {
				return
			}
			p.Entities = p.Entities[:len(p.Entities)-1]
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "wide-get-drops-property",
		Description: "answers Get Entity of an entity with 151 to 249 properties, a wide one short of the limit, without the property whose name sorts last",
		Breaks:      []string{"pattern.wide-entities.read"},
	}, func(b api.Backend) api.Backend {
		return &getMapper{Backend: b, fn: func(e *api.Entity) {
			if n := len(e.Properties); n > 150 && n < 250 {
				dropLastNamed(e)
			}
		}}
	}, hooks{})
)
