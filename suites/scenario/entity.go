package scenario

import (
	"sort"

	"github.com/tableconform/conform/reference/api"
)

// Key returns an entity key.
func Key(pk, rk string) api.Key { return api.Key{PartitionKey: pk, RowKey: rk} }

// Props builds a property map from name/value pairs: a string name, then its api.Value. It
// panics on any other argument, which only a spec's own code can pass.
func Props(kv ...any) map[string]api.Value {
	m := make(map[string]api.Value, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return m
}

// Entity builds an entity from keys and name/value pairs (see Props).
func Entity(pk, rk string, kv ...any) api.Entity { return api.NewEntity(pk, rk, Props(kv...)) }

// Strip returns e as it would be sent: keys and a copy of its custom properties, without
// Timestamp and ETag.
func Strip(e api.Entity) api.Entity {
	return api.NewEntity(e.PartitionKey, e.RowKey, e.Clone().Properties)
}

// SortByKey returns a copy of es sorted in the service's result order (api.Key.Less).
func SortByKey(es []api.Entity) []api.Entity {
	out := append([]api.Entity(nil), es...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out
}
