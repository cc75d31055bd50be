package reference

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestParsedFiltersAreKeptByTextAndBounded(t *testing.T) {
	const text = "PartitionKey eq 'cache-test' and RowKey ge 'a'"
	first, err := compileFilter(text)
	if err != nil {
		t.Fatal(err)
	}
	again, err := compileFilter(text)
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Fatal("the same filter text was parsed twice")
	}
	if _, err := compileFilter("PartitionKey eq"); err == nil {
		t.Fatal("a broken filter parsed")
	}
	if parsedFilters.get("PartitionKey eq") != nil {
		t.Fatal("a filter that failed to parse was kept")
	}
	long := "RowKey eq '" + strings.Repeat("x", maxCachedFilterText) + "'"
	if _, err := compileFilter(long); err != nil {
		t.Fatal(err)
	}
	if parsedFilters.get(long) != nil {
		t.Fatal("a filter text over the bound was kept")
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2*maxCachedFilters; i++ {
				if _, err := compileFilter(fmt.Sprintf("Age eq %d", w*10000+i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := parsedFilters.len(); n > maxCachedFilters {
		t.Fatalf("%d parsed filters kept, bound %d", n, maxCachedFilters)
	}
}
