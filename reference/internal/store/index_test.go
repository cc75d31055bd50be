package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// Keys written in order, each after every key of the table (appended to the index's last
// leaf) or after its partition's last only (placed along the partition's path), then keys
// written before them, with rollbacks and a frozen copy taken midway, are all found and
// scanned in key order, and the frozen copy keeps what it held.
func TestIndexOfKeysWrittenInOrder(t *testing.T) {
	tbl := NewTable(NewNames(), Config{})
	var want []api.Key
	var frozen *Frozen
	var frozenKeys []api.Key
	for i := range 3000 {
		for _, pk := range []string{"a", "m", "z"} {
			rk := fmt.Sprintf("r%05d", i)
			if pk == "m" {
				rk = fmt.Sprintf("r%05d", 3000-i) // before the partition's others
			}
			commitWrite(tbl, pk, rk, nil, false, int64(i))
			want = append(want, api.Key{PartitionKey: pk, RowKey: rk})
			if i%97 == 0 { // an insert rolled back
				w := tbl.Begin()
				write(w, pk, rk+"x", nil, false, 1)
				w.Rollback()
			}
		}
		if i == 1500 {
			frozen = tbl.Freeze()
			frozenKeys = slices.Clone(want)
		}
	}
	slices.SortFunc(want, compareKeys)
	var got []api.Key
	tbl.Ascend(api.Key{}, func(r Record) bool {
		got = append(got, api.Key{PartitionKey: r.PartitionKey(), RowKey: r.RowKey()})
		return true
	})
	if !slices.Equal(got, want) || tbl.Len() != len(want) {
		t.Fatalf("scanned %d keys (Len %d), want %d in key order", len(got), tbl.Len(), len(want))
	}
	for _, k := range want {
		if _, ok := tbl.Get(k.PartitionKey, k.RowKey); !ok {
			t.Fatalf("%v not found", k)
		}
	}
	slices.SortFunc(frozenKeys, compareKeys)
	got = got[:0]
	frozen.Ascend(func(r Record) bool {
		got = append(got, api.Key{PartitionKey: r.PartitionKey(), RowKey: r.RowKey()})
		return true
	})
	if !slices.Equal(got, frozenKeys) {
		t.Fatalf("the frozen copy scanned %d keys, want %d", len(got), len(frozenKeys))
	}
}

func compareKeys(a, b api.Key) int {
	if c := api.CompareKeyStrings(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return api.CompareKeyStrings(a.RowKey, b.RowKey)
}
