package tableserver_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver/rest"
)

// Table names through the server, under both flavours: one table whatever the letter case
// on Storage; on Cosmos DB for Table, case-sensitive names (E-cosmos-documented), so that
// the model, a transaction's parts and a service SAS all tell CaseTbl from casetbl.
func TestTableNameCaseByFlavour(t *testing.T) {
	for _, c := range []struct {
		flavour   string
		start     func(t *testing.T) (*rest.Backend, *httptest.Server)
		sensitive bool
	}{
		{flavour: "storage", start: func(t *testing.T) (*rest.Backend, *httptest.Server) {
			_, ts := serve(t)
			return client(t, ts), ts
		}},
		{flavour: "cosmos", start: func(t *testing.T) (*rest.Backend, *httptest.Server) { return serveCosmos(t) }, sensitive: true},
	} {
		t.Run(c.flavour, func(t *testing.T) {
			b, ts := c.start(t)
			cx := ctx(t)
			if err := b.CreateTable(cx, "CaseTbl"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.InsertEntity(cx, "CaseTbl", api.NewEntity("p", "r", nil)); err != nil {
				t.Fatal(err)
			}
			err := b.CreateTable(cx, "casetbl")
			want := []string{"CaseTbl"}
			if c.sensitive {
				if err != nil {
					t.Fatalf("create casetbl next to CaseTbl: %v", err)
				}
				want = append(want, "casetbl")
			} else {
				wantErr(t, err, http.StatusConflict, "TableAlreadyExists")
			}
			page, err := b.QueryTables(cx, api.TableQuery{})
			if err != nil || !slices.Equal(page.Tables, want) {
				t.Fatalf("listed %v %v, want %v", page.Tables, err, want)
			}

			// A transaction whose parts spell the name two ways acts on one table (Storage)
			// or is refused as spanning two tables (Cosmos).
			endpoint := b.Info().Endpoint
			ct, body := wire.EncodeBatchRequest("batch_b", "changeset_c", wire.BatchRequest{Changesets: [][]wire.RequestPart{{
				{Method: "POST", URL: endpoint + "/CaseTbl", Header: wire.Fields{{Name: "Content-Type", Value: "application/json"}}, Body: []byte(`{"PartitionKey":"p","RowKey":"r1"}`)},
				{Method: "POST", URL: endpoint + "/casetbl", Header: wire.Fields{{Name: "Content-Type", Value: "application/json"}}, Body: []byte(`{"PartitionKey":"p","RowKey":"r2"}`)},
			}}})
			a := rawSend(t, b, "POST", "$batch", body, map[string]string{"Content-Type": ct})
			refused := a.status >= 400 || strings.Contains(a.body, "InvalidInput")
			if refused != c.sensitive {
				t.Errorf("a transaction over CaseTbl and casetbl: %d %s", a.status, a.body)
			}

			// A service SAS for CaseTbl reads CaseTbl. Its signature covers the lower-case name,
			// so it grants casetbl too: the same table on Storage, on Cosmos the other table,
			// which lacks the entity.
			key, _ := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
			now := time.Now().UTC()
			sas, err := wire.SAS{Table: "CaseTbl", Permissions: "r", Start: now.Add(-time.Hour), Expiry: now.Add(time.Hour)}.Encode(tableserver.DevAccountName, key)
			if err != nil {
				t.Fatal(err)
			}
			read := func(table string) int {
				req, err := http.NewRequestWithContext(cx, http.MethodGet, ts.URL+"/"+tableserver.DevAccountName+"/"+table+"(PartitionKey='p',RowKey='r')?"+sas.Encode(), nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("x-ms-version", "2019-02-02")
				req.Header.Set("Accept", "application/json;odata=minimalmetadata")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				return resp.StatusCode
			}
			if got := read("CaseTbl"); got != http.StatusOK {
				t.Errorf("SAS read of CaseTbl: %d", got)
			}
			wantOther := http.StatusOK
			if c.sensitive {
				wantOther = http.StatusNotFound
			}
			if got := read("casetbl"); got != wantOther {
				t.Errorf("SAS for CaseTbl reading casetbl: %d, want %d", got, wantOther)
			}
		})
	}
}
