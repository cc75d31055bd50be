package replay

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
)

// seed is an entity a recording reads without having written it (its test wrote it in a
// hook that was recorded elsewhere); the replay inserts it first.
type seed struct {
	table  string
	entity api.Entity
}

type entityKey struct{ table, pk, rk string }

// entitiesToSeed lists the entities that recorded answers show in tables the recording does
// not create, and that no earlier request of the recording wrote, in order of appearance.
func entitiesToSeed(rec Recording, created map[string]bool) []seed {
	written := map[entityKey]bool{}
	var out []seed
	for _, x := range rec.Entries {
		p, _ := resourceOf(x.URI)
		for _, k := range writtenKeys(x, p) {
			written[k] = true
		}
		if x.Status != http.StatusOK || skipExchange(x) != "" {
			continue
		}
		t := tableOfPath(p)
		if t == "" || !created[strings.ToLower(t)] {
			continue
		}
		for _, e := range entitiesOf(x.ResponseHeader, x.ResponseBody) {
			k := entityKey{strings.ToLower(t), e.PartitionKey, e.RowKey}
			if written[k] {
				continue
			}
			written[k] = true
			out = append(out, seed{table: t, entity: e})
		}
	}
	return out
}

// writtenKeys lists the entities a recorded request writes or deletes.
func writtenKeys(x Exchange, p string) []entityKey {
	switch {
	case isBatchPath(p):
		br, err := wire.ParseBatchRequest(hget(x.RequestHeader, "Content-Type"), x.RequestBody)
		if err != nil {
			return nil
		}
		var out []entityKey
		for _, cs := range br.Changesets {
			for _, part := range cs {
				out = append(out, partKeys(part.Method, partPath(part.URL), part.Body)...)
			}
		}
		return out
	case x.Method == http.MethodGet || x.Method == http.MethodHead:
		return nil
	}
	return partKeys(x.Method, p, x.RequestBody)
}

func partKeys(method, p string, body []byte) []entityKey {
	if method == http.MethodGet {
		return nil
	}
	before, _, _ := strings.Cut(p, "?")
	res, err := wire.ParseResource(before)
	if err != nil {
		return nil
	}
	switch res.Kind {
	case wire.ResourceEntity:
		return []entityKey{{strings.ToLower(res.Table), res.PartitionKey, res.RowKey}}
	case wire.ResourceEntitySet:
		var keys struct{ PartitionKey, RowKey *string }
		if json.Unmarshal(body, &keys) == nil && keys.PartitionKey != nil && keys.RowKey != nil {
			return []entityKey{{strings.ToLower(res.Table), *keys.PartitionKey, *keys.RowKey}}
		}
	}
	return nil
}

// insertSeed inserts one seeded entity into its live table.
func (r *Replayer) insertSeed(ctx context.Context, st *state, s seed) error {
	e := s.entity
	e.Timestamp, e.ETag = api.Entity{}.Timestamp, ""
	body, err := wire.EncodeRequestEntity(e)
	if err != nil {
		return err
	}
	status, err := r.postNoContent(ctx, st.table(s.table), body)
	if err != nil {
		return err
	}
	if status >= 300 {
		return statusError{op: "Insert Entity", status: status}
	}
	return nil
}
