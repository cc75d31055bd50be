package wire

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Request entities decoded at once, of different sizes and some refused mid-way, each get
// their own keys and properties: the member lists the decoder reuses carry nothing from
// one body into another's entity. Run with -race.
func TestDecodeRequestEntityReusesNothingOfOtherBodies(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				id := strconv.Itoa(g) + "-" + strconv.Itoa(i)
				var b strings.Builder
				b.WriteString(`{"PartitionKey":"p` + id + `","RowKey":"r` + id + `"`)
				n := (g*7 + i) % 40 // past the lists kept for reuse, now and then
				for k := range n {
					b.WriteString(`,"P` + strconv.Itoa(k) + `":"` + id + `"`)
				}
				if i%5 == 0 {
					b.WriteString(`,"Bad":`) // refused after its members were read
				}
				b.WriteString("}")
				e, err := DecodeRequestEntity([]byte(b.String()))
				if i%5 == 0 {
					if err == nil {
						t.Errorf("%s: a malformed body was decoded", id)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", id, err)
					continue
				}
				if e.PartitionKey != "p"+id || e.RowKey != "r"+id || len(e.Properties) != n {
					t.Errorf("%s: decoded %q %q with %d properties, want %d", id, e.PartitionKey, e.RowKey, len(e.Properties), n)
				}
				for name, v := range e.Properties {
					if v.Str != id {
						t.Errorf("%s: property %s = %q", id, name, v.Str)
					}
				}
			}
		}()
	}
	wg.Wait()
}
