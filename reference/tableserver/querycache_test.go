package tableserver

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// The cache answers what url.ParseQuery answers, for more distinct queries than it has
// slots, for queries too long to keep and for malformed ones, from many goroutines.
func TestQueryCacheAnswersAsParseQuery(t *testing.T) {
	c := newQueryCache()
	raws := []string{"%24filter=PartitionKey+eq+%27q%27", "comp=acl", "a=%zz", "x;y=1", strings.Repeat("k=v&", 200)}
	for i := 0; i < 3*queryCacheSlots; i++ {
		raws = append(raws, fmt.Sprintf("%%24top=%d&timeout=%d", i, i%7))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 3; round++ {
				for _, raw := range raws {
					want, wantErr := url.ParseQuery(raw)
					got, err := c.parse(raw)
					if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(got, want) {
						t.Errorf("parse(%q) = %v, %v; want %v, %v", raw, got, err, want, wantErr)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
