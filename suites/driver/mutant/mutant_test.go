package mutant

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/inproc"
)

func TestCatalogue(t *testing.T) {
	all := All()
	if len(all) < 20 {
		t.Fatalf("%d mutants, want at least 20", len(all))
	}
	areas := map[spec.Area]bool{}
	for _, m := range all {
		if m.Description == "" {
			t.Errorf("mutant %s has no description", m.Name)
		}
		for _, id := range m.Breaks {
			r, ok := spec.LookupRule(id)
			if !ok {
				t.Errorf("mutant %s breaks unknown rule %q", m.Name, id)
				continue
			}
			if !m.Transport {
				areas[r.Area] = true
			}
		}
		if len(m.RunAreas()) == 0 && m.LabelFilter == "" {
			t.Errorf("mutant %s runs no area", m.Name)
		}
		if got, ok := Lookup(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Name, ok)
		}
	}
	for _, a := range []spec.Area{spec.AreaTables, spec.AreaEntities, spec.AreaTypes, spec.AreaLimits, spec.AreaQuery,
		spec.AreaOrdering, spec.AreaPagination, spec.AreaModification, spec.AreaConcurrency, spec.AreaBatch,
		spec.AreaPatterns, spec.AreaRelationships, spec.AreaAuth, spec.AreaParallel, spec.AreaProtocol, spec.AreaService} {
		if !areas[a] {
			t.Errorf("no behavioural mutant claims to break a rule of area %s", a)
		}
	}
}

func TestParseTarget(t *testing.T) {
	cases := []struct {
		target, name, base string
		ok, err            bool
	}{
		{"reference", "", "", false, false},
		{"mutant:top-ignored", "top-ignored", "reference", true, false},
		{"mutant:top-ignored@reference-http", "top-ignored", "reference-http", true, false},
		{"mutant:sas-ignores-key-range", "sas-ignores-key-range", "reference-http", true, false},
		{"mutant:no-such-mutant", "", "", true, true},
	}
	for _, c := range cases {
		m, base, ok, err := ParseTarget(c.target)
		if ok != c.ok || (err != nil) != c.err || m.Name != c.name || base != c.base {
			t.Errorf("ParseTarget(%q) = %q, %q, %v, %v; want %q, %q, %v, error %v", c.target, m.Name, base, ok, err, c.name, c.base, c.ok, c.err)
		}
	}
}

func TestRewriteNe(t *testing.T) {
	cases := map[string]string{
		"A ne 1": "not (A eq 1)",
		"PartitionKey eq 'p' and Name ne 'it''s'": "PartitionKey eq 'p' and not (Name eq 'it''s')",
		"(At ne datetime'2020-01-01T00:00:00Z')":  "(not (At eq datetime'2020-01-01T00:00:00Z'))",
		"Name eq 'x ne y'":                        "Name eq 'x ne y'",
		"not (B ne true) or C ne X'00ff'":         "not (not (B eq true)) or not (C eq X'00ff')",
		"":                                        "",
	}
	for in, want := range cases {
		if got := rewriteNe(in); got != want {
			t.Errorf("rewriteNe(%q) = %q, want %q", in, got, want)
		}
	}
}

func seed(t *testing.T, b api.Backend, table string, keys ...api.Key) {
	t.Helper()
	ctx := context.Background()
	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := b.InsertEntity(ctx, table, api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"V": api.Int32(1)})); err != nil {
			t.Fatal(err)
		}
	}
}

func mustLookup(t *testing.T, name string) Mutant {
	t.Helper()
	m, ok := Lookup(name)
	if !ok {
		t.Fatalf("no mutant %s", name)
	}
	return m
}

func TestReversePageOrder(t *testing.T) {
	b := mustLookup(t, "reverse-page-order").Wrap(inproc.New())
	seed(t, b, "table1", api.Key{PartitionKey: "a", RowKey: "1"}, api.Key{PartitionKey: "a", RowKey: "2"})
	p, err := b.QueryEntities(context.Background(), "table1", api.Query{})
	if err != nil || len(p.Entities) != 2 || p.Entities[0].RowKey != "2" {
		t.Fatalf("page %v, %v; want RowKey 2 first", p.Entities, err)
	}
}

func TestPaginationMutants(t *testing.T) {
	keys := []api.Key{{PartitionKey: "a", RowKey: "1"}, {PartitionKey: "a", RowKey: "2"}, {PartitionKey: "b", RowKey: "1"}, {PartitionKey: "b", RowKey: "2"}}
	all := func(b api.Backend) []api.Key {
		var out []api.Key
		q := api.Query{Top: api.TopOf(2)}
		for i := 0; i < 10; i++ {
			p, err := b.QueryEntities(context.Background(), "table1", q)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range p.Entities {
				out = append(out, e.Key())
			}
			if p.Continuation.IsZero() {
				break
			}
			q.Continuation = p.Continuation
		}
		return out
	}
	cases := map[string]int{
		"continuation-repeats-boundary":              6,
		"continuation-skips-one":                     3,
		"continuation-dropped":                       2,
		"continuation-dropped-at-partition-boundary": 2,
		"top-off-by-one":                             4,
	}
	for name, want := range cases {
		b := mustLookup(t, name).Wrap(inproc.New())
		seed(t, b, "table1", keys...)
		if got := all(b); len(got) != want {
			t.Errorf("%s: following continuations returned %v, want %d entities", name, got, want)
		}
	}
}

func TestBatchNotAtomic(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "batch-not-atomic").Wrap(inproc.New())
	seed(t, b, "table1", api.Key{PartitionKey: "p", RowKey: "dup"})
	_, err := b.SubmitBatch(ctx, "table1", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "new", nil)},
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "dup", nil)},
	})
	if e, ok := driver.AsError(err); !ok || e.Status != 409 {
		t.Fatalf("batch answered %v, want the 409 of operation 1", err)
	}
	if _, err := b.GetEntity(ctx, "table1", "p", "new", nil); err != nil {
		t.Fatalf("the operation before the failing one was rolled back: %v", err)
	}
}

func TestETagUnchangedOnUpdate(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "etag-unchanged-on-update").Wrap(inproc.New())
	seed(t, b, "table1")
	first, err := b.InsertEntity(ctx, "table1", api.NewEntity("p", "r", nil))
	if err != nil {
		t.Fatal(err)
	}
	etag, err := b.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(2)}), api.Replace, first.ETag)
	if err != nil || etag != first.ETag {
		t.Fatalf("update answered %q, %v; want the unchanged ETag %q", etag, err, first.ETag)
	}
	if _, err := b.UpdateEntity(ctx, "table1", api.NewEntity("p", "r", nil), api.Merge, first.ETag); err != nil {
		t.Fatalf("a write with the (frozen) first ETag failed: %v", err)
	}
	got, err := b.GetEntity(ctx, "table1", "p", "r", nil)
	if err != nil || got.ETag != first.ETag {
		t.Fatalf("read %q, %v; want %q", got.ETag, err, first.ETag)
	}
}

// fakeCapable is a backend with both optional capabilities, recording what it was asked.
type fakeCapable struct {
	api.Backend
	sasOpts driver.SASOptions
	did     bool
}

func (f *fakeCapable) WithSAS(_ context.Context, o driver.SASOptions) (api.Backend, error) {
	f.sasOpts = o
	return inproc.New(), nil
}

func (f *fakeCapable) WithAccountSAS(_ context.Context, _ driver.AccountSASOptions) (api.Backend, error) {
	return inproc.New(), nil
}

func (f *fakeCapable) NewRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, method, "http://127.0.0.1/"+path, nil)
}

func (f *fakeCapable) Do(*http.Request) (*http.Response, error) {
	f.did = true
	return nil, errors.New("not sent")
}

func TestCapabilitiesForwarded(t *testing.T) {
	inner := &fakeCapable{Backend: inproc.New()}
	b := mustLookup(t, "sas-ignores-key-range").Wrap(inner)
	sas, ok := b.(driver.SASIssuer)
	if !ok || !driver.Has(b, driver.CapRawHTTP) {
		t.Fatalf("capabilities lost: SAS %v, raw %v", ok, driver.Has(b, driver.CapRawHTTP))
	}
	derived, err := sas.WithSAS(context.Background(), driver.SASOptions{Table: "t", Permissions: "r", StartPK: "a", EndPK: "b", Expiry: time.Now().Add(time.Hour)})
	if err != nil || derived == nil {
		t.Fatalf("WithSAS: %v", err)
	}
	if inner.sasOpts.StartPK != "" || inner.sasOpts.EndPK != "" || inner.sasOpts.Permissions != "r" {
		t.Errorf("signed %+v; want the range dropped and the permissions kept", inner.sasOpts)
	}
	req, err := b.(driver.RawHTTP).NewRequest(context.Background(), http.MethodGet, "Tables", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.(driver.RawHTTP).Do(req); err == nil || !inner.did {
		t.Errorf("raw Do was not forwarded")
	}
	if plain := mustLookup(t, "top-ignored").Wrap(inproc.New()); driver.Has(plain, driver.CapSAS) || driver.Has(plain, driver.CapRawHTTP) {
		t.Errorf("a mutant over a backend without capabilities claims some")
	}
}

func TestHangsAfterCallsHonoursContext(t *testing.T) {
	b := mustLookup(t, "hangs-after-calls").Wrap(inproc.New())
	ctx := context.Background()
	for i := 0; i < transportCalls; i++ {
		_, _ = b.QueryTables(ctx, api.TableQuery{})
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.QueryTables(ctx, api.TableQuery{})
	if !driver.IsTransport(err) || time.Since(start) > 2*time.Second {
		t.Fatalf("call after the limit answered %v after %s; want a transport error when the context ends", err, time.Since(start))
	}
}

func TestGroupOrFirst(t *testing.T) {
	for _, c := range []struct{ filter, want string }{
		{"A eq 1 and B eq 2 or C eq 3", "A eq 1 and ( B eq 2 or C eq 3 )"},
		{"A eq 1 or B eq 2 and C eq 3", "( A eq 1 or B eq 2 ) and C eq 3"},
		{"A eq 1 and (B eq 2 or C eq 3) and D eq 'x or y'", "A eq 1 and ( B eq 2 or C eq 3 ) and D eq 'x or y'"},
		{"A eq 1 or B eq 2", "( A eq 1 or B eq 2 )"},
		{"A eq 1", "A eq 1"},
	} {
		if got := rewriteTokens(c.filter, groupOrFirst); got != c.want {
			t.Errorf("groupOrFirst(%q) = %q, want %q", c.filter, got, c.want)
		}
	}
}
