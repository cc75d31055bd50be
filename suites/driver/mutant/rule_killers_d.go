package mutant

import (
	"context"
	"strings"

	"github.com/tableconform/conform/reference/api"
)

// prefixDelete deletes, with each entity, the entities of the same RowKey whose
// PartitionKey begins with the deleted one's.
type prefixDelete struct{ api.Backend }

func (m *prefixDelete) DeleteEntity(ctx context.Context, table, pk, rk, ifMatch string) error {
	if err := m.Backend.DeleteEntity(ctx, table, pk, rk, ifMatch); err != nil {
		return err
	}
	p, err := m.Backend.QueryEntities(ctx, table, api.Query{Filter: "RowKey eq '" + strings.ReplaceAll(rk, "'", "''") + "'"})
	if err != nil {
		return nil
	}
	for _, e := range p.Entities {
		if e.PartitionKey != pk && strings.HasPrefix(e.PartitionKey, pk) {
			_ = m.Backend.DeleteEntity(ctx, table, e.PartitionKey, rk, api.IfMatchAny)
		}
	}
	return nil
}

// Faults of the design guide's patterns that, before issue 30, only keys-case-folded,
// point-reads-by-rowkey and scan-first-partition-only made fail, through a step the
// patterns' specs take on the way: each cuts a corner only on the queries the patterns make,
// so that the pattern's own subject (the entities its query returns, properties included) is
// what fails.

var (
	_ = define(Mutant{
		Name:        "partition-range-drops-property",
		Description: "answers a query of one partition bounded on RowKey from below and above (PartitionKey eq, RowKey ge and lt) with each entity's last-named property dropped",
		Breaks: []string{"pattern.impl.range-query", "pattern.compound-key.range", "pattern.inter-index.range", "pattern.intra-index.range",
			"pattern.log-data.hour-partition", "pattern.prepend-append.spread", "rel.heterogeneous.rowkey-prefix", "rel.one-to-one.key-convention"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Select != nil || !comparesWith(q.Filter, "PartitionKey", "eq") ||
				!comparesWith(q.Filter, "RowKey", "ge") || !comparesWith(q.Filter, "RowKey", "lt") {
				return
			}
			mapEntities(p.Entities, dropLastNamed)
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "point-query-drops-property",
		Description: "answers a query for one entity by both keys (PartitionKey eq and RowKey eq) with the last-named property dropped from an entity of five or more",
		Breaks:      []string{"pattern.intra-index.point-query", "rel.one-to-many.denormalized"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Select != nil || !comparesWith(q.Filter, "PartitionKey", "eq") || !comparesWith(q.Filter, "RowKey", "eq") {
				return
			}
			mapEntities(p.Entities, func(e *api.Entity) {
				if len(e.Properties) >= 5 {
					dropLastNamed(e)
				}
			})
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "entity-type-query-drops-property",
		Description: "answers a query filtered on EntityType with each entity's last-named property dropped, as a store that projects typed entities onto the columns it knows for their type",
		Breaks:      []string{"rel.heterogeneous.type-property", "rel.inheritance.entity-type"},
	}, func(b api.Backend) api.Backend {
		return &pageMapper{Backend: b, fn: func(q api.Query, p *api.Page) {
			if q.Select != nil || !comparesWith(q.Filter, "EntityType", "eq") {
				return
			}
			mapEntities(p.Entities, dropLastNamed)
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "delete-by-key-prefix",
		Description: "deletes with an entity the entities of the same RowKey whose PartitionKey begins with its own, as a delete run over a key range that forgot the partition's upper bound",
		Breaks:      []string{"modify.point.isolation"},
	}, func(b api.Backend) api.Backend { return &prefixDelete{Backend: b} }, hooks{})
)
