package tableserver

import (
	"regexp"
	"sync"
	"testing"
)

// Request ids have wire.NewID's form and do not repeat, across batches and goroutines.
func TestRequestIDsAreUnique(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10*idsPerBatch; i++ {
				id := newRequestID()
				mu.Lock()
				dup := seen[id]
				seen[id] = true
				mu.Unlock()
				if dup || !form.MatchString(id) {
					t.Errorf("id %q (repeated: %v)", id, dup)
					return
				}
			}
		}()
	}
	wg.Wait()
}
