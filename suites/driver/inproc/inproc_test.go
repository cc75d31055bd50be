package inproc

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

func TestInfo(t *testing.T) {
	var b api.Backend = New()
	d, ok := b.(driver.Describer)
	if !ok {
		t.Fatal("the inproc backend does not describe itself")
	}
	want := driver.Info{Name: "reference", Kind: "reference", Driver: "inproc", Version: "conform " + buildinfo.Current().String()}
	if got := d.Info(); got != want {
		t.Fatalf("Info() = %+v, want %+v", got, want)
	}
}

func TestNoAliasing(t *testing.T) {
	ctx := context.Background()
	b := New(reference.WithDeleteHold(0))
	if err := b.CreateTable(ctx, "Tbl"); err != nil {
		t.Fatal(err)
	}
	bin := []byte{1, 2, 3}
	e := api.NewEntity("p", "r", map[string]api.Value{"b": api.Binary(bin)})
	got, err := b.InsertEntity(ctx, "Tbl", e)
	if err != nil {
		t.Fatal(err)
	}
	bin[0] = 9
	e.Properties["x"] = api.Int32(1)
	got.Properties["b"].Bin()[1] = 9

	ops := []api.BatchOp{{Kind: api.BatchRetrieve, Entity: api.NewEntity("p", "r", nil)}}
	results, err := b.SubmitBatch(ctx, "Tbl", ops)
	if err != nil {
		t.Fatal(err)
	}
	results[0].Entity.Properties["b"].Bin()[2] = 9

	page, err := b.QueryEntities(ctx, "Tbl", api.Query{})
	if err != nil || len(page.Entities) != 1 {
		t.Fatalf("query: %v %v", page, err)
	}
	page.Entities[0].Properties["b"].Bin()[0] = 7

	again, err := b.GetEntity(ctx, "Tbl", "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := api.Binary([]byte{1, 2, 3}); len(again.Properties) != 1 || !again.Properties["b"].Equal(want) {
		t.Fatalf("the store changed through caller memory: %v", again)
	}
}

func TestErrorsPassThrough(t *testing.T) {
	b := New()
	_, err := b.GetEntity(context.Background(), "Missing", "p", "r", nil)
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != http.StatusNotFound || se.Code != "TableNotFound" {
		t.Fatalf("got %v, want 404 TableNotFound", err)
	}
	if driver.IsTransport(err) {
		t.Fatal("a service error is classified as transport")
	}
}
