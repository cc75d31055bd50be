package scenario

import (
	"context"

	"github.com/tableconform/conform/reference/api"
)

// Write is one of the documented writes of a whole entity, named as the REST operation.
// Existing is set for the writes that need the entity to exist already (Update Entity,
// Merge Entity): a spec stores the entity before it writes. Do returns the ETag the write
// answered.
type Write struct {
	Name     string
	Existing bool
	Do       func(ctx context.Context, b api.Backend, table string, e api.Entity) (etag string, err error)
}

// The five writes of a whole entity: Insert, Update (replace, If-Match *), Merge (If-Match
// *), Insert Or Replace and Insert Or Merge.
var (
	Insert = Write{Name: "Insert Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		got, err := b.InsertEntity(ctx, t, e)
		return got.ETag, err
	}}
	Replace = Write{Name: "Update Entity", Existing: true, Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Replace, api.IfMatchAny)
	}}
	Merge = Write{Name: "Merge Entity", Existing: true, Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Merge, api.IfMatchAny)
	}}
	InsertOrReplace = Write{Name: "Insert Or Replace Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Replace, "")
	}}
	InsertOrMerge = Write{Name: "Insert Or Merge Entity", Do: func(ctx context.Context, b api.Backend, t string, e api.Entity) (string, error) {
		return b.UpdateEntity(ctx, t, e, api.Merge, "")
	}}
)

// AllWrites returns the five writes of a whole entity, in the order above.
func AllWrites() []Write { return []Write{Insert, Replace, Merge, InsertOrReplace, InsertOrMerge} }
