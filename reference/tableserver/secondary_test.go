package tableserver_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// TestSecondaryRefusesWrites: the secondary location is read-only (E-secondary-read-only).
// Every write through <account>-secondary, path style and host style, is refused with 403
// AuthorizationFailure and changes nothing on the primary; reads are served.
func TestSecondaryRefusesWrites(t *testing.T) {
	key := []byte("another-account-key-of-32-bytes!")
	const keyB64 = "YW5vdGhlci1hY2NvdW50LWtleS1vZi0zMi1ieXRlcyE="
	_, ts := serve(t, tableserver.WithAccount("acct2", key, reference.New()))
	addr := ts.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	tr := rest.NewTransport()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	hc := rest.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second})
	connect := func(endpoint string) *rest.Backend {
		t.Helper()
		b, err := rest.New("AccountName=acct2;AccountKey="+keyB64+";TableEndpoint="+endpoint, hc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, style := range []struct{ name, primary, secondary string }{
		{"path style", ts.URL + "/acct2", ts.URL + "/acct2-secondary"},
		{"host style", "http://acct2.table.localhost:" + port, "http://acct2-secondary.table.localhost:" + port},
	} {
		t.Run(style.name, func(t *testing.T) {
			c := ctx(t)
			primary, secondary := connect(style.primary), connect(style.secondary)
			table := "sec" + strings.ReplaceAll(style.name, " ", "")
			if err := primary.CreateTable(c, table); err != nil {
				t.Fatal(err)
			}
			kept := api.NewEntity("p", "kept", map[string]api.Value{"V": api.String("old")})
			inserted, err := primary.InsertEntity(c, table, kept)
			if err != nil {
				t.Fatal(err)
			}
			changed := api.NewEntity("p", "kept", map[string]api.Value{"V": api.String("new")})
			writes := []struct {
				name string
				do   func() error
			}{
				{"create table", func() error { return secondary.CreateTable(c, table+"x") }},
				{"delete table", func() error { return secondary.DeleteTable(c, table) }},
				{"insert", func() error { _, err := secondary.InsertEntity(c, table, api.NewEntity("p", "new", nil)); return err }},
				{"update", func() error { _, err := secondary.UpdateEntity(c, table, changed, api.Replace, "*"); return err }},
				{"upsert", func() error { _, err := secondary.UpdateEntity(c, table, changed, api.Replace, ""); return err }},
				{"merge", func() error { _, err := secondary.UpdateEntity(c, table, changed, api.Merge, "*"); return err }},
				{"insert or merge", func() error { _, err := secondary.UpdateEntity(c, table, changed, api.Merge, ""); return err }},
				{"delete", func() error { return secondary.DeleteEntity(c, table, "p", "kept", "*") }},
				{"batch", func() error {
					_, err := secondary.SubmitBatch(c, table, []api.BatchOp{{Kind: api.BatchInsert, Entity: api.NewEntity("p", "batched", nil)}})
					return err
				}},
			}
			for _, w := range writes {
				wantErr(t, w.do(), http.StatusForbidden, "AuthorizationFailure")
			}
			// Set Table ACL and Set Table Service Properties, XML resources.
			for _, path := range []string{"/" + table + "?comp=acl", "/?restype=service&comp=properties"} {
				body := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
				if strings.Contains(path, "properties") {
					body = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
				}
				req, err := secondary.NewRequest(c, http.MethodPut, strings.TrimPrefix(path, "/"), []byte(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/xml")
				resp, err := secondary.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(got), "<m:code>AuthorizationFailure</m:code>") {
					t.Errorf("PUT %s on the secondary: %d %s", path, resp.StatusCode, got)
				}
			}
			// Nothing changed on the primary, and the secondary serves reads.
			tables, err := primary.QueryTables(c, api.TableQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if list := "," + strings.Join(tables.Tables, ",") + ","; !strings.Contains(list, ","+table+",") || strings.Contains(list, ","+table+"x,") {
				t.Errorf("the primary's tables after writes through the secondary: %v", tables.Tables)
			}
			page, err := primary.QueryEntities(c, table, api.Query{})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entities) != 1 || page.Entities[0].ETag != inserted.ETag || page.Entities[0].Properties["V"] != api.String("old") {
				t.Errorf("the primary's entities after writes through the secondary: %+v", page.Entities)
			}
			if _, err := secondary.GetEntity(c, table, "p", "kept", nil); err != nil {
				t.Errorf("a read through the secondary: %v", err)
			}
			req, _ := secondary.NewRequest(c, http.MethodGet, table+"?comp=acl", nil)
			req.Header.Set("Accept", "application/xml")
			resp, err := primary.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			acl, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if strings.Contains(string(acl), "readers") {
				t.Errorf("Set Table ACL through the secondary was applied: %s", acl)
			}
		})
	}
}
