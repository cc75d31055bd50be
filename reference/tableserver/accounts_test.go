package tableserver_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
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
	"github.com/tableconform/conform/suites/driver/rest"
)

// TestAccountsAreSeparateNamespaces: two accounts on one server see only their own tables,
// entities and table ACLs, as on Azure (E-account-namespace).
func TestAccountsAreSeparateNamespaces(t *testing.T) {
	key := []byte("another-account-key-of-32-bytes!")
	srv := tableserver.New(reference.New(reference.WithDeleteHold(0)),
		tableserver.WithAccount("second", key, reference.New(reference.WithDeleteHold(0))))
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dev := client(t, ts)
	second, err := rest.New("DefaultEndpointsProtocol=http;AccountName=second;AccountKey=" +
		base64.StdEncoding.EncodeToString(key) + ";TableEndpoint=" + ts.URL + "/second")
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	if err := dev.CreateTable(c, "shared"); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.InsertEntity(c, "shared", api.NewEntity("p", "dev", nil)); err != nil {
		t.Fatal(err)
	}
	if status, _ := aclCall(t, dev, "PUT", "shared", `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>devpolicy</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`); status != 204 {
		t.Fatalf("Set Table ACL: %d", status)
	}

	page, err := second.QueryTables(c, api.TableQuery{})
	if err != nil || len(page.Tables) != 0 {
		t.Fatalf("the second account lists %v, %v; want no table", page.Tables, err)
	}
	_, err = second.GetEntity(c, "shared", "p", "dev", nil)
	var se *spec.Error
	if !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("the dev account's entity read through the second account: %v", err)
	}
	if err := second.CreateTable(c, "shared"); err != nil {
		t.Fatalf("the second account cannot create a table the dev account has: %v", err)
	}
	if _, err := second.InsertEntity(c, "shared", api.NewEntity("p", "second", nil)); err != nil {
		t.Fatal(err)
	}
	if _, acl := aclCall(t, second, "GET", "shared", ""); strings.Contains(acl, "devpolicy") {
		t.Errorf("the second account's new table has the dev account's policy: %s", acl)
	}
	for b, want := range map[*rest.Backend]string{dev: "dev", second: "second"} {
		got, err := b.QueryEntities(c, "shared", api.Query{})
		if err != nil || len(got.Entities) != 1 || got.Entities[0].RowKey != want {
			t.Errorf("account of %q holds %v, %v", want, got.Entities, err)
		}
	}
	if err := second.DeleteTable(c, "shared"); err != nil {
		t.Fatal(err)
	}
	if _, acl := aclCall(t, dev, "GET", "shared", ""); !strings.Contains(acl, "devpolicy") {
		t.Errorf("deleting the second account's table changed the dev account's ACL: %s", acl)
	}
}

// aclCall gets or sets table's ACL through b and returns the status and body.
func aclCall(t *testing.T, b *rest.Backend, method, table, body string) (int, string) {
	t.Helper()
	var data []byte
	if body != "" {
		data = []byte(body)
	}
	req, err := b.NewRequest(ctx(t), method, table+"?comp=acl", data)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestHostStyleAsProductionURLs: the account named by the Host, as production URLs name it
// (`devstoreaccount1.table.core.windows.net`, path `/Tables`), reaches the same tables as the
// path-style URL (`127.0.0.1:port/devstoreaccount1/Tables`), and its answers name the
// host-style URLs.
func TestHostStyleAsProductionURLs(t *testing.T) {
	_, ts := serve(t)
	addr := ts.Listener.Addr().String()
	tr := rest.NewTransport()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	hostStyle, err := rest.New(devConnectionString("http://"+tableserver.DevAccountName+".table.core.windows.net"),
		rest.WithHTTPClient(&http.Client{Transport: tr, Timeout: 10 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	pathStyle := client(t, ts)
	c := ctx(t)
	if err := hostStyle.CreateTable(c, "hoststyle"); err != nil {
		t.Fatal(err)
	}
	if _, err := hostStyle.InsertEntity(c, "hoststyle", api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})); err != nil {
		t.Fatal(err)
	}
	if got, err := pathStyle.GetEntity(c, "hoststyle", "p", "r", nil); err != nil || got.Properties["V"] != api.Int32(1) {
		t.Fatalf("the path-style URL reads %v, %v", got, err)
	}
	req, err := hostStyle.NewRequest(c, "GET", "hoststyle()", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=fullmetadata")
	resp, err := hostStyle.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"odata.metadata":"http://devstoreaccount1.table.core.windows.net/$metadata#hoststyle"`) ||
		!strings.Contains(string(body), `"odata.id":"http://devstoreaccount1.table.core.windows.net/hoststyle(PartitionKey='p',RowKey='r')"`) {
		t.Fatalf("host-style query answered %d %s", resp.StatusCode, body)
	}
}
