package tableserver_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

func devConnectionString(endpoint string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + tableserver.DevAccountName + ";AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=" + endpoint
}

// serve starts a server over a fresh reference and checks, at the end, that no request
// ever reached the panic guard.
func serve(t *testing.T, opts ...tableserver.Option) (*tableserver.Server, *httptest.Server) {
	t.Helper()
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0)), opts...)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		if n := srv.Recovered(); n != 0 {
			t.Errorf("the server recovered from %d panics", n)
		}
	})
	return srv, ts
}

func client(t *testing.T, ts *httptest.Server, opts ...rest.Option) *rest.Backend {
	t.Helper()
	b, err := rest.New(devConnectionString(ts.URL+"/"+tableserver.DevAccountName), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantErr(t *testing.T, err error, status int, code string) {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != status || se.Code != code {
		t.Errorf("err = %v, want %d %s", err, status, code)
	}
}

func allTypes() map[string]api.Value {
	return map[string]api.Value{
		"s": api.String("O'Brien & co"), "b": api.Binary([]byte{1, 2, 3}), "t": api.Bool(true),
		"dt": api.DateTime(time.Date(2020, 1, 2, 3, 4, 5, 600000000, time.UTC)), "dtmin": api.DateTime(spec.MinDateTime),
		"d": api.Double(5), "nan": api.Double(math.NaN()), "inf": api.Double(math.Inf(-1)),
		"g": api.Guid("a455c695-df98-5678-aaaa-81d3367e5a34"), "i": api.Int32(-7), "l": api.Int64(9007199254740993),
	}
}

func TestEveryOperationThroughTheRestDriver(t *testing.T) {
	_, ts := serve(t)
	for _, tc := range []struct {
		name string
		opts []rest.Option
	}{
		{"sharedkey-minimal", nil},
		{"sharedkeylite-full", []rest.Option{rest.WithSharedKeyLite(), rest.WithMetadata(wire.FullMetadata)}},
		{"patch-merge", []rest.Option{rest.WithMergeVerb("PATCH")}},
		{"post-merge", []rest.Option{rest.WithMergeVerb("POST")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := client(t, ts, tc.opts...)
			c := ctx(t)
			table := "t" + strings.ReplaceAll(tc.name, "-", "")
			if err := b.CreateTable(c, table); err != nil {
				t.Fatal(err)
			}
			wantErr(t, b.CreateTable(c, table), 409, "TableAlreadyExists")
			page, err := b.QueryTables(c, api.TableQuery{Filter: "TableName eq '" + table + "'"})
			if err != nil || len(page.Tables) != 1 || page.Tables[0] != table {
				t.Fatalf("QueryTables = %+v, %v", page, err)
			}

			stored, err := b.InsertEntity(c, table, api.NewEntity("p'k", "r 1", allTypes()))
			if err != nil {
				t.Fatal(err)
			}
			if stored.ETag == "" || stored.Timestamp.IsZero() {
				t.Errorf("insert answer lacks ETag or Timestamp: %+v", stored)
			}
			_, err = b.InsertEntity(c, table, api.NewEntity("p'k", "r 1", nil))
			wantErr(t, err, 409, "EntityAlreadyExists")

			got, err := b.GetEntity(c, table, "p'k", "r 1", nil)
			if err != nil {
				t.Fatal(err)
			}
			for n, v := range allTypes() {
				if !got.Properties[n].Equal(v) {
					t.Errorf("%s = %v, want %v", n, got.Properties[n], v)
				}
			}
			if got.ETag != stored.ETag {
				t.Errorf("ETag %q, insert said %q", got.ETag, stored.ETag)
			}
			sel, err := b.GetEntity(c, table, "p'k", "r 1", []string{"i"})
			if err != nil || len(sel.Properties) != 1 || !sel.Properties["i"].Equal(api.Int32(-7)) {
				t.Errorf("$select: %v, %v", sel, err)
			}

			etag, err := b.UpdateEntity(c, table, api.NewEntity("p'k", "r 1", map[string]api.Value{"x": api.Int32(1)}), api.Replace, got.ETag)
			if err != nil || etag == "" || etag == got.ETag {
				t.Fatalf("replace: %q, %v", etag, err)
			}
			_, err = b.UpdateEntity(c, table, api.NewEntity("p'k", "r 1", nil), api.Replace, got.ETag)
			wantErr(t, err, 412, "UpdateConditionNotSatisfied")
			if _, err := b.UpdateEntity(c, table, api.NewEntity("p'k", "r 1", map[string]api.Value{"y": api.String("m")}), api.Merge, api.IfMatchAny); err != nil {
				t.Fatal(err)
			}
			if _, err := b.UpdateEntity(c, table, api.NewEntity("p'k", "r 2", map[string]api.Value{"z": api.Bool(false)}), api.Merge, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := b.UpdateEntity(c, table, api.NewEntity("p'k", "r 3", nil), api.Replace, ""); err != nil {
				t.Fatal(err)
			}
			got, _ = b.GetEntity(c, table, "p'k", "r 1", nil)
			if len(got.Properties) != 2 || !got.Properties["x"].Equal(api.Int32(1)) || !got.Properties["y"].Equal(api.String("m")) {
				t.Errorf("after replace and merge: %v", got)
			}

			var seen []string
			q := api.Query{Filter: "PartitionKey eq 'p''k'", Top: api.TopOf(1)}
			for pages := 0; ; pages++ {
				if pages > 5 {
					t.Fatal("paging does not end")
				}
				p, err := b.QueryEntities(c, table, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range p.Entities {
					seen = append(seen, e.RowKey)
				}
				if p.Continuation.IsZero() {
					break
				}
				q.Continuation = p.Continuation
			}
			if strings.Join(seen, ",") != "r 1,r 2,r 3" {
				t.Errorf("paged query saw %v", seen)
			}

			res, err := b.SubmitBatch(c, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: api.NewEntity("p'k", "b1", map[string]api.Value{"v": api.Int64(1)})},
				{Kind: api.BatchInsertOrMerge, Entity: api.NewEntity("p'k", "b2", nil)},
				{Kind: api.BatchMerge, Entity: api.NewEntity("p'k", "r 1", map[string]api.Value{"w": api.Double(1.5)})},
				{Kind: api.BatchDelete, Entity: api.NewEntity("p'k", "r 2", nil)},
			})
			if err != nil || len(res) != 4 || res[0].ETag == "" || res[3].Status != 204 {
				t.Fatalf("batch = %+v, %v", res, err)
			}
			_, err = b.SubmitBatch(c, table, []api.BatchOp{
				{Kind: api.BatchInsert, Entity: api.NewEntity("p'k", "b3", nil)},
				{Kind: api.BatchInsert, Entity: api.NewEntity("p'k", "b1", nil)},
			})
			var se *spec.Error
			if !errors.As(err, &se) || se.Status != 409 || se.Code != "EntityAlreadyExists" || !se.Indexed || se.FailedIndex != 1 {
				t.Errorf("failed batch = %v (%+v)", err, se)
			}
			if _, err := b.GetEntity(c, table, "p'k", "b3", nil); err == nil {
				t.Error("a failed batch left its first insert behind")
			}
			res, err = b.SubmitBatch(c, table, []api.BatchOp{{Kind: api.BatchRetrieve, Entity: api.NewEntity("p'k", "b1", nil)}})
			if err != nil || len(res) != 1 || res[0].Entity == nil || !res[0].Entity.Properties["v"].Equal(api.Int64(1)) {
				t.Errorf("batch retrieve = %+v, %v", res, err)
			}

			if err := b.DeleteEntity(c, table, "p'k", "r 1", api.IfMatchAny); err != nil {
				t.Fatal(err)
			}
			_, err = b.GetEntity(c, table, "p'k", "r 1", nil)
			wantErr(t, err, 404, "ResourceNotFound")
			if err := b.DeleteTable(c, table); err != nil {
				t.Fatal(err)
			}
			wantErr(t, b.DeleteTable(c, table), 404, "ResourceNotFound")
		})
	}
}

func TestDescribeRawHTTPAndSAS(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	if err := b.CreateTable(c, "sastable"); err != nil {
		t.Fatal(err)
	}
	info := b.Info()
	if info.Kind != "endpoint" || info.Driver != "rest" || info.Version != tableserver.ServerHeader || strings.Contains(info.Endpoint, tableserver.DevAccountKey) {
		t.Errorf("Info = %+v", info)
	}
	if !driver.Has(b, driver.CapRawHTTP) || !driver.Has(b, driver.CapSAS) {
		t.Error("capabilities missing")
	}
	// A hand-made Merge tunnelled through POST.
	req, err := b.NewRequest(c, http.MethodPost, wire.EntityPath("sastable", "p", "r"), []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-HTTP-Method", "MERGE")
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("ETag") == "" || resp.Header.Get("x-ms-request-id") == "" {
		t.Errorf("raw merge: %d %v", resp.StatusCode, resp.Header)
	}

	sasB, err := b.WithSAS(c, driver.SASOptions{Table: "sastable", Permissions: "ra", Expiry: time.Now().Add(time.Hour), StartPK: "p", EndPK: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sasB.InsertEntity(c, "sastable", api.NewEntity("p", "r2", nil)); err != nil {
		t.Errorf("SAS insert in range: %v", err)
	}
	_, err = sasB.InsertEntity(c, "sastable", api.NewEntity("z", "r", nil))
	wantErr(t, err, 403, "AuthorizationFailure")
	wantErr(t, sasB.DeleteEntity(c, "sastable", "p", "r", "*"), 403, "AuthorizationPermissionMismatch")
	wantErr(t, sasB.CreateTable(c, "other"), 403, "AuthorizationFailure")
	page, err := sasB.QueryEntities(c, "sastable", api.Query{})
	if err != nil || len(page.Entities) != 2 {
		t.Errorf("SAS query = %+v, %v", page, err)
	}
	expired, _ := b.WithSAS(c, driver.SASOptions{Table: "sastable", Permissions: "r", Expiry: time.Now().Add(-time.Hour)})
	_, err = expired.GetEntity(c, "sastable", "p", "r", nil)
	wantErr(t, err, 403, "AuthenticationFailed")
}

func TestHostStyleAccounts(t *testing.T) {
	key := []byte("another-account-key-of-32-bytes!")
	_, ts := serve(t, tableserver.WithAccount("acct2", key, reference.New()))
	addr := ts.Listener.Addr().String()
	tr := rest.NewTransport()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	_, port, _ := net.SplitHostPort(addr)
	cs := "AccountName=acct2;AccountKey=YW5vdGhlci1hY2NvdW50LWtleS1vZi0zMi1ieXRlcyE=;TableEndpoint=http://acct2.table.localhost:" + port
	b, err := rest.New(cs, rest.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	if err := b.CreateTable(c, "hoststyle"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InsertEntity(c, "hoststyle", api.NewEntity("a", "b", nil)); err != nil {
		t.Fatal(err)
	}
	// The development key does not sign for acct2.
	wrong, _ := rest.New("AccountName=acct2;AccountKey="+tableserver.DevAccountKey+";TableEndpoint=http://acct2.table.localhost:"+port,
		rest.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}))
	_, err = wrong.QueryTables(c, api.TableQuery{})
	wantErr(t, err, 403, "AuthenticationFailed")
}

// panicky is a backend whose every method panics: the guard must answer 500 InternalError.
type panicky struct{ api.Backend }

func (panicky) QueryTables(context.Context, api.TableQuery) (api.TablePage, error) {
	panic("deliberate")
}

func TestRecoverAnswersInternalError(t *testing.T) {
	srv := tableserver.New(panicky{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b := client(t, ts)
	_, err := b.QueryTables(ctx(t), api.TableQuery{})
	wantErr(t, err, 500, "InternalError")
	if srv.Recovered() != 1 {
		t.Errorf("Recovered = %d, want 1", srv.Recovered())
	}
}

// TestServiceURLOfEachHost checks that answers name the endpoint as each client addressed
// it, also past the number of service URLs a Server keeps.
func TestServiceURLOfEachHost(t *testing.T) {
	_, ts := serve(t)
	key, _ := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	for i := 0; i < 80; i++ {
		host := fmt.Sprintf("h%d.test:%d", i, 1000+i)
		req, err := http.NewRequest(http.MethodGet, ts.URL+"/"+tableserver.DevAccountName+"/Tables", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set(wire.HeaderAccept, "application/json;odata=minimalmetadata")
		wire.SignRequest(req, wire.SharedKeyLite, tableserver.DevAccountName, key, time.Now())
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		want := `"odata.metadata":"http://` + host + `/` + tableserver.DevAccountName + `/$metadata#Tables"`
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("host %s: %d %s, want %s", host, resp.StatusCode, body, want)
		}
	}
}
