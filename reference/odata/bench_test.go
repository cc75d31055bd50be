package odata

import (
	"fmt"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

const benchFilter = "PartitionKey eq 'customers' and RowKey ge 'c0100' and RowKey lt 'c0200' and " +
	"(Age gt 30 or not IsActive) and Created ge datetime'2020-01-01T00:00:00Z' and Name ne 'O''Brien'"

func BenchmarkParseFilter(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		f, err := ParseFilter(benchFilter)
		if err != nil || f.Comparisons() != 6 {
			b.Fatalf("ParseFilter: %v", err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "parses/s")
}

func BenchmarkMatch(b *testing.B) {
	f, err := ParseFilter(benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	entities := make([]api.Entity, 1000)
	for i := range entities {
		entities[i] = api.NewEntity("customers", fmt.Sprintf("c%04d", i), map[string]api.Value{
			"Age":      api.Int32(int32(i % 90)),
			"IsActive": api.Bool(i%3 == 0),
			"Created":  api.DateTime(time.Date(2019+i%3, 1, 1, 0, 0, 0, 0, time.UTC)),
			"Name":     api.String(fmt.Sprintf("name%d", i)),
			"Payload":  api.Binary(make([]byte, 64)),
		})
	}
	b.ReportAllocs()
	matched := 0
	for b.Loop() {
		matched = 0
		for i := range entities {
			if f.Match(&entities[i]) {
				matched++
			}
		}
	}
	if matched == 0 || matched == len(entities) {
		b.Fatalf("benchmark filter matched %d of %d entities", matched, len(entities))
	}
	b.ReportMetric(float64(b.N)*float64(len(entities))/b.Elapsed().Seconds(), "matches/s")
}
