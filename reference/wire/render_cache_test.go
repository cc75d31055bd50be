package wire

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// The rendering kept from the answer before (the metadata URL of a table, the text of a
// second) gives what rendering afresh gives, whichever documents and instants follow each
// other, from goroutines at once (run with -race).
func TestKeptRenderingsAreRenderedAfresh(t *testing.T) {
	docs := []Document{
		{ServiceURL: "http://127.0.0.1:10002/devstoreaccount1/", Table: "abc"},
		{ServiceURL: "http://127.0.0.1:10002/devstoreaccount1", Table: "abc"},
		{ServiceURL: "https://acct.table.core.windows.net/", Table: "abc"},
		{ServiceURL: "https://acct.table.core.windows.net/", Table: "abd"},
		{ServiceURL: "https://acct.table.core.windows.net/", Table: "xyzabc"},
		{ServiceURL: "https://acct.table.core.windows.net/", Table: "abc", Select: []string{"a", "b"}},
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 20000 {
				d := docs[r.IntN(len(docs))]
				suffix := []string{"", "/@Element"}[r.IntN(2)]
				if got, want := string(d.appendMetadataURL(nil, suffix)), string(d.renderMetadataURL(nil, suffix)); got != want {
					t.Errorf("%+v %q: %s, want %s", d, suffix, got, want)
					return
				}
				tm := time.Unix(1767323045+int64(r.IntN(3)), int64(r.IntN(1e9))).UTC()
				if got, want := string(appendDateTime(nil, tm)), fmt.Sprintf("%q", tm.Format(dateTimeLayout)); got != want {
					t.Errorf("appendDateTime(%v) = %s, want %s", tm, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
