package record

import (
	"context"
	"testing"

	"github.com/tableconform/conform/reference/api"
)

// echo stores nothing: it accepts every insert and answers every read with read.
type echo struct {
	api.Backend
	read api.Entity
}

func (e *echo) InsertEntity(_ context.Context, _ string, en api.Entity) (api.Entity, error) {
	return en, nil
}

func (e *echo) GetEntity(context.Context, string, string, string, []string) (api.Entity, error) {
	return e.read, nil
}

func TestWrittenValuesAreNotedByEntityAndNotWhenCopiedFromAnAnswer(t *testing.T) {
	ctx := context.Background()
	b := &echo{read: api.NewEntity("p", "old", map[string]api.Value{"W": api.Int64(9)})}
	r := NewWithRetry(b, quick)
	if _, err := r.InsertEntity(ctx, "t", api.NewEntity("p", "a", map[string]api.Value{"V": api.Int32(5)})); err != nil {
		t.Fatal(err)
	}
	a, other := api.Key{PartitionKey: "p", RowKey: "a"}, api.Key{PartitionKey: "p", RowKey: "b"}
	if !r.MayHaveWritten(a, "V", api.Int32(5)) {
		t.Error("the Int32 sent is noted as written to its entity")
	}
	if r.MayHaveWritten(a, "V", api.Int64(5)) {
		t.Error("an Int64 of the same number was never sent")
	}
	if r.MayHaveWritten(other, "V", api.Int32(5)) {
		t.Error("a value sent to one entity is not written to another")
	}
	// A write that copies an entity read back does not make its values the spec's own.
	got, err := r.GetEntity(ctx, "t", "p", "old", nil)
	if err != nil {
		t.Fatal(err)
	}
	got.RowKey = "copy"
	if _, err := r.InsertEntity(ctx, "t", got); err != nil {
		t.Fatal(err)
	}
	if r.MayHaveWritten(api.Key{PartitionKey: "p", RowKey: "copy"}, "W", api.Int64(9)) {
		t.Error("a value copied from an answer counts as written by the spec")
	}
	Track(r)
	defer Track(nil)
	if MayHaveBeenWrittenByRunningSpec(other, "V", api.Int32(5)) {
		t.Error("the running spec's recorder answers for it")
	}
	Track(nil)
	if !MayHaveBeenWrittenByRunningSpec(other, "V", api.Int32(5)) {
		t.Error("outside a tracked spec nothing says a value was not written")
	}
}
