package store

import (
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// An entry found before another write of its transaction is not written: Put and Remove
// panic instead of writing on what the entry no longer says (a point index entry another key
// took, an entity another write replaced), which could lose an entity silently.
func TestEntryFoundBeforeAnotherWriteIsRefused(t *testing.T) {
	props := map[string]api.Value{"A": api.String("x")}
	for _, second := range []string{"put", "remove"} {
		tbl := NewTable(NewNames(), Config{})
		w := tbl.Begin()
		w.Put(w.Encode(w.Find("p", "b"), props, keepSent), 1, etagOf(1))
		w.Commit()

		w = tbl.Begin()
		a, b := w.Find("p", "a"), w.Find("p", "b")
		w.Put(w.Encode(a, props, keepSent), 2, etagOf(2))
		func() {
			defer func() {
				if v, _ := recover().(string); !strings.Contains(v, "Find it again") {
					t.Errorf("%s of an entry found before another write: recovered %v", second, v)
				}
			}()
			if second == "put" {
				w.Put(w.Encode(b, props, keepSent), 3, etagOf(3))
			} else {
				w.Remove(b)
			}
		}()
		w.Rollback()
		// Found again, it is written.
		w = tbl.Begin()
		a = w.Find("p", "a")
		w.Put(w.Encode(a, props, keepSent), 4, etagOf(4))
		w.Remove(w.Find("p", "b"))
		w.Commit()
	}
}
