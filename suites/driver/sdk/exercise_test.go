package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/sdk"
)

// tableName returns a table name unique to this test run.
func tableName(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1_000_000_000_000)
}

// typedEntity holds one value of every EDM type, including the values the SDK is known to
// corrupt on its own (EVIDENCE.md 12): an Int64 above 2^53, a whole Double, a DateTime given
// with an offset, and a key with a quote.
func typedEntity(pk, rk string) api.Entity {
	plus2 := time.FixedZone("+02:00", 2*60*60)
	return api.NewEntity(pk, rk, map[string]api.Value{
		"Str":      api.String("héllo 'quoted' \"double\""),
		"Bin":      api.Binary([]byte{0, 1, 2, 0xfe, 0xff}),
		"Flag":     api.Bool(true),
		"When":     api.DateTime(time.Date(2024, 3, 1, 12, 30, 45, 123456700, plus2)),
		"Whole":    api.Double(5.0),
		"Frac":     api.Double(0.1),
		"Small":    api.Int32(-42),
		"Big":      api.Int64(1<<53 + 1),
		"MaxInt64": api.Int64(math.MaxInt64),
		"Id":       api.Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
	})
}

func wantError(t *testing.T, what string, err error, status int, code string) *driver.Error {
	t.Helper()
	e, ok := driver.AsError(err)
	if !ok {
		t.Fatalf("%s: got %v, want a service error %d %s", what, err, status, code)
	}
	if e.Status != status || e.Code != code {
		t.Fatalf("%s: got %d %s (%q), want %d %s", what, e.Status, e.Code, e.Message, status, code)
	}
	return e
}

func sameProperties(t *testing.T, what string, got, want api.Entity) {
	t.Helper()
	for name, w := range want.Properties {
		g, ok := got.Properties[name]
		if !ok {
			t.Errorf("%s: property %s missing; got %s", what, name, got)
			continue
		}
		if !g.Equal(w) {
			t.Errorf("%s: property %s = %s, want %s", what, name, g, w)
		}
	}
	if len(got.Properties) != len(want.Properties) {
		t.Errorf("%s: %d properties %v, want %d", what, len(got.Properties), got.PropertyNames(), len(want.Properties))
	}
}

// exercise drives every operation of api.Backend through b and checks the answers that
// Storage, Azurite and the reference agree on.
func exercise(t *testing.T, b api.Backend) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	table := tableName("sdkdrv")

	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() { _ = b.DeleteTable(context.Background(), table) })
	wantError(t, "create existing table", b.CreateTable(ctx, table), 409, "TableAlreadyExists")

	// What aztables cannot send is the driver's limit, marked so that no report blames the
	// backend for it (EVIDENCE.md 12).
	_, errSelect := b.GetEntity(ctx, table, "p", "r", []string{"A"})
	_, errEmptyPK := b.GetEntity(ctx, table, "", "r", nil)
	errDeleteEmptyPK := b.DeleteEntity(ctx, table, "", "r", "*")
	_, errUpdateEmptyPK := b.UpdateEntity(ctx, table, api.NewEntity("", "r", nil), api.Merge, "")
	for name, err := range map[string]error{"$select on get": errSelect, "get with an empty PartitionKey": errEmptyPK,
		"delete with an empty PartitionKey": errDeleteEmptyPK, "upsert with an empty PartitionKey": errUpdateEmptyPK} {
		if !errors.Is(err, driver.ErrNotExpressible) {
			t.Errorf("%s: got %v, want an error wrapping driver.ErrNotExpressible", name, err)
		}
	}

	tables, err := b.QueryTables(ctx, api.TableQuery{Filter: fmt.Sprintf("TableName eq '%s'", table)})
	if err != nil {
		t.Fatalf("query tables: %v", err)
	}
	if len(tables.Tables) != 1 || tables.Tables[0] != table {
		t.Errorf("query tables: got %v, want [%s]", tables.Tables, table)
	}

	// Insert and read back every type; the quote in the key must not be doubled (12 #6).
	want := typedEntity("p'1", "O'Brien")
	inserted, err := b.InsertEntity(ctx, table, want)
	if err != nil {
		t.Fatalf("insert typed entity: %v", err)
	}
	if inserted.ETag == "" || inserted.Timestamp.IsZero() {
		t.Errorf("insert: ETag %q, Timestamp %v: want both set", inserted.ETag, inserted.Timestamp)
	}
	got, err := b.GetEntity(ctx, table, "p'1", "O'Brien", nil)
	if err != nil {
		t.Fatalf("get typed entity: %v", err)
	}
	if got.PartitionKey != "p'1" || got.RowKey != "O'Brien" {
		t.Errorf("get: keys %q/%q, want p'1/O'Brien", got.PartitionKey, got.RowKey)
	}
	sameProperties(t, "get typed entity", got, want)
	if got.ETag != inserted.ETag {
		t.Errorf("get: ETag %q, want the insert's %q", got.ETag, inserted.ETag)
	}

	_, err = b.InsertEntity(ctx, table, want)
	wantError(t, "insert duplicate", err, 409, "EntityAlreadyExists")

	// Replace with the current ETag, then a stale one.
	replaced := api.NewEntity("p'1", "O'Brien", map[string]api.Value{"Only": api.Int64(-(1 << 60))})
	etag, err := b.UpdateEntity(ctx, table, replaced, api.Replace, got.ETag)
	if err != nil {
		t.Fatalf("replace with ETag: %v", err)
	}
	if etag == "" || etag == got.ETag {
		t.Errorf("replace: new ETag %q, old %q: want a new one", etag, got.ETag)
	}
	_, err = b.UpdateEntity(ctx, table, replaced, api.Replace, got.ETag)
	wantError(t, "replace with stale ETag", err, 412, "UpdateConditionNotSatisfied")

	// Merge with "*" keeps the old property.
	if _, err := b.UpdateEntity(ctx, table, api.NewEntity("p'1", "O'Brien", map[string]api.Value{"Added": api.Double(2.5)}), api.Merge, api.IfMatchAny); err != nil {
		t.Fatalf("merge: %v", err)
	}
	got, err = b.GetEntity(ctx, table, "p'1", "O'Brien", nil)
	if err != nil {
		t.Fatalf("get merged: %v", err)
	}
	sameProperties(t, "after replace and merge", got, replaced.With("Added", api.Double(2.5)))

	// Update of a missing entity with "*" fails; an upsert creates it.
	_, err = b.UpdateEntity(ctx, table, api.NewEntity("p'1", "missing", nil), api.Merge, api.IfMatchAny)
	wantError(t, "merge missing entity", err, 404, "ResourceNotFound")
	if _, err := b.UpdateEntity(ctx, table, api.NewEntity("p'1", "upserted", map[string]api.Value{"N": api.Int32(1)}), api.Replace, ""); err != nil {
		t.Fatalf("upsert: %v", err)
	}

	// Query: typed filter on Int64 above 2^53, and paging with explicit continuation.
	for i := range 5 {
		if _, err := b.InsertEntity(ctx, table, api.NewEntity("page", fmt.Sprintf("r%02d", i), map[string]api.Value{"I": api.Int32(int32(i))})); err != nil {
			t.Fatalf("insert page entity %d: %v", i, err)
		}
	}
	if _, err := b.InsertEntity(ctx, table, typedEntity("typed", "1")); err != nil {
		t.Fatalf("insert typed entity 2: %v", err)
	}
	hits, err := b.QueryEntities(ctx, table, api.Query{Filter: "Big eq 9007199254740993L"})
	if err != nil {
		t.Fatalf("query Int64: %v", err)
	}
	if len(hits.Entities) != 1 || hits.Entities[0].PartitionKey != "typed" {
		t.Errorf("query Big eq 2^53+1: got %v, want the one typed entity", hits.Entities)
	} else {
		sameProperties(t, "query typed entity", hits.Entities[0], typedEntity("typed", "1"))
	}
	var keys []string
	q := api.Query{Filter: "PartitionKey eq 'page'", Top: api.TopOf(2)}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatalf("query: more than 10 pages for 5 entities with $top=2")
		}
		page, err := b.QueryEntities(ctx, table, q)
		if err != nil {
			t.Fatalf("query page %d: %v", pages, err)
		}
		if len(page.Entities) > 2 {
			t.Fatalf("query page %d: %d entities with $top=2", pages, len(page.Entities))
		}
		for _, e := range page.Entities {
			keys = append(keys, e.RowKey)
		}
		if page.Continuation.IsZero() {
			break
		}
		q.Continuation = page.Continuation
	}
	if len(keys) != 5 || !sort.StringsAreSorted(keys) {
		t.Errorf("query with $top=2 over all pages: got %v, want r00..r04 in order", keys)
	}

	// A successful batch returns one result per operation, in order.
	results, err := b.SubmitBatch(ctx, table, []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("page", "b1", map[string]api.Value{"D": api.Double(1)})},
		{Kind: api.BatchMerge, Entity: api.NewEntity("page", "r00", map[string]api.Value{"M": api.Bool(true)})},
		{Kind: api.BatchReplace, Entity: api.NewEntity("page", "r01", nil)},
		{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity("page", "b2", nil)},
		{Kind: api.BatchDelete, Entity: api.NewEntity("page", "r02", nil)},
	})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(results) != 5 {
		t.Fatalf("batch: %d results, want 5: %+v", len(results), results)
	}
	for i, r := range results {
		if r.Status < 200 || r.Status > 299 {
			t.Errorf("batch result %d: status %d", i, r.Status)
		}
		if i < 4 && r.ETag == "" {
			t.Errorf("batch result %d: no ETag", i)
		}
	}
	d, err := b.GetEntity(ctx, table, "page", "b1", nil)
	if err != nil {
		t.Fatalf("get batch-inserted entity: %v", err)
	}
	sameProperties(t, "batch-inserted Double 1", d, api.NewEntity("page", "b1", map[string]api.Value{"D": api.Double(1)}))

	// A failed batch: the second operation inserts an existing entity. Nothing is applied.
	_, err = b.SubmitBatch(ctx, table, []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("page", "new1", nil)},
		{Kind: api.BatchInsert, Entity: api.NewEntity("page", "r03", nil)},
	})
	e := wantError(t, "batch inserting an existing entity", err, 409, "EntityAlreadyExists")
	t.Logf("failed batch answered: %v", e)
	if !e.Indexed || e.FailedIndex != 1 {
		t.Errorf("failed batch: index %d (indexed %v), want operation 1; error %v", e.FailedIndex, e.Indexed, e)
	}
	_, err = b.GetEntity(ctx, table, "page", "new1", nil)
	wantError(t, "get entity of a failed batch", err, 404, "ResourceNotFound")

	// An update inside a batch never becomes an insert (12 #8).
	_, err = b.SubmitBatch(ctx, table, []api.BatchOp{{Kind: api.BatchMerge, Entity: api.NewEntity("page", "ghost", nil)}})
	wantError(t, "batch merge of a missing entity", err, 404, "ResourceNotFound")

	// What the SDK cannot express.
	if _, err := b.GetEntity(ctx, table, "page", "r00", []string{"I"}); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("get with $select: got %v, want ErrUnsupported", err)
	}
	if _, err := b.SubmitBatch(ctx, table, []api.BatchOp{{Kind: api.BatchRetrieve, Entity: api.NewEntity("page", "r00", nil)}}); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("batch retrieve: got %v, want ErrUnsupported", err)
	}

	// Delete with "*", then the entity is gone.
	if err := b.DeleteEntity(ctx, table, "p'1", "O'Brien", api.IfMatchAny); err != nil {
		t.Fatalf("delete entity: %v", err)
	}
	_, err = b.GetEntity(ctx, table, "p'1", "O'Brien", nil)
	wantError(t, "get deleted entity", err, 404, "ResourceNotFound")

	if err := b.DeleteTable(ctx, table); err != nil {
		t.Fatalf("delete table: %v", err)
	}
	wantError(t, "delete missing table", b.DeleteTable(ctx, table), 404, "ResourceNotFound")
}
