package gen

import (
	"math"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

func TestLiteral(t *testing.T) {
	cases := []struct {
		v    api.Value
		want string
	}{
		{api.String("it's"), "'it''s'"},
		{api.Int32(-5), "-5"},
		{api.Int64(5), "5L"},
		{api.Double(2), "2.0"},
		{api.Double(1.5), "1.5"},
		{api.Double(math.Inf(1)), "1.7976931348623157e+308"},
		{api.Double(math.NaN()), "0.0"},
		{api.Bool(true), "true"},
		{api.DateTime(time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)), "datetime'2020-01-02T03:04:05.0000006Z'"},
		{api.Guid("00000000-0000-0000-0000-000000000001"), "guid'00000000-0000-0000-0000-000000000001'"},
		{api.Binary([]byte{0, 0xab}), "X'00ab'"},
		{api.Null(api.EdmString), "null"},
	}
	for _, c := range cases {
		if got := Literal(c.v); got != c.want {
			t.Errorf("Literal(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// Sequences reach every kind of operation, batches at the limit and failing ones, and the
// edges of keys and values.
func TestSequencesReachEveryKindAndEdge(t *testing.T) {
	kinds := map[Kind]int{}
	var largeBatches, emptyBatches, emptyKeys, forbiddenKeys, nulls int
	seqs := Sequence(DefaultConfig)
	for seed := range 400 {
		for _, op := range seqs.Example(seed) {
			kinds[op.Kind]++
			switch {
			case op.Kind == Batch && len(op.Steps) > 100:
				largeBatches++
			case op.Kind == Batch && len(op.Steps) == 0:
				emptyBatches++
			}
			if op.Entity.PartitionKey == "" || op.Entity.RowKey == "" && op.Kind != ListTables && op.Kind != Query {
				emptyKeys++
			}
			if op.Entity.PartitionKey == "p/0" {
				forbiddenKeys++
			}
			for _, v := range op.Entity.Properties {
				if v.Null {
					nulls++
				}
			}
		}
	}
	for _, k := range opKinds {
		if kinds[k] == 0 {
			t.Errorf("no %s drawn", k)
		}
	}
	if largeBatches == 0 || emptyBatches == 0 || emptyKeys == 0 || forbiddenKeys == 0 || nulls == 0 {
		t.Errorf("large batches %d, empty batches %d, empty keys %d, forbidden keys %d, nulls %d: each should be drawn",
			largeBatches, emptyBatches, emptyKeys, forbiddenKeys, nulls)
	}
}
