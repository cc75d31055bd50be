package reference

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

func TestCreateTableNames(t *testing.T) {
	cases := []struct {
		name   string
		status int
		code   string
	}{
		{"abc", 0, ""},
		{"A" + strings.Repeat("b", 62), 0, ""},
		{"Mixed123Case", 0, ""},
		{"my_table", http.StatusBadRequest, "InvalidResourceName"},
		{"1abc", http.StatusBadRequest, "InvalidResourceName"},
		{"ab-c", http.StatusBadRequest, "InvalidResourceName"},
		{"", http.StatusBadRequest, "InvalidResourceName"},
		{"tablé", http.StatusBadRequest, "InvalidResourceName"},
		{"ab", http.StatusBadRequest, "OutOfRangeInput"},
		{"A" + strings.Repeat("b", 63), http.StatusBadRequest, "OutOfRangeInput"},
		{"tables", http.StatusBadRequest, "InvalidResourceName"},
		{"Tables", http.StatusBadRequest, "InvalidResourceName"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(WithDeleteHold(0))
			err := s.CreateTable(bg, c.name)
			if c.status == 0 {
				if err != nil {
					t.Fatalf("create %q: %v", c.name, err)
				}
				return
			}
			wantError(t, err, c.status, c.code)
		})
	}
}

func TestTableNamesAreCaseInsensitiveAndKeepTheirCase(t *testing.T) {
	s := New(WithDeleteHold(0))
	if err := s.CreateTable(bg, "MyTable"); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.CreateTable(bg, "MYTABLE"), http.StatusConflict, "TableAlreadyExists")
	if _, err := s.InsertEntity(bg, "mytable", ent("p", "r")); err != nil {
		t.Fatalf("insert through another case: %v", err)
	}
	if _, err := s.GetEntity(bg, "MyTaBlE", "p", "r", nil); err != nil {
		t.Fatalf("get through another case: %v", err)
	}
	page, err := s.QueryTables(bg, api.TableQuery{})
	if err != nil || !slices.Equal(page.Tables, []string{"MyTable"}) {
		t.Fatalf("query tables: %v %v, want [MyTable]", page.Tables, err)
	}
	if err := s.DeleteTable(bg, "MYTABLE"); err != nil {
		t.Fatalf("delete through another case: %v", err)
	}
}

func TestDeleteTable(t *testing.T) {
	s, _ := newTestService(t)
	wantError(t, s.DeleteTable(bg, "Missing"), http.StatusNotFound, "ResourceNotFound")
	wantError(t, s.DeleteTable(bg, "bad_name"), http.StatusNotFound, "ResourceNotFound")
	mustInsert(t, s, ent("p", "r"))
	if err := s.DeleteTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.DeleteTable(bg, "Tbl"), http.StatusNotFound, "ResourceNotFound")
	// With no hold the name is free at once, and the new table is empty.
	if err := s.CreateTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetEntity(bg, "Tbl", "p", "r", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func TestDeleteHold(t *testing.T) {
	clock := newFakeClock()
	s := New(WithClock(clock.Now), WithDeleteHold(40*time.Second))
	if err := s.CreateTable(bg, "Held"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(bg, "Held"); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.CreateTable(bg, "HELD"), http.StatusConflict, "TableBeingDeleted")
	_, err := s.InsertEntity(bg, "Held", ent("p", "r"))
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	wantError(t, s.DeleteTable(bg, "Held"), http.StatusNotFound, "ResourceNotFound")
	page, err := s.QueryTables(bg, api.TableQuery{})
	if err != nil || len(page.Tables) != 0 {
		t.Fatalf("a held table is listed: %v %v", page.Tables, err)
	}
	clock.Advance(39 * time.Second)
	wantError(t, s.CreateTable(bg, "Held"), http.StatusConflict, "TableBeingDeleted")
	clock.Advance(time.Second)
	if err := s.CreateTable(bg, "Held"); err != nil {
		t.Fatalf("create after the hold: %v", err)
	}
}

func TestDefaultDeleteHold(t *testing.T) {
	clock := newFakeClock()
	s := New(WithClock(clock.Now))
	if err := s.CreateTable(bg, "Held"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(bg, "Held"); err != nil {
		t.Fatal(err)
	}
	wantError(t, s.CreateTable(bg, "Held"), http.StatusConflict, "TableBeingDeleted")
	clock.Advance(spec.DefaultTableDeleteHold)
	if err := s.CreateTable(bg, "Held"); err != nil {
		t.Fatal(err)
	}
}

func TestEntityOperationsOnMissingTable(t *testing.T) {
	s, _ := newTestService(t)
	const missing = "Missing"
	e := ent("p", "r")
	_, err := s.InsertEntity(bg, missing, e)
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	_, err = s.UpdateEntity(bg, missing, e, api.Replace, "")
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	_, err = s.UpdateEntity(bg, missing, e, api.Merge, "*")
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	wantError(t, s.DeleteEntity(bg, missing, "p", "r", "*"), http.StatusNotFound, "TableNotFound")
	_, err = s.GetEntity(bg, missing, "p", "r", nil)
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	_, err = s.QueryEntities(bg, missing, api.Query{})
	wantError(t, err, http.StatusNotFound, "TableNotFound")
	_, err = s.SubmitBatch(bg, missing, []api.BatchOp{{Kind: api.BatchInsert, Entity: e}})
	wantIndexed(t, err, http.StatusNotFound, "TableNotFound", 0)
}

func TestQueryTables(t *testing.T) {
	s := New(WithDeleteHold(0))
	names := []string{"beta", "Alpha", "gamma", "Delta", "epsilon"}
	for _, n := range names {
		if err := s.CreateTable(bg, n); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.QueryTables(bg, api.TableQuery{})
	want := []string{"Alpha", "beta", "Delta", "epsilon", "gamma"}
	if err != nil || !slices.Equal(page.Tables, want) || page.NextTableName != "" {
		t.Fatalf("got %v %q %v, want %v", page.Tables, page.NextTableName, err, want)
	}

	// $top pages, resumed by NextTableName.
	var got []string
	q := api.TableQuery{Top: 2}
	for i := 0; ; i++ {
		page, err := s.QueryTables(bg, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tables) > 2 {
			t.Fatalf("page of %d tables with $top=2", len(page.Tables))
		}
		got = append(got, page.Tables...)
		if page.NextTableName == "" {
			break
		}
		if !strings.HasPrefix(page.NextTableName, "1!") {
			t.Fatalf("NextTableName %q is not in Storage's format", page.NextTableName)
		}
		q.NextTableName = page.NextTableName
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}

	page, err = s.QueryTables(bg, api.TableQuery{Filter: "TableName ge 'b' and TableName lt 'e'"})
	if err != nil || !slices.Equal(page.Tables, []string{"beta"}) {
		t.Fatalf("filtered %v %v, want [beta] (ordinal, case-sensitive)", page.Tables, err)
	}
	_, err = s.QueryTables(bg, api.TableQuery{Filter: "TableName eq"})
	wantError(t, err, http.StatusBadRequest, "InvalidInput")
	for _, top := range []int{-1, 1001} {
		_, err = s.QueryTables(bg, api.TableQuery{Top: top})
		wantError(t, err, http.StatusBadRequest, "InvalidInput")
	}
	for _, tok := range []string{"garbage", EncodeKeyToken("beta"), EncodeKeyToken("beta\x010000000000000000")} {
		_, err = s.QueryTables(bg, api.TableQuery{NextTableName: tok})
		wantError(t, err, http.StatusBadRequest, "InvalidInput")
	}
}

func TestQueryTablesPageCap(t *testing.T) {
	s := New(WithDeleteHold(0))
	for i := range spec.MaxPageSize + 5 {
		if err := s.CreateTable(bg, fmt.Sprintf("t%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	page, err := s.QueryTables(bg, api.TableQuery{})
	if err != nil || len(page.Tables) != spec.MaxPageSize || page.NextTableName == "" {
		t.Fatalf("first page: %d tables, next %q, %v", len(page.Tables), page.NextTableName, err)
	}
	page, err = s.QueryTables(bg, api.TableQuery{NextTableName: page.NextTableName})
	if err != nil || len(page.Tables) != 5 || page.Tables[0] != "t01000" || page.NextTableName != "" {
		t.Fatalf("second page: %v, next %q, %v", page.Tables, page.NextTableName, err)
	}
}

// TestQueryTablesBareBooleanFilter: Query Tables with $filter=false, as health checks probe
// an account, answers no table; true answers them all (E-filter-bare-boolean).
func TestQueryTablesBareBooleanFilter(t *testing.T) {
	s, _ := newTestService(t)
	for filter, want := range map[string]int{"false": 0, "true": 1} {
		page, err := s.QueryTables(bg, api.TableQuery{Filter: filter})
		if err != nil || len(page.Tables) != want {
			t.Errorf("$filter=%s: %v, %v; want %d tables", filter, page.Tables, err, want)
		}
	}
	e := api.NewEntity("p", "r", nil)
	if _, err := s.InsertEntity(bg, "Tbl", e); err != nil {
		t.Fatal(err)
	}
	for filter, want := range map[string]int{"false": 0, "true": 1} {
		page, err := s.QueryEntities(bg, "Tbl", api.Query{Filter: filter})
		if err != nil || len(page.Entities) != want {
			t.Errorf("Query Entities $filter=%s: %v, %v; want %d entities", filter, page.Entities, err, want)
		}
	}
}

// Table names under both settings: Storage's case-insensitive names (the default) and the
// case-sensitive names of WithCaseSensitiveTableNames (Cosmos DB for Table,
// E-cosmos-documented). Creation, entity access, listing with its continuation, Delete Table
// and the delete hold all key a table the same way.
func TestTableNameCaseSettings(t *testing.T) {
	for _, c := range []struct {
		setting       string
		opts          []Option
		sensitive     bool
		listed        []string // after creating Table1 and then table1
		secondCreate  error    // creating table1 next to Table1 (nil: created)
		otherCaseRead int      // status of a read of Table1 through TABLE1 (0: found)
	}{
		{setting: "case-insensitive (default)", listed: []string{"Table1"}, otherCaseRead: 0},
		{setting: "case-sensitive", opts: []Option{WithCaseSensitiveTableNames(true)}, sensitive: true,
			listed: []string{"Table1", "table1"}, otherCaseRead: http.StatusNotFound},
		{setting: "case-sensitive off", opts: []Option{WithCaseSensitiveTableNames(false)}, listed: []string{"Table1"}},
	} {
		t.Run(c.setting, func(t *testing.T) {
			clock := newFakeClock()
			s := New(append([]Option{WithClock(clock.Now), WithDeleteHold(time.Minute)}, c.opts...)...)
			if err := s.CreateTable(bg, "Table1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.InsertEntity(bg, "Table1", ent("p", "r", "Which", api.String("upper"))); err != nil {
				t.Fatal(err)
			}
			err := s.CreateTable(bg, "table1")
			if c.sensitive {
				if err != nil {
					t.Fatalf("create table1 next to Table1: %v", err)
				}
				if _, err := s.InsertEntity(bg, "table1", ent("p", "r", "Which", api.String("lower"))); err != nil {
					t.Fatalf("the same keys in the other table: %v", err)
				}
			} else {
				wantError(t, err, http.StatusConflict, "TableAlreadyExists")
			}

			got, err := s.GetEntity(bg, "TABLE1", "p", "r", nil)
			if c.otherCaseRead == 0 {
				if err != nil || got.Properties["Which"].Str != "upper" {
					t.Fatalf("read through TABLE1: %v %v", got, err)
				}
			} else {
				wantError(t, err, c.otherCaseRead, "TableNotFound")
			}
			if c.sensitive {
				if got, err := s.GetEntity(bg, "table1", "p", "r", nil); err != nil || got.Properties["Which"].Str != "lower" {
					t.Fatalf("read through table1: %v %v", got, err)
				}
			}

			// Listed in full, and one table a page, resumed by NextTableName.
			page, err := s.QueryTables(bg, api.TableQuery{})
			if err != nil || !slices.Equal(page.Tables, c.listed) {
				t.Fatalf("listed %v %v, want %v", page.Tables, err, c.listed)
			}
			var paged []string
			for q := (api.TableQuery{Top: 1}); ; {
				page, err := s.QueryTables(bg, q)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page.Tables...)
				if q.NextTableName = page.NextTableName; q.NextTableName == "" {
					break
				}
			}
			if !slices.Equal(paged, c.listed) {
				t.Fatalf("paged %v, want %v", paged, c.listed)
			}
			if page, err := s.QueryTables(bg, api.TableQuery{Filter: "TableName eq 'table1'"}); err != nil || len(page.Tables) != len(c.listed)-1 {
				t.Fatalf("TableName eq 'table1' (ordinal): %v %v", page.Tables, err)
			}

			// Delete Table and the delete hold key the name as creation does.
			if c.sensitive {
				wantError(t, s.DeleteTable(bg, "TABLE1"), http.StatusNotFound, "ResourceNotFound")
			}
			if err := s.DeleteTable(bg, "Table1"); err != nil {
				t.Fatal(err)
			}
			wantError(t, s.CreateTable(bg, "Table1"), http.StatusConflict, "TableBeingDeleted")
			err = s.CreateTable(bg, "TABLE1")
			if c.sensitive {
				if err != nil {
					t.Fatalf("TABLE1 is held by the deletion of Table1: %v", err)
				}
				if got, err := s.GetEntity(bg, "table1", "p", "r", nil); err != nil || got.Properties["Which"].Str != "lower" {
					t.Fatalf("table1 after Table1 was deleted: %v %v", got, err)
				}
			} else {
				wantError(t, err, http.StatusConflict, "TableBeingDeleted")
			}
			clock.Advance(time.Minute)
			if err := s.CreateTable(bg, "Table1"); err != nil {
				t.Fatalf("create after the hold: %v", err)
			}
		})
	}
}
