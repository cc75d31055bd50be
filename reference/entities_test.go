package reference

import (
	"math"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

var etagPattern = regexp.MustCompile(`^W/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$`)

func TestInsertReturnsTheStoredEntity(t *testing.T) {
	s, _ := newTestService(t)
	in := ent("p", "r", "a", api.Int32(1), "gone", api.Null(api.EdmString), "Timestamp", api.DateTime(time.Unix(0, 0)))
	in.Timestamp = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	got := mustInsert(t, s, in)
	if !sameProperties(got.Properties, map[string]api.Value{"a": api.Int32(1)}) {
		t.Fatalf("stored %v: want only a (nulls and a client Timestamp are not stored)", got)
	}
	if !got.Timestamp.Equal(testEpoch) {
		t.Fatalf("Timestamp %v, want the service clock %v", got.Timestamp, testEpoch)
	}
	if want := `W/"datetime'2024-05-06T07%3A08%3A09.1234567Z'"`; got.ETag != want {
		t.Fatalf("ETag %s, want %s", got.ETag, want)
	}
	read := mustGet(t, s, "p", "r")
	if read.ETag != got.ETag || !read.Timestamp.Equal(got.Timestamp) || !sameProperties(read.Properties, got.Properties) || read.Absent != 0 {
		t.Fatalf("get %v, want %v", read, got)
	}
	_, err := s.InsertEntity(bg, "Tbl", ent("p", "r"))
	wantError(t, err, http.StatusConflict, "EntityAlreadyExists")
}

func TestTimestampsIncreaseOnEveryWrite(t *testing.T) {
	s, clock := newTestService(t)
	var last time.Time
	seen := map[string]bool{}
	check := func(e api.Entity) {
		t.Helper()
		if !e.Timestamp.After(last) {
			t.Fatalf("Timestamp %v does not follow %v", e.Timestamp, last)
		}
		if e.Timestamp.Sub(last) < 100*time.Nanosecond && !last.IsZero() && e.Timestamp.Sub(last) != 100*time.Nanosecond {
			t.Fatalf("Timestamp step %v is finer than a tick", e.Timestamp.Sub(last))
		}
		if !etagPattern.MatchString(e.ETag) || seen[e.ETag] {
			t.Fatalf("ETag %s is malformed or repeated", e.ETag)
		}
		seen[e.ETag] = true
		last = e.Timestamp
	}
	check(mustInsert(t, s, ent("p", "r")))
	for i := range 5 { // the clock stands still: each write takes the next tick
		if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "r", "i", api.Int32(int32(i))), api.Merge, "*"); err != nil {
			t.Fatal(err)
		}
		check(mustGet(t, s, "p", "r"))
	}
	if got := mustGet(t, s, "p", "r").Timestamp; got != testEpoch.Add(500*time.Nanosecond) {
		t.Fatalf("Timestamp %v, want the epoch plus five ticks", got)
	}
	clock.Advance(time.Hour + 55) // the clock moves on; sub-tick time is truncated
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.Replace, "*"); err != nil {
		t.Fatal(err)
	}
	e := mustGet(t, s, "p", "r")
	check(e)
	if want := testEpoch.Add(time.Hour); !e.Timestamp.Equal(want) {
		t.Fatalf("Timestamp %v, want %v", e.Timestamp, want)
	}
}

func TestReplace(t *testing.T) {
	s, _ := newTestService(t)
	v1 := mustInsert(t, s, ent("p", "r", "a", api.Int32(1), "b", api.String("x")))
	etag, err := s.UpdateEntity(bg, "Tbl", ent("p", "r", "a", api.String("now a string"), "b", api.Null(0)), api.Replace, v1.ETag)
	if err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "p", "r")
	if got.ETag != etag || etag == v1.ETag {
		t.Fatalf("ETag %s after replace, returned %s, before %s", got.ETag, etag, v1.ETag)
	}
	if !sameProperties(got.Properties, map[string]api.Value{"a": api.String("now a string")}) {
		t.Fatalf("after replace %v: want only a, now a string", got)
	}
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.Replace, v1.ETag)
	wantError(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "missing"), api.Replace, "*")
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "missing"), api.Replace, v1.ETag)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	for _, bad := range []string{"abc", `"unterminated`, `W/abc`, `"a"b"`} {
		_, err = s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.Replace, bad)
		se := wantError(t, err, http.StatusBadRequest, "InvalidInput")
		if !strings.Contains(se.Message, bad) {
			t.Fatalf("message %q does not name the etag %q", se.Message, bad)
		}
	}
	// Upsert: no If-Match inserts or replaces.
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "new", "z", api.Bool(true)), api.Replace, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "new", "y", api.Bool(false)), api.Replace, ""); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "p", "new"); !sameProperties(got.Properties, map[string]api.Value{"y": api.Bool(false)}) {
		t.Fatalf("after insert-or-replace %v", got)
	}
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.UpdateMode(7), "*")
	wantError(t, err, http.StatusBadRequest, "InvalidInput")
}

func TestMerge(t *testing.T) {
	s, _ := newTestService(t)
	v1 := mustInsert(t, s, ent("p", "r", "a", api.Int32(1), "b", api.String("x")))
	etag, err := s.UpdateEntity(bg, "Tbl", ent("p", "r", "a", api.Int64(2), "b", api.Null(api.EdmString), "c", api.Bool(true)), api.Merge, v1.ETag)
	if err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "p", "r")
	want := map[string]api.Value{"a": api.Int64(2), "b": api.String("x"), "c": api.Bool(true)}
	if !sameProperties(got.Properties, want) || got.ETag != etag {
		t.Fatalf("after merge %v, want %v", got, want)
	}
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.Merge, v1.ETag)
	wantError(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	_, err = s.UpdateEntity(bg, "Tbl", ent("p", "missing"), api.Merge, "*")
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	// Insert or merge keeps old values, including ones sent as null.
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "r", "a", api.Null(0), "d", api.Double(1.5)), api.Merge, ""); err != nil {
		t.Fatal(err)
	}
	want["d"] = api.Double(1.5)
	if got := mustGet(t, s, "p", "r"); !sameProperties(got.Properties, want) {
		t.Fatalf("after insert-or-merge %v, want %v", got, want)
	}
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "fresh", "n", api.Null(0), "m", api.Int32(3)), api.Merge, ""); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "p", "fresh"); !sameProperties(got.Properties, map[string]api.Value{"m": api.Int32(3)}) {
		t.Fatalf("insert-or-merge of a new entity: %v", got)
	}
}

func TestDeleteEntity(t *testing.T) {
	s, _ := newTestService(t)
	v1 := mustInsert(t, s, ent("p", "r"))
	wantError(t, s.DeleteEntity(bg, "Tbl", "p", "r", ""), http.StatusBadRequest, "MissingRequiredHeader")
	wantError(t, s.DeleteEntity(bg, "Tbl", "p", "r", "nope"), http.StatusBadRequest, "InvalidInput")
	if _, err := s.UpdateEntity(bg, "Tbl", ent("p", "r"), api.Merge, "*"); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.DeleteEntity(bg, "Tbl", "p", "r", v1.ETag), http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
	cur := mustGet(t, s, "p", "r")
	if err := s.DeleteEntity(bg, "Tbl", "p", "r", cur.ETag); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.DeleteEntity(bg, "Tbl", "p", "r", "*"), http.StatusNotFound, "ResourceNotFound")
	_, err := s.GetEntity(bg, "Tbl", "p", "r", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	mustInsert(t, s, ent("p", "r2"))
	if err := s.DeleteEntity(bg, "Tbl", "p", "r2", "*"); err != nil {
		t.Fatal(err)
	}
	// Look-ups never validate keys: a key that could not be stored is simply missing.
	wantError(t, s.DeleteEntity(bg, "Tbl", "p/", "r?", "*"), http.StatusNotFound, "ResourceNotFound")
	_, err = s.GetEntity(bg, "Tbl", strings.Repeat("k", 2000), "r", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestGetWithSelect(t *testing.T) {
	s, _ := newTestService(t)
	stored := mustInsert(t, s, ent("p", "r", "age", api.Int32(30), "sex", api.String("f"), "other", api.Bool(true)))
	got, err := s.GetEntity(bg, "Tbl", "p", "r", []string{"age", "sex"})
	if err != nil {
		t.Fatal(err)
	}
	if !sameProperties(got.Properties, map[string]api.Value{"age": api.Int32(30), "sex": api.String("f")}) {
		t.Fatalf("projected %v", got)
	}
	if got.Absent != api.AbsentPartitionKey|api.AbsentRowKey|api.AbsentTimestamp || got.PartitionKey != "" || !got.Timestamp.IsZero() {
		t.Fatalf("system properties came back without being selected: %+v", got)
	}
	if got.ETag != stored.ETag {
		t.Fatalf("ETag %q, want %q (always returned)", got.ETag, stored.ETag)
	}
	got, err = s.GetEntity(bg, "Tbl", "p", "r", []string{"RowKey", "Timestamp", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Absent != api.AbsentPartitionKey || got.RowKey != "r" || !got.Timestamp.Equal(stored.Timestamp) {
		t.Fatalf("selected system properties: %+v", got)
	}
	if v, ok := got.Properties["missing"]; len(got.Properties) != 1 || !ok || !v.Null {
		t.Fatalf("a selected missing property: %v, want it as null (selectMissingAsNull)", got.Properties)
	}
	got, err = s.GetEntity(bg, "Tbl", "p", "r", []string{"*"})
	if err != nil || got.Absent != 0 || len(got.Properties) != 3 {
		t.Fatalf("$select=*: %+v %v", got, err)
	}
	_, err = s.GetEntity(bg, "Tbl", "p", "r", []string{"bad name"})
	wantError(t, err, http.StatusBadRequest, "InvalidInput")
}

func TestEveryTypeRoundTrips(t *testing.T) {
	s, _ := newTestService(t)
	props := map[string]api.Value{
		"s":       api.String("héllo 𝄞 \u0000 ok"),
		"empty":   api.String(""),
		"bin":     api.Binary([]byte{0, 1, 2, 255}),
		"nobin":   api.Binary([]byte{}),
		"t":       api.Bool(true),
		"f":       api.Bool(false),
		"dtMin":   api.DateTime(spec.MinDateTime),
		"dtMax":   api.DateTime(spec.MaxDateTime),
		"dt":      api.DateTime(time.Date(2020, 2, 29, 23, 59, 59, 123456789, time.FixedZone("x", 3600))),
		"nan":     api.Double(math.NaN()),
		"inf":     api.Double(math.Inf(1)),
		"ninf":    api.Double(math.Inf(-1)),
		"negzero": api.Double(math.Copysign(0, -1)),
		"d":       api.Double(1e-300),
		"guid":    api.Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
		"GUID":    api.Guid("0F8FAD5B-D9CB-469F-A165-70867728950E"),
		"i32min":  api.Int32(math.MinInt32),
		"i32max":  api.Int32(math.MaxInt32),
		"i64min":  api.Int64(math.MinInt64),
		"i64max":  api.Int64(math.MaxInt64),
	}
	mustInsert(t, s, api.NewEntity("p", "r", props))
	got := mustGet(t, s, "p", "r")
	for name, want := range props {
		if name == "GUID" {
			want = api.Guid(strings.ToLower(want.Str)) // Guids come back in canonical lower case
		}
		if v := got.Properties[name]; !v.Equal(want) {
			t.Errorf("%s: got %v, want %v", name, v, want)
		}
	}
	if v := got.Properties["negzero"]; !math.Signbit(v.Float()) {
		t.Errorf("-0 came back as %v", v.Float())
	}
	if v := got.Properties["dt"]; v.Time().Location() != time.UTC || v.Time().Nanosecond()%100 != 0 {
		t.Errorf("DateTime %v is not UTC ticks", v.Time())
	}
	if len(got.Properties) != len(props) {
		t.Errorf("got %d properties, want %d", len(got.Properties), len(props))
	}
}

func TestEntitiesAreNotAliased(t *testing.T) {
	s, _ := newTestService(t)
	bin := []byte{1, 2, 3}
	in := ent("p", "r", "b", api.Binary(bin))
	mustInsert(t, s, in)
	bin[0] = 9
	in.Properties["x"] = api.Int32(1)
	got := mustGet(t, s, "p", "r")
	got.Properties["b"].Bin()[1] = 9
	got.Properties["y"] = api.Int32(2)
	again := mustGet(t, s, "p", "r")
	if !sameProperties(again.Properties, map[string]api.Value{"b": api.Binary([]byte{1, 2, 3})}) {
		t.Fatalf("the store changed through caller memory: %v", again)
	}
}

func TestCancelledContext(t *testing.T) {
	s, _ := newTestService(t)
	ctx, cancel := contextWithCancel()
	cancel()
	if _, err := s.InsertEntity(ctx, "Tbl", ent("p", "r")); err == nil || isServiceError(err) {
		t.Fatalf("insert with a cancelled context: %v, want the context's error", err)
	}
	if _, err := s.QueryEntities(ctx, "Tbl", api.Query{}); err == nil || isServiceError(err) {
		t.Fatalf("query with a cancelled context: %v", err)
	}
	if _, err := s.SubmitBatch(ctx, "Tbl", []api.BatchOp{{Entity: ent("p", "r")}}); err == nil || isServiceError(err) {
		t.Fatalf("batch with a cancelled context: %v", err)
	}
}
