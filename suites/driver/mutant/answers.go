package mutant

// Mutants whose fault is the form of one kind of answer: the table holds the right state,
// and one operation's answer says something else about it.

import (
	"context"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// query-etags-unescaped writes an ETag in two places, as an emulator with a serializer of its
// own for query results does: the query's leaves the Timestamp's colons unescaped, and If-Match
// is compared with the stored ETag as a string. The ETag a query hands out is then not the
// entity's current ETag as a write conditioned on it sees it (concurrency.current-etag), nor
// the one the other answers hand out (entities.etag.present).
var _ = define(Mutant{
	Name:        "query-etags-unescaped",
	Description: "writes the ETags of query results with the Timestamp's colons unescaped, unlike every other answer's, and compares If-Match as a string: a write conditioned on the ETag a query returned fails with 412",
	Breaks:      []string{"concurrency.current-etag", "entities.etag.present"},
}, func(b api.Backend) api.Backend {
	return &pageMapper{Backend: b, fn: func(_ api.Query, p *api.Page) {
		for i := range p.Entities {
			p.Entities[i].ETag = strings.ReplaceAll(p.Entities[i].ETag, "%3A", ":")
		}
	}}
}, hooks{})

// insert-answers-keys-only answers every Insert Entity as if the client had asked for no
// content: the typed answer carries the keys, the Timestamp and the ETag, and no property.
// What the table holds is right; only the answer the insert's own rule covers is wrong.
var _ = define(Mutant{
	Name:        "insert-answers-keys-only",
	Description: "answers Insert Entity with the keys, Timestamp and ETag of the new entity but none of its properties, as if Prefer: return-no-content had been sent",
	Breaks:      []string{"modify.insert.stores"},
	Areas:       []spec.Area{spec.AreaBatch},
}, func(b api.Backend) api.Backend { return insertKeysOnly{b} }, hooks{})

type insertKeysOnly struct{ api.Backend }

func (m insertKeysOnly) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	got, err := m.Backend.InsertEntity(ctx, table, e)
	if err == nil {
		got = got.Clone()
		got.Properties = map[string]api.Value{}
	}
	return got, err
}
