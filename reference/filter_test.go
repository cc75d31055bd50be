package reference

import (
	"fmt"
	"runtime"
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

// TestParsedFiltersKeepNoRequest: a kept filter text, and the literals of its parsed form,
// must not keep alive the longer string the text was cut from (a request line).
func TestParsedFiltersKeepNoRequest(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const filters = 32
	for i := range filters {
		text := fmt.Sprintf("PartitionKey eq 'retained-%d'", i)
		request := text + strings.Repeat(" ", 256<<10)
		if _, err := compileFilter(request[:len(text)]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 4<<20 {
		t.Errorf("%d parsed filters keep %d KiB", filters, kept>>10)
	}
}
