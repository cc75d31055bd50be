package explore

import (
	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/reference/api"
)

type opAlias = gen.Op

func opInsert() gen.Op {
	return gen.Op{Kind: gen.Insert, Entity: api.NewEntity("p0", "r0", map[string]api.Value{"A": api.Int32(1)})}
}
