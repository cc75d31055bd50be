package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

var bg = context.Background()

var epoch = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)

// newModel returns a Model whose clock stands still at epoch, with a table "Tbl".
func newModel(t *testing.T, opts ...Option) *Model {
	t.Helper()
	m := New(append([]Option{WithClock(func() time.Time { return epoch })}, opts...)...)
	if err := m.CreateTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	return m
}

func wantCode(t *testing.T, err error, status int, code string) *spec.Error {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != status || se.Code != code {
		t.Fatalf("error %v, want %d %s", err, status, code)
	}
	return se
}

func TestWritesStoreWhatTheContractSays(t *testing.T) {
	m := newModel(t)
	e := api.NewEntity("p", "r", map[string]api.Value{"A": api.Int32(1), "B": api.String("b"),
		"N": api.Null(api.EdmString), "G": api.Guid("0F8FAD5B-D9CB-469F-A165-70867728950E")})
	got, err := m.InsertEntity(bg, "tbl", e) // table names are case-insensitive
	if err != nil {
		t.Fatal(err)
	}
	if _, stored := got.Properties["N"]; stored || got.Properties["G"].Str != "0f8fad5b-d9cb-469f-a165-70867728950e" {
		t.Errorf("stored %v: a null kept or a Guid not in lower case", got)
	}
	if want := `W/"datetime'2024-05-06T07%3A08%3A09.1234567Z'"`; got.ETag != want || !got.Timestamp.Equal(epoch) {
		t.Errorf("ETag %s at %v, want %s at %v", got.ETag, got.Timestamp, want, epoch)
	}
	wantCode(t, func() error { _, err := m.InsertEntity(bg, "Tbl", e); return err }(), http.StatusConflict, spec.ErrEntityAlreadyExists.Code)

	merged, err := m.UpdateEntity(bg, "Tbl", api.NewEntity("p", "r", map[string]api.Value{"A": api.Int32(2), "B": api.Null(0)}), api.Merge, got.ETag)
	if err != nil {
		t.Fatal(err)
	}
	if merged == got.ETag {
		t.Error("a merge kept the ETag") // the clock stands still: the next tick is 100 ns later
	}
	after, _ := m.GetEntity(bg, "Tbl", "p", "r", nil)
	if len(after.Properties) != 3 || after.Properties["A"].Int() != 2 || after.Properties["B"].Str != "b" {
		t.Errorf("after merge %v: want A=2 and B, G kept", after)
	}
	_, err = m.UpdateEntity(bg, "Tbl", api.NewEntity("p", "r", nil), api.Replace, got.ETag)
	wantCode(t, err, http.StatusPreconditionFailed, spec.ErrUpdateCondition.Code)
	if _, err := m.UpdateEntity(bg, "Tbl", api.NewEntity("p", "r", map[string]api.Value{"C": api.Bool(true)}), api.Replace, "*"); err != nil {
		t.Fatal(err)
	}
	after, _ = m.GetEntity(bg, "Tbl", "p", "r", nil)
	if len(after.Properties) != 1 || !after.Properties["C"].Bool {
		t.Errorf("after replace %v: want only C", after)
	}
	wantCode(t, m.DeleteEntity(bg, "Tbl", "p", "r", ""), http.StatusBadRequest, spec.ErrMissingRequiredHeader.Code)
	if err := m.DeleteEntity(bg, "Tbl", "p", "r", after.ETag); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.DeleteEntity(bg, "Tbl", "p", "r", "*"), http.StatusNotFound, spec.ErrResourceNotFound.Code)
}

func TestFailedBatchLeavesNothing(t *testing.T) {
	m := newModel(t)
	ops := []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "a", nil)},
		{Kind: api.BatchDelete, Entity: api.NewEntity("p", "missing", nil)},
	}
	_, err := m.SubmitBatch(bg, "Tbl", ops)
	if se := wantCode(t, err, http.StatusNotFound, spec.ErrResourceNotFound.Code); !se.Indexed || se.FailedIndex != 1 {
		t.Errorf("failure %v does not name operation 1", se)
	}
	wantCode(t, func() error { _, err := m.GetEntity(bg, "Tbl", "p", "a", nil); return err }(), http.StatusNotFound, spec.ErrResourceNotFound.Code)

	results, err := m.SubmitBatch(bg, "Tbl", ops[:1])
	if err != nil || len(results) != 1 || results[0].Status != http.StatusCreated || results[0].ETag == "" {
		t.Fatalf("batch of one insert: %v, %v", results, err)
	}
	got, err := m.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchRetrieve, Entity: api.NewEntity("p", "a", nil)}})
	if err != nil || got[0].Entity == nil || got[0].ETag != results[0].ETag {
		t.Fatalf("retrieve: %v, %v", got, err)
	}
}

func TestQueryPagesResumeAtTheKeyTheyName(t *testing.T) {
	m := newModel(t)
	for _, rk := range []string{"d", "b", "a", "c"} {
		if _, err := m.InsertEntity(bg, "Tbl", api.NewEntity("p", rk, nil)); err != nil {
			t.Fatal(err)
		}
	}
	q := api.Query{Top: api.TopOf(2), Filter: "RowKey ne 'c'"}
	page, err := m.QueryEntities(bg, "Tbl", q)
	if err != nil || len(page.Entities) != 2 || page.Entities[0].RowKey != "a" || page.Entities[1].RowKey != "b" || page.Continuation.IsZero() {
		t.Fatalf("page 1: %v, %v", page, err)
	}
	if err := m.DeleteEntity(bg, "Tbl", "p", "a", "*"); err != nil { // behind the continuation
		t.Fatal(err)
	}
	q.Continuation = page.Continuation
	page, err = m.QueryEntities(bg, "Tbl", q)
	if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != "d" || !page.Continuation.IsZero() {
		t.Fatalf("page 2: %v, %v", page, err)
	}
	q.Continuation = api.Continuation{NextPartitionKey: "no token"}
	_, err = m.QueryEntities(bg, "Tbl", q)
	wantCode(t, err, http.StatusBadRequest, spec.ErrInvalidInput.Code)
}

func TestDeletedTableNameIsHeld(t *testing.T) {
	now := epoch
	m := New(WithClock(func() time.Time { return now }), WithDeleteHold(time.Second))
	if err := m.CreateTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	if err := m.DeleteTable(bg, "TBL"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.CreateTable(bg, "tbl"), http.StatusConflict, spec.ErrTableBeingDeleted.Code)
	now = now.Add(time.Second)
	if err := m.CreateTable(bg, "tbl"); err != nil {
		t.Fatalf("after the hold: %v", err)
	}
	page, err := m.QueryTables(bg, api.TableQuery{})
	if err != nil || len(page.Tables) != 1 || page.Tables[0] != "tbl" {
		t.Errorf("tables %v, %v", page, err)
	}
}

// The model is safe for concurrent use (run with -race).
func TestConcurrentWriters(t *testing.T) {
	m := newModel(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				e := api.NewEntity("p", fmt.Sprintf("%d-%d", w, i), nil)
				if _, err := m.InsertEntity(bg, "Tbl", e); err != nil {
					t.Error(err)
				}
				if _, err := m.QueryEntities(bg, "Tbl", api.Query{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	page, _ := m.QueryEntities(bg, "Tbl", api.Query{})
	if len(page.Entities) != 200 {
		t.Errorf("%d entities, want 200", len(page.Entities))
	}
}
