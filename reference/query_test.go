package reference

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// queryAll follows continuations to the end and returns every page.
func queryAll(t testing.TB, s *Service, q api.Query) [][]api.Entity {
	t.Helper()
	var pages [][]api.Entity
	for range 10_000 {
		page, err := s.QueryEntities(bg, "Tbl", q)
		if err != nil {
			t.Fatalf("query %+v: %v", q, err)
		}
		pages = append(pages, page.Entities)
		if page.Continuation.IsZero() {
			return pages
		}
		q.Continuation = page.Continuation
	}
	t.Fatal("the query never ended")
	return nil
}

func keysOf(pages ...[]api.Entity) []string {
	var keys []string
	for _, p := range pages {
		for _, e := range p {
			keys = append(keys, e.PartitionKey+"|"+e.RowKey)
		}
	}
	return keys
}

func TestQueryOrder(t *testing.T) {
	s, _ := newTestService(t)
	// Inserted out of order; includes case, non-ASCII and the UTF-16 surrogate order case:
	// U+1D11E (a surrogate pair) sorts below U+FF21 in UTF-16 but above it in UTF-8.
	keys := [][2]string{{"b", "1"}, {"a", "2"}, {"a", "10"}, {"B", "x"}, {"a", ""}, {"", "z"},
		{"\uff21", "r"}, {"𝄞", "r"}, {"é", "r"}, {"a", "A"}, {"a", "a"}}
	for _, k := range keys {
		mustInsert(t, s, ent(k[0], k[1]))
	}
	got := keysOf(queryAll(t, s, api.Query{})...)
	want := []string{"|z", "B|x", "a|", "a|10", "a|2", "a|A", "a|a", "b|1", "é|r", "𝄞|r", "\uff21|r"}
	if !slices.Equal(got, want) {
		t.Fatalf("order\n got %q\nwant %q", got, want)
	}
}

func fillPartitions(t testing.TB, s *Service, partitions, rows int) {
	t.Helper()
	for p := range partitions {
		for r := range rows {
			mustInsert(t, s, ent(fmt.Sprintf("p%02d", p), fmt.Sprintf("r%04d", r), "n", api.Int32(int32(r))))
		}
	}
}

var tokenPattern = regexp.MustCompile(`^1!\d+![A-Za-z0-9+/]*-{0,2}$`)

func TestQueryPagesWithTop(t *testing.T) {
	s, _ := newTestService(t)
	fillPartitions(t, s, 3, 7)
	all := keysOf(queryAll(t, s, api.Query{})...)
	if len(all) != 21 {
		t.Fatalf("%d entities, want 21", len(all))
	}
	pages := queryAll(t, s, api.Query{Top: api.TopOf(4)})
	if len(pages) != 6 || len(pages[5]) != 1 {
		t.Fatalf("$top=4 over 21 entities gave %d pages", len(pages))
	}
	if got := keysOf(pages...); !slices.Equal(got, all) {
		t.Fatalf("paged %v, want %v", got, all)
	}
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Top: api.TopOf(4)})
	if err != nil {
		t.Fatal(err)
	}
	c := page.Continuation
	if !tokenPattern.MatchString(c.NextPartitionKey) || !tokenPattern.MatchString(c.NextRowKey) {
		t.Fatalf("continuation %+v is not in Storage's format", c)
	}
	pk, _ := DecodeKeyToken(c.NextPartitionKey)
	rk, _ := DecodeKeyToken(c.NextRowKey)
	if pk+"|"+rk != all[4] {
		t.Fatalf("continuation names %s|%s, want the next entity %s", pk, rk, all[4])
	}
	// Exactly $top entities left: the last page has no continuation.
	pages = queryAll(t, s, api.Query{Top: api.TopOf(7), Filter: "PartitionKey eq 'p01'"})
	if len(pages) != 1 || len(pages[0]) != 7 {
		t.Fatalf("a filter matching exactly $top entities gave %d pages", len(pages))
	}
}

func TestQueryPageCap(t *testing.T) {
	s, _ := newTestService(t)
	fillPartitions(t, s, 1, 2500)
	pages := queryAll(t, s, api.Query{})
	if len(pages) != 3 || len(pages[0]) != spec.MaxPageSize || len(pages[1]) != spec.MaxPageSize || len(pages[2]) != 500 {
		t.Fatalf("pages of %d, %d, ...; want 1000, 1000, 500", len(pages[0]), len(pages[1]))
	}
}

func TestQueryFilters(t *testing.T) {
	s, _ := newTestService(t)
	fillPartitions(t, s, 4, 10)
	cases := []struct {
		filter string
		want   int
	}{
		{"PartitionKey eq 'p02'", 10},
		{"PartitionKey eq 'p02' and RowKey ge 'r0003' and RowKey lt 'r0006'", 3},
		{"PartitionKey gt 'p01' and PartitionKey le 'p03'", 20},
		{"n ge 8", 8},
		{"PartitionKey eq 'p00' or PartitionKey eq 'p03' and n lt 2", 12},
		{"not (PartitionKey ne 'p01')", 10},
		{"PartitionKey eq 'p01' and PartitionKey eq 'p02'", 0},
		{"missing eq 1", 0},
		{"RowKey eq 'r0009'", 4},
	}
	for _, c := range cases {
		pages := queryAll(t, s, api.Query{Filter: c.filter, Top: api.TopOf(3)})
		got := keysOf(pages...)
		if len(got) != c.want {
			t.Errorf("%s: %d entities, want %d", c.filter, len(got), c.want)
		}
		if !slices.IsSortedFunc(got, func(a, b string) int { return strings.Compare(a, b) }) {
			t.Errorf("%s: out of order %v", c.filter, got)
		}
		for _, p := range pages[:len(pages)-1] {
			if len(p) != 3 {
				t.Errorf("%s: a page of %d before the last, want 3 (no empty or short pages)", c.filter, len(p))
			}
		}
	}
	_, err := s.QueryEntities(bg, "Tbl", api.Query{Filter: "aaa bbb ccc"})
	wantError(t, err, http.StatusBadRequest, "InvalidInput")
	for _, top := range []int{-1, 1001} {
		_, err = s.QueryEntities(bg, "Tbl", api.Query{Top: api.OptionalTop(top)})
		wantError(t, err, http.StatusBadRequest, "InvalidInput")
	}
}

func TestQuerySelect(t *testing.T) {
	s, _ := newTestService(t)
	mustInsert(t, s, ent("p", "a", "x", api.Int32(1), "y", api.Int32(2)))
	mustInsert(t, s, ent("p", "b", "y", api.Int32(3)))
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Select: []string{"x", "RowKey"}, Filter: "y gt 0", Top: api.TopOf(1)})
	if err != nil {
		t.Fatal(err)
	}
	e := page.Entities[0]
	if e.RowKey != "a" || e.PartitionKey != "" || e.Absent != api.AbsentPartitionKey|api.AbsentTimestamp ||
		!sameProperties(e.Properties, map[string]api.Value{"x": api.Int32(1)}) || e.ETag == "" {
		t.Fatalf("projected %+v", e)
	}
	// The filter sees every property, whatever is selected; the continuation still works.
	page, err = s.QueryEntities(bg, "Tbl", api.Query{Select: []string{"x", "RowKey"}, Filter: "y gt 0", Top: api.TopOf(1), Continuation: page.Continuation})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].RowKey != "b" || !page.Entities[0].Properties["x"].Null {
		t.Fatalf("second page %+v %v", page, err)
	}
}

func TestContinuationAcrossWrites(t *testing.T) {
	s, _ := newTestService(t)
	for _, rk := range []string{"b", "d", "f", "h"} {
		mustInsert(t, s, ent("p", rk))
	}
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Top: api.TopOf(2)})
	if err != nil || !slices.Equal(keysOf(page.Entities), []string{"p|b", "p|d"}) {
		t.Fatalf("first page %v %v", keysOf(page.Entities), err)
	}
	// Writes between pages: before the position, at the next entity, after it.
	mustInsert(t, s, ent("p", "a"))
	mustInsert(t, s, ent("p", "c"))
	if err := s.DeleteEntity(bg, "Tbl", "p", "f", "*"); err != nil {
		t.Fatal(err)
	}
	mustInsert(t, s, ent("p", "g"))
	rest := keysOf(queryAll(t, s, api.Query{Top: api.TopOf(2), Continuation: page.Continuation})...)
	if want := []string{"p|g", "p|h"}; !slices.Equal(rest, want) {
		t.Fatalf("resumed at %v, want %v", rest, want)
	}
}

func TestBadContinuations(t *testing.T) {
	s, _ := newTestService(t)
	good := EncodeKeyToken("p")
	for _, c := range []api.Continuation{
		{NextPartitionKey: "garbage"},
		{NextPartitionKey: "1!5!abc"},
		{NextPartitionKey: "1!4!cA=="},
		{NextPartitionKey: "2!4!cA--"},
		{NextPartitionKey: good, NextRowKey: "1!x!"},
		{NextRowKey: good},
		{NextPartitionKey: EncodeKeyToken("\xff")},
	} {
		_, err := s.QueryEntities(bg, "Tbl", api.Query{Continuation: c})
		wantError(t, err, http.StatusBadRequest, "InvalidInput")
	}
	// A NextPartitionKey alone resumes at the start of that partition.
	mustInsert(t, s, ent("a", "1"))
	mustInsert(t, s, ent("p", "1"))
	page, err := s.QueryEntities(bg, "Tbl", api.Query{Continuation: api.Continuation{NextPartitionKey: good}})
	if err != nil || !slices.Equal(keysOf(page.Entities), []string{"p|1"}) {
		t.Fatalf("resume at a partition: %v %v", keysOf(page.Entities), err)
	}
}

func TestPartitionBoundaryPages(t *testing.T) {
	s, _ := newTestService(t, WithPartitionBoundaryPages(true))
	fillPartitions(t, s, 3, 4)
	pages := queryAll(t, s, api.Query{})
	if len(pages) != 3 {
		t.Fatalf("%d pages, want one per partition", len(pages))
	}
	for i, p := range pages {
		if len(p) != 4 || p[0].PartitionKey != fmt.Sprintf("p%02d", i) {
			t.Fatalf("page %d: %v", i, keysOf(p))
		}
	}
	if pages := queryAll(t, s, api.Query{Top: api.TopOf(3)}); len(pages) != 6 {
		t.Fatalf("$top=3 with partition pages: %d pages, want 6", len(pages))
	}
}

func TestEncodeKeyToken(t *testing.T) {
	// Tokens seen in Storage traffic (EVIDENCE.md 3.5).
	for key, want := range map[string]string{"pkadca2e0d": "1!16!cGthZGNhMmUwZA--", "rkadca2e0d123": "1!20!cmthZGNhMmUwZDEyMw--", "": "1!0!"} {
		if got := EncodeKeyToken(key); got != want {
			t.Errorf("EncodeKeyToken(%q) = %q, want %q", key, got, want)
		}
		if back, err := DecodeKeyToken(want); err != nil || back != key {
			t.Errorf("DecodeKeyToken(%q) = %q, %v", want, back, err)
		}
	}
	tok := encodeTableToken("mytable2")
	if name, err := decodeTableToken(tok); err != nil || name != "mytable2" {
		t.Fatalf("table token round trip: %q %v", name, err)
	}
}

func FuzzDecodeKeyToken(f *testing.F) {
	for _, seed := range []string{"1!16!cGthZGNhMmUwZA--", "1!0!", "1!4!YQ--", "1!", "!", "1!99999999999999999999!", "1!-4!abcd", "1!4!====", EncodeKeyToken("é𝄞")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		key, err := DecodeKeyToken(token)
		if err != nil {
			return
		}
		if again := EncodeKeyToken(key); again != token {
			t.Fatalf("token %q decodes to %q, which encodes to %q", token, key, again)
		}
		pos, resume, err := decodeContinuation(api.Continuation{NextPartitionKey: token, NextRowKey: token})
		if err != nil || !resume || pos.PartitionKey != key || pos.RowKey != key {
			t.Fatalf("a valid token %q is not resumed from: %v %v %v", token, pos, resume, err)
		}
		_, _ = decodeTableToken(token) // must not panic
	})
}

// A query whose filter is exactly a key range takes a shortcut (odata's IsKeyRange), in any
// order and grouping of its comparisons; the same filter under a double negation is
// evaluated entity by entity. Both must answer the same pages.
func TestKeyRangeScanAgreesWithFilterScan(t *testing.T) {
	for _, boundary := range []bool{false, true} {
		s, _ := newTestService(t, WithPartitionBoundaryPages(boundary))
		r := rand.New(rand.NewPCG(5, 6))
		pks := []string{"", "a", "b", "é", "\uff21", "𝄞", "O'Brien"}
		rks := []string{"", "0", "1", "2", "a", "ab", "é", "\ue000", "\uff21", "𝄞"}
		for _, pk := range pks {
			for _, rk := range rks {
				if r.IntN(3) > 0 {
					mustInsert(t, s, ent(pk, rk, "n", api.Int32(int32(r.IntN(9)))))
				}
			}
		}
		quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
		shortcuts := 0
		for range 400 {
			var parts []string
			pk := pks[r.IntN(len(pks))]
			if r.IntN(5) > 0 {
				parts = append(parts, "PartitionKey eq "+quote(pk))
				if r.IntN(2) == 0 {
					parts = append(parts, "RowKey "+[]string{"gt", "ge"}[r.IntN(2)]+" "+quote(rks[r.IntN(len(rks))]))
				}
				if r.IntN(2) == 0 {
					parts = append(parts, "RowKey "+[]string{"lt", "le"}[r.IntN(2)]+" "+quote(rks[r.IntN(len(rks))]))
				}
			} else {
				if r.IntN(2) == 0 {
					parts = append(parts, "PartitionKey "+[]string{"gt", "ge"}[r.IntN(2)]+" "+quote(pk))
				}
				parts = append(parts, "PartitionKey "+[]string{"lt", "le"}[r.IntN(2)]+" "+quote(pks[r.IntN(len(pks))]))
			}
			shortcut := strings.Join(parts, " and ")
			if r.IntN(2) == 0 {
				slices.Reverse(parts)
				shortcut = "(" + strings.Join(parts, ") and (") + ")"
			}
			general := "not (not (" + shortcut + "))"
			for filter, shortcutSpelling := range map[string]bool{shortcut: true, general: false} {
				f, err := compileFilter(filter)
				if err != nil {
					t.Fatal(err)
				}
				kr := f.KeyRange()
				if kr.Empty {
					continue
				}
				switch took := f.IsKeyRange(); {
				case took != shortcutSpelling:
					t.Fatalf("IsKeyRange(%s) is %v", filter, took)
				case took:
					shortcuts++
				}
			}
			top := []int{0, 1, 2, 3}[r.IntN(4)]
			pages := func(filter string) []api.Page {
				var out []api.Page
				q := api.Query{Filter: filter, Top: api.OptionalTop(top)}
				for {
					page, err := s.QueryEntities(bg, "Tbl", q)
					if err != nil {
						t.Fatalf("%s: %v", filter, err)
					}
					out = append(out, page)
					if page.Continuation.IsZero() {
						return out
					}
					q.Continuation = page.Continuation
				}
			}
			a, b := pages(shortcut), pages(general)
			if len(a) != len(b) {
				t.Fatalf("%s: %d pages; %s: %d pages", shortcut, len(a), general, len(b))
			}
			for i := range a {
				if !sameEntities(a[i].Entities, b[i].Entities) || a[i].Continuation != b[i].Continuation {
					t.Fatalf("page %d of %s (top %d):\n%v %v\nof %s:\n%v %v", i, shortcut, top,
						a[i].Entities, a[i].Continuation, general, b[i].Entities, b[i].Continuation)
				}
			}
		}
		if shortcuts < 100 {
			t.Fatalf("only %d of 400 queries took the key-range shortcut", shortcuts)
		}
	}
}
