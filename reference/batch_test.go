package reference

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func TestBatchAllOperations(t *testing.T) {
	s, _ := newTestService(t)
	mustInsert(t, s, ent("p", "replace", "old", api.Int32(1)))
	mustInsert(t, s, ent("p", "merge", "old", api.Int32(1)))
	mustInsert(t, s, ent("p", "delete"))
	mustInsert(t, s, ent("p", "upsert", "old", api.Int32(1)))
	ops := []api.BatchOp{
		{Kind: api.BatchInsert, Entity: ent("p", "insert", "v", api.Int32(1))},
		{Kind: api.BatchReplace, Entity: ent("p", "replace", "v", api.Int32(2))},
		{Kind: api.BatchMerge, Entity: ent("p", "merge", "v", api.Int32(3))},
		{Kind: api.BatchInsertOrReplace, Entity: ent("p", "upsert", "v", api.Int32(4))},
		{Kind: api.BatchInsertOrMerge, Entity: ent("p", "upmerge", "v", api.Int32(5))},
		{Kind: api.BatchDelete, Entity: ent("p", "delete")},
	}
	results, err := s.SubmitBatch(bg, "Tbl", ops)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []int{http.StatusCreated, http.StatusNoContent, http.StatusNoContent, http.StatusNoContent, http.StatusNoContent, http.StatusNoContent}
	for i, r := range results {
		if r.Status != wantStatus[i] {
			t.Errorf("operation %d: status %d, want %d", i, r.Status, wantStatus[i])
		}
		if ops[i].Kind == api.BatchDelete {
			if r.ETag != "" {
				t.Errorf("delete answered an ETag %q", r.ETag)
			}
			continue
		}
		if got := mustGet(t, s, "p", ops[i].Entity.RowKey); got.ETag != r.ETag {
			t.Errorf("operation %d: ETag %s, stored %s", i, r.ETag, got.ETag)
		}
	}
	want := map[string]map[string]api.Value{
		"insert":  {"v": api.Int32(1)},
		"replace": {"v": api.Int32(2)},
		"merge":   {"old": api.Int32(1), "v": api.Int32(3)},
		"upsert":  {"v": api.Int32(4)},
		"upmerge": {"v": api.Int32(5)},
	}
	for rk, props := range want {
		if got := mustGet(t, s, "p", rk); !sameProperties(got.Properties, props) {
			t.Errorf("%s: %v, want %v", rk, got.Properties, props)
		}
	}
	_, err = s.GetEntity(bg, "Tbl", "p", "delete", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestBatchRetrieve(t *testing.T) {
	s, _ := newTestService(t)
	stored := mustInsert(t, s, ent("p", "r", "v", api.Int32(1)))
	results, err := s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchRetrieve, Entity: ent("p", "r")}})
	if err != nil || len(results) != 1 || results[0].Status != http.StatusOK || results[0].Entity == nil ||
		results[0].ETag != stored.ETag || !sameProperties(results[0].Entity.Properties, stored.Properties) {
		t.Fatalf("retrieve: %+v %v", results, err)
	}
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchRetrieve, Entity: ent("p", "missing")}})
	se := wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	if se.Indexed {
		t.Fatalf("a lone missing retrieve names an index: %v", se)
	}
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: ent("p", "x")},
		{Kind: api.BatchRetrieve, Entity: ent("p", "r")},
	})
	wantIndexed(t, err, http.StatusBadRequest, "InvalidInput", 1)
}

func batchOfInserts(n int) []api.BatchOp {
	ops := make([]api.BatchOp, n)
	for i := range ops {
		ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: ent("p", fmt.Sprintf("r%03d", i))}
	}
	return ops
}

func TestBatchLimits(t *testing.T) {
	s, _ := newTestService(t)
	if _, err := s.SubmitBatch(bg, "Tbl", batchOfInserts(spec.MaxBatchOperations)); err != nil {
		t.Fatalf("100 operations: %v", err)
	}
	_, err := s.SubmitBatch(bg, "Tbl", batchOfInserts(spec.MaxBatchOperations+1))
	wantIndexed(t, err, http.StatusBadRequest, "InvalidInput", 99)
	if se := err.(*spec.Error); se.Message != spec.MsgBatchTooManyOps {
		t.Fatalf("message %q", se.Message)
	}
	_, err = s.SubmitBatch(bg, "Tbl", nil)
	wantError(t, err, http.StatusBadRequest, "InvalidInput")

	ops := batchOfInserts(3)
	ops[2].Entity.PartitionKey = "other"
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusBadRequest, "CommandsInBatchActOnDifferentPartitions", 2)

	ops = batchOfInserts(4)
	ops[3] = api.BatchOp{Kind: api.BatchDelete, Entity: ent("p", "r001")}
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	se := wantError(t, err, http.StatusBadRequest, "InvalidDuplicateRow")
	if !se.Indexed || se.FailedIndex != 3 || se.Message != spec.ErrInvalidDuplicateRow.Message {
		t.Fatalf("duplicate row: %+v", se)
	}

	ops = batchOfInserts(3)
	ops[1].Entity.Properties["bad-name"] = api.Int32(1)
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusBadRequest, "PropertyNameInvalid", 1)

	ops = batchOfInserts(3)
	ops[0].Entity.RowKey = "a?b"
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusBadRequest, "OutOfRangeInput", 0)

	ops = []api.BatchOp{{Kind: api.BatchReplace, Entity: ent("p", "r000"), IfMatch: "bogus"}}
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusBadRequest, "InvalidInput", 0)

	ops = []api.BatchOp{{Kind: api.BatchOpKind(42), Entity: ent("p", "r000")}}
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusBadRequest, "InvalidInput", 0)

	// Two 32,000-character strings per entity: 100 entities send at least 6 MiB.
	big := strings.Repeat("x", 32000)
	ops = batchOfInserts(spec.MaxBatchOperations)
	for i := range ops {
		ops[i].Entity.RowKey += "big"
		ops[i].Entity.Properties["a"] = api.String(big)
		ops[i].Entity.Properties["b"] = api.String(big)
	}
	_, err = s.SubmitBatch(bg, "Tbl", ops)
	se = wantError(t, err, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	if se.Message != spec.MsgBatchPayloadTooLarge {
		t.Fatalf("message %q", se.Message)
	}
}

func TestBatchIsAtomic(t *testing.T) {
	s, _ := newTestService(t)
	before := mustInsert(t, s, ent("p", "exists", "v", api.Int32(1)))
	ops := []api.BatchOp{
		{Kind: api.BatchInsert, Entity: ent("p", "new1")},
		{Kind: api.BatchMerge, Entity: ent("p", "exists", "v", api.Int32(2))},
		{Kind: api.BatchInsert, Entity: ent("p", "new2")},
		{Kind: api.BatchInsert, Entity: ent("p", "exists2")},
		{Kind: api.BatchDelete, Entity: ent("p", "missing")},
	}
	_, err := s.SubmitBatch(bg, "Tbl", ops)
	wantIndexed(t, err, http.StatusNotFound, "ResourceNotFound", 4)
	if got := mustGet(t, s, "p", "exists"); got.ETag != before.ETag || !sameProperties(got.Properties, before.Properties) {
		t.Fatalf("a failed batch changed an entity: %v", got)
	}
	for _, rk := range []string{"new1", "new2", "exists2"} {
		_, err := s.GetEntity(bg, "Tbl", "p", rk, nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	}

	// Execution failures carry the operation's own status.
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchInsert, Entity: ent("p", "x")}, {Kind: api.BatchInsert, Entity: ent("p", "exists")}})
	wantIndexed(t, err, http.StatusConflict, "EntityAlreadyExists", 1)
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchInsert, Entity: ent("p", "x")}, {Kind: api.BatchReplace, Entity: ent("p", "exists"), IfMatch: `W/"stale"`}})
	wantIndexed(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied", 1)
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchInsert, Entity: ent("p", "x")}, {Kind: api.BatchMerge, Entity: ent("p", "nope")}})
	wantIndexed(t, err, http.StatusNotFound, "ResourceNotFound", 1) // empty IfMatch means "*"

	// A missing entity at the first operation carries no index (Storage traffic).
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchDelete, Entity: ent("p", "missing")}})
	if se := wantError(t, err, http.StatusNotFound, "ResourceNotFound"); se.Indexed {
		t.Fatalf("a lone missing delete names an index: %v", se)
	}
	// A failure of the resulting entity (a merge past 252 properties) is a 400 with its index.
	mustInsert(t, s, api.NewEntity("p", "full", manyProperties(spec.MaxCustomProperties)))
	_, err = s.SubmitBatch(bg, "Tbl", []api.BatchOp{{Kind: api.BatchMerge, Entity: ent("p", "full", "more", api.Int32(1))}})
	wantIndexed(t, err, http.StatusBadRequest, "TooManyProperties", 0)
}

func TestBatchTimestampsIncrease(t *testing.T) {
	s, _ := newTestService(t)
	results, err := s.SubmitBatch(bg, "Tbl", batchOfInserts(10))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(results); i++ {
		a, b := mustGet(t, s, "p", fmt.Sprintf("r%03d", i-1)), mustGet(t, s, "p", fmt.Sprintf("r%03d", i))
		if !b.Timestamp.After(a.Timestamp) || results[i].ETag == results[i-1].ETag {
			t.Fatalf("operation %d: Timestamp %v after %v", i, b.Timestamp, a.Timestamp)
		}
	}
}

// TestConcurrentBatchesAreAtomic runs transactions that set every entity of a partition to
// one value while readers query the partition: a reader must never see two values.
func TestConcurrentBatchesAreAtomic(t *testing.T) {
	s := New(WithDeleteHold(0))
	if err := s.CreateTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	const rows = 20
	setAll := func(v int32) []api.BatchOp {
		ops := make([]api.BatchOp, rows)
		for i := range ops {
			ops[i] = api.BatchOp{Kind: api.BatchInsertOrReplace, Entity: ent("p", fmt.Sprintf("r%02d", i), "v", api.Int32(v))}
		}
		return ops
	}
	if _, err := s.SubmitBatch(bg, "Tbl", setAll(0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 2 {
		wg.Go(func() {
			for i := range 100 {
				ops := setAll(int32(w*1000 + i))
				if i%10 == 9 { // a failing transaction must leave no trace
					ops = append(ops[:rows-1], api.BatchOp{Kind: api.BatchInsert, Entity: ent("p", "r00")})
					if _, err := s.SubmitBatch(bg, "Tbl", ops); err == nil {
						errs <- fmt.Errorf("a duplicate insert succeeded")
						return
					}
					continue
				}
				if _, err := s.SubmitBatch(bg, "Tbl", ops); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 200 {
				page, err := s.QueryEntities(bg, "Tbl", api.Query{Filter: "PartitionKey eq 'p'"})
				if err != nil {
					errs <- err
					return
				}
				if len(page.Entities) != rows {
					errs <- fmt.Errorf("a reader saw %d entities", len(page.Entities))
					return
				}
				v := page.Entities[0].Properties["v"].Int()
				for _, e := range page.Entities {
					if e.Properties["v"].Int() != v {
						errs <- fmt.Errorf("a reader saw a half-applied transaction: %d and %d", v, e.Properties["v"].Int())
						return
					}
				}
			}
		})
	}
	wg.Go(func() { // unrelated writers on other tables and partitions
		for i := range 200 {
			if _, err := s.InsertEntity(bg, "Tbl", ent("q", fmt.Sprint(i))); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// snapshotTable returns every entity of table Tbl, in order, through paged queries.
func snapshotTable(t *testing.T, s *Service) []api.Entity {
	t.Helper()
	var all []api.Entity
	q := api.Query{Top: api.TopOf(7)}
	for {
		page, err := s.QueryEntities(bg, "Tbl", q)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Entities...)
		if page.Continuation.IsZero() {
			return all
		}
		q.Continuation = page.Continuation
	}
}

func sameEntities(a, b []api.Entity) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.PartitionKey != y.PartitionKey || x.RowKey != y.RowKey || x.ETag != y.ETag ||
			!x.Timestamp.Equal(y.Timestamp) || x.Absent != y.Absent || !sameProperties(x.Properties, y.Properties) {
			return false
		}
	}
	return true
}

// A failed transaction leaves nothing behind: not its inserts into a new partition, not
// its deletes of a partition's last entity, not its replacements; and the table works on.
func TestFailedBatchRollsBackEveryWrite(t *testing.T) {
	s, clock := newTestService(t)
	mustInsert(t, s, ent("lone", "only", "v", api.Int32(1)))
	for i := range 5 {
		mustInsert(t, s, ent("p", fmt.Sprint(i), "v", api.Int32(int32(i))))
	}
	before := snapshotTable(t, s)
	batches := [][]api.BatchOp{
		{
			{Kind: api.BatchInsert, Entity: ent("fresh", "a", "v", api.String("x"))},
			{Kind: api.BatchInsertOrMerge, Entity: ent("fresh", "b", "v", api.String("y"))},
			{Kind: api.BatchInsert, Entity: ent("fresh", "a", "v", api.String("dup"))}, // fails: a repeated row
		},
		{
			{Kind: api.BatchDelete, Entity: ent("lone", "only")},
			{Kind: api.BatchInsert, Entity: ent("lone", "new")},
			{Kind: api.BatchDelete, Entity: ent("lone", "missing")}, // 404
		},
		{
			{Kind: api.BatchMerge, Entity: ent("p", "1", "w", api.Bool(true))},
			{Kind: api.BatchReplace, Entity: ent("p", "2")},
			{Kind: api.BatchDelete, Entity: ent("p", "3")},
			{Kind: api.BatchInsert, Entity: ent("p", "9")},
			{Kind: api.BatchInsert, Entity: ent("p", "4")}, // 409
		},
	}
	for i, ops := range batches {
		clock.Advance(time.Second)
		if _, err := s.SubmitBatch(bg, "Tbl", ops); err == nil {
			t.Fatalf("batch %d succeeded", i)
		}
		if after := snapshotTable(t, s); !sameEntities(before, after) {
			t.Fatalf("batch %d left writes behind:\nbefore %v\nafter  %v", i, before, after)
		}
		for _, e := range before {
			if got := mustGet(t, s, e.PartitionKey, e.RowKey); got.ETag != e.ETag {
				t.Fatalf("batch %d: get %v: %v", i, e.Key(), got)
			}
		}
	}
	// The ids and partitions the failed transactions took are usable again.
	mustInsert(t, s, ent("fresh", "a"))
	if err := s.DeleteEntity(bg, "Tbl", "lone", "only", "*"); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, ent("lone", "new"))
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Filter: "PartitionKey eq 'lone'"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != "new" {
		t.Fatalf("partition lone: %v, %v", page.Entities, err)
	}
}
