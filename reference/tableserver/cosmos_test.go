package tableserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// serveCosmos starts the Cosmos flavour over a fresh reference with Cosmos's limits.
func serveCosmos(t *testing.T, opts ...tableserver.CosmosOption) (*rest.Backend, *httptest.Server) {
	t.Helper()
	model := reference.New(append(reference.CosmosOptions(), reference.WithDeleteHold(0))...)
	srv := tableserver.New(model)
	ts := httptest.NewServer(tableserver.NewCosmos(srv, opts...))
	t.Cleanup(func() {
		ts.Close()
		if n := srv.Recovered(); n != 0 {
			t.Errorf("the server recovered from %d panics", n)
		}
	})
	return client(t, ts), ts
}

type rawAnswer struct {
	status int
	header http.Header
	body   string
}

func rawSend(t *testing.T, b *rest.Backend, method, path string, body []byte, headers map[string]string) rawAnswer {
	t.Helper()
	req, err := b.NewRequest(ctx(t), method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return rawAnswer{resp.StatusCode, resp.Header, string(got)}
}

// The header set of recorded Cosmos answers (E-cosmos-headers).
func TestCosmosHeaders(t *testing.T) {
	b, _ := serveCosmos(t)
	created := rawSend(t, b, "POST", "Tables", []byte(`{"TableName":"cosmosheaders"}`), map[string]string{"Content-Type": "application/json", "x-ms-client-request-id": "client-1"})
	if created.status != 201 {
		t.Fatalf("create table: %d %s", created.status, created.body)
	}
	for _, h := range []string{"X-Ms-Version", "X-Ms-Client-Request-Id", "Server", "Cache-Control", "X-Content-Type-Options", "Dataserviceid"} {
		if v := created.header.Get(h); v != "" {
			t.Errorf("%s: %q, Cosmos sends none", h, v)
		}
	}
	// The era the flavour models: x-ms-request-id on every answer (2021 to April 2022),
	// the id an error's RequestID line names.
	if created.header.Get("X-Ms-Request-Id") == "" {
		t.Errorf("Create Table without x-ms-request-id: %v", created.header)
	}
	again := rawSend(t, b, "POST", "Tables", []byte(`{"TableName":"cosmosheaders"}`), map[string]string{"Content-Type": "application/json"})
	if id := again.header.Get("X-Ms-Request-Id"); id == "" || !strings.Contains(again.body, `\nRequestID:`+id+`\n`) {
		t.Errorf("an error's x-ms-request-id %q is not its RequestID: %s", id, again.body)
	}
	if ct := created.header.Get("Content-Type"); ct != "application/json; odata=minimalmetadata" {
		t.Errorf("Content-Type %q", ct)
	}
	if !strings.HasPrefix(created.header.Get("ETag"), `W/"datetime'`) {
		t.Errorf("Create Table has no ETag: %v", created.header)
	}
	deleted := rawSend(t, b, "DELETE", "Tables('cosmosheaders')", nil, nil)
	if deleted.status != 204 || deleted.header.Get("Content-Type") != "application/json" {
		t.Errorf("delete table: %d %v", deleted.status, deleted.header)
	}
}

// Table ACL, service properties and stats are not served; a SAS with a key range is
// refused (E-cosmos-unsupported, E-cosmos-sas-range).
func TestCosmosRefusesWhatItDoesNotServe(t *testing.T) {
	b, _ := serveCosmos(t)
	if err := b.CreateTable(ctx(t), "cosmosacl"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		headers      map[string]string
		status       int
		code         string
	}{
		{"GET", "cosmosacl?comp=acl", map[string]string{"Accept": "application/xml"}, 501, "NotImplemented"},
		{"PUT", "cosmosacl?comp=acl", nil, 501, "NotImplemented"},
		{"GET", "?restype=service&comp=properties", nil, 501, "NotImplemented"},
		{"GET", "?restype=service&comp=stats", nil, 501, "NotImplemented"},
		{"GET", "cosmosacl()?spk=a&epk=b", nil, 405, "MethodNotAllowed"},
	} {
		a := rawSend(t, b, c.method, c.path, nil, c.headers)
		if a.status != c.status || !strings.Contains(a.body, `"code":"`+c.code+`"`) || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %s %s", c.method, c.path, a.status, a.header.Get("Content-Type"), a.body)
		}
		if !strings.Contains(a.body, `"lang":"en-us"`) || !strings.Contains(a.body, `\nRequestID:`) {
			t.Errorf("%s %s: not Cosmos's error body: %s", c.method, c.path, a.body)
		}
	}
}

// Empty keys are refused with 400 PropertiesNeedValue in full metadata; 255 properties and a
// name of 1,000 characters (256 were recorded) are accepted; of names differing only in case
// the first is kept.
func TestCosmosEntityAnswers(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "cosmosentities"); err != nil {
		t.Fatal(err)
	}
	a := rawSend(t, b, "POST", "cosmosentities", []byte(`{"PartitionKey":"","RowKey":"r"}`), map[string]string{"Content-Type": "application/json"})
	if a.status != 400 || !strings.Contains(a.body, "PropertiesNeedValue") || a.header.Get("Content-Type") != "application/json; odata=fullmetadata" {
		t.Errorf("empty PartitionKey: %d %s %s", a.status, a.header.Get("Content-Type"), a.body)
	}
	wide := map[string]api.Value{strings.Repeat("n", 1000): api.Int32(1)}
	for i := range 254 {
		wide[fmt.Sprintf("P%03d", i)] = api.Int32(int32(i))
	}
	if _, err := b.InsertEntity(c, "cosmosentities", api.NewEntity("p", "wide", wide)); err != nil {
		t.Errorf("255 properties, one named with 1,000 characters: %v", err)
	}
	a = rawSend(t, b, "POST", "cosmosentities", []byte(`{"PartitionKey":"p","RowKey":"case","etag":"kept","Etag":"dropped","Birthday":"a","birthday":"b"}`), map[string]string{"Content-Type": "application/json"})
	if a.status != 201 {
		t.Fatalf("insert: %d %s", a.status, a.body)
	}
	got, err := b.GetEntity(c, "cosmosentities", "p", "case", nil)
	if err != nil || got.Properties["etag"] != api.String("kept") || got.Properties["Birthday"] != api.String("a") || got.Properties["birthday"] != api.String("b") || len(got.Properties) != 3 {
		t.Errorf("names differing only in case (Etag dropped, Birthday and birthday kept): %v %v", got.Properties, err)
	}
	if !strings.HasSuffix(strings.TrimSuffix(a.body, "}"), `"Timestamp":"`+timestampOf(t, a.body)+`"`) {
		t.Errorf("Timestamp is not last: %s", a.body)
	}
}

func timestampOf(t *testing.T, body string) string {
	var e struct{ Timestamp string }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Timestamp) != len("2021-12-09T02:24:46.3175687Z") {
		t.Errorf("Timestamp %q has not seven fractional digits", e.Timestamp)
	}
	return e.Timestamp
}

// DateTime values carry seven fractional digits; $format does not override Accept
// (E-cosmos-shapes, E-cosmos-format).
func TestCosmosDateTimesAndFormat(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "cosmosdates"); err != nil {
		t.Fatal(err)
	}
	a := rawSend(t, b, "POST", "cosmosdates", []byte(`{"PartitionKey":"p","RowKey":"r","D":"2021-07-13T00:00:00Z","D@odata.type":"Edm.DateTime"}`), map[string]string{"Content-Type": "application/json"})
	if !strings.Contains(a.body, `"D":"2021-07-13T00:00:00.0000000Z"`) {
		t.Errorf("DateTime: %s", a.body)
	}
	q := rawSend(t, b, "GET", "cosmosdates()?$format=application%2Fjson%3Bodata%3Dfullmetadata", nil, map[string]string{"Accept": "application/json;odata=nometadata"})
	if strings.Contains(q.body, "odata.") || !strings.Contains(q.header.Get("Content-Type"), "nometadata") {
		t.Errorf("$format won over Accept: %s %s", q.header.Get("Content-Type"), q.body)
	}
}

// Continuation tokens are Cosmos's JSON, NextRowKey NA, and lead on (E-cosmos-continuation).
func TestCosmosContinuation(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "cosmospages"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := b.InsertEntity(c, "cosmospages", api.NewEntity("p", fmt.Sprint(i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	seen, pages := 0, 0
	next := ""
	for {
		path := "cosmospages()?$top=2"
		if next != "" {
			path += "&NextPartitionKey=" + strings.ReplaceAll(strings.ReplaceAll(next, `"`, "%22"), " ", "%20") + "&NextRowKey=NA"
		}
		a := rawSend(t, b, "GET", path, nil, nil)
		var page struct{ Value []json.RawMessage }
		if err := json.Unmarshal([]byte(a.body), &page); err != nil {
			t.Fatalf("%s: %v", a.body, err)
		}
		seen += len(page.Value)
		pages++
		next = a.header.Get("X-Ms-Continuation-Nextpartitionkey")
		if next == "" {
			break
		}
		if rk := a.header.Get("X-Ms-Continuation-Nextrowkey"); rk != "NA" {
			t.Errorf("NextRowKey %q", rk)
		}
		want := "{"
		if pages > 1 {
			want = "["
		}
		if !strings.HasPrefix(next, want) {
			t.Errorf("page %d: NextPartitionKey %q is not a JSON %s", pages, next, want)
		}
		if pages > 5 {
			t.Fatal("the continuation does not end")
		}
	}
	if seen != 5 || pages != 3 {
		t.Errorf("%d entities in %d pages", seen, pages)
	}
}

// Transactions: a missing table is 404 ResourceNotFound without an index; part headers end
// in LF; the same row twice is a top-level 400 InvalidDuplicateRow, as reported from 2022
// (recorded in 2020 as a top-level 400 InvalidInput: E-cosmos-batch).
func TestCosmosBatches(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	_, err := b.SubmitBatch(c, "cosmosmissing", []api.BatchOp{{Kind: api.BatchInsert, Entity: api.NewEntity("p", "r", nil)}})
	wantErr(t, err, 404, "ResourceNotFound")
	if err := b.CreateTable(c, "cosmosbatch"); err != nil {
		t.Fatal(err)
	}
	_, err = b.SubmitBatch(c, "cosmosbatch", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "r", nil)},
		{Kind: api.BatchInsertOrReplace, Entity: api.NewEntity("p", "r", nil)},
	})
	wantErr(t, err, 400, "InvalidDuplicateRow")
	rec := &recordingTransport{next: http.DefaultTransport}
	rb := clientWith(t, b, rec)
	if _, err := rb.SubmitBatch(c, "cosmosbatch", []api.BatchOp{{Kind: api.BatchInsert, Entity: api.NewEntity("p", "x", nil)}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rec.last, []byte("Content-Type: application/http\nContent-Transfer-Encoding: binary\n\nHTTP/1.1 204 No Content\r\n")) {
		t.Errorf("part headers do not end in LF only:\n%q", rec.last)
	}
	if !bytes.Contains(rec.last, []byte("Content-ID: 1\r\n")) || bytes.Contains(rec.last, []byte("DataServiceId")) || bytes.Contains(rec.last, []byte("X-Content-Type-Options")) {
		t.Errorf("a success part is not Cosmos's (Content-ID, no Storage headers):\n%q", rec.last)
	}
}

// Past its request-unit budget the flavour answers 429 as recorded: TooManyRequests with
// "Request rate is large" and an ActivityId line, and no retry-after header
// (E-cosmos-throttling).
func TestCosmosRequestUnitBudget(t *testing.T) {
	b, _ := serveCosmos(t, tableserver.WithRequestUnitsPerSecond(3))
	throttled := 0
	for range 6 {
		a := rawSend(t, b, "GET", "Tables", nil, nil)
		if a.status == 429 {
			throttled++
			if !strings.Contains(a.body, `"code":"TooManyRequests"`) || !strings.Contains(a.body, `Message: {\"Errors\":[\"Request rate is large.`) || !strings.Contains(a.body, `Learn more: http://aka.ms/cosmosdb-error-429\"]}\r\nActivityId: `) || !strings.Contains(a.body, `, Request URI: /apps/`) {
				t.Errorf("429 not as recorded: %s", a.body)
			}
			for _, h := range []string{"X-Ms-Retry-After-Ms", "Retry-After"} {
				if a.header.Get(h) != "" {
					t.Errorf("429 with %s, which no recorded answer has: %v", h, a.header)
				}
			}
		}
	}
	if throttled < 3 {
		t.Errorf("%d of 6 requests throttled with a budget of 3 a second", throttled)
	}
}

type recordingTransport struct {
	next http.RoundTripper
	last []byte
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		r.last, _ = io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(r.last))
	}
	return resp, err
}

func clientWith(t *testing.T, b *rest.Backend, tr http.RoundTripper) *rest.Backend {
	t.Helper()
	nb, err := rest.New(devConnectionString(b.Info().Endpoint), rest.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	return nb
}

// An unfiltered table page that ends exactly at $top with no table left carries no
// NextTableName (recorded); a filtered one carries one, and the page it leads to is empty
// (reported; E-cosmos-order).
func TestCosmosTablePageAtTop(t *testing.T) {
	b, _ := serveCosmos(t)
	for _, n := range []string{"cosmostopa", "cosmostopb"} {
		if err := b.CreateTable(ctx(t), n); err != nil {
			t.Fatal(err)
		}
	}
	unfiltered := rawSend(t, b, "GET", "Tables?$top=2", nil, nil)
	if next := unfiltered.header.Get("X-Ms-Continuation-Nexttablename"); unfiltered.status != 200 || next != "" {
		t.Errorf("an unfiltered page of the last $top tables: %d NextTableName %q", unfiltered.status, next)
	}
	first := rawSend(t, b, "GET", "Tables?$top=2&$filter=TableName%20ge%20'cosmostop'", nil, nil)
	next := first.header.Get("X-Ms-Continuation-Nexttablename")
	if first.status != 200 || next == "" {
		t.Fatalf("a page of exactly $top tables without NextTableName: %d %v", first.status, first.header)
	}
	last := rawSend(t, b, "GET", "Tables?$top=2&$filter=TableName%20ge%20'cosmostop'&NextTableName="+next, nil, nil)
	if last.status != 200 || !strings.Contains(last.body, `"value":[]`) || last.header.Get("X-Ms-Continuation-Nexttablename") != "" {
		t.Errorf("the page after it: %d %v %s", last.status, last.header, last.body)
	}
	var page struct{ Value []json.RawMessage }
	if err := json.Unmarshal([]byte(rawSend(t, b, "GET", "Tables?$top=3", nil, nil).body), &page); err != nil || len(page.Value) != 2 {
		t.Errorf("$top above the count: %v %d", err, len(page.Value))
	}
}

// Table names are case-sensitive (E-cosmos-documented): a name that differs from a table's
// only in case names another table, and through it the table is not found: entity
// operations answer as on any missing table, Delete Table 404 ResourceNotFound.
func TestCosmosTableNamesAreCaseSensitive(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "CosmosCase"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.InsertEntity(c, "CosmosCase", api.NewEntity("p", "r", nil)); err != nil {
		t.Fatalf("insert through the created name: %v", err)
	}
	_, err := b.InsertEntity(c, "cosmoscase", api.NewEntity("p", "r2", nil))
	wantErr(t, err, 404, "TableNotFound")
	_, err = b.GetEntity(c, "COSMOSCASE", "p", "r", nil)
	wantErr(t, err, 404, "TableNotFound")
	_, err = b.GetEntity(c, "CosmosMissing", "p", "r", nil)
	wantErr(t, err, 404, "TableNotFound")
	wantErr(t, b.DeleteTable(c, "cosmoscase"), 404, "ResourceNotFound")

	if err := b.CreateTable(c, "cosmoscase"); err != nil {
		t.Fatalf("create a name that differs only in case: %v", err)
	}
	if _, err := b.InsertEntity(c, "cosmoscase", api.NewEntity("p", "r", nil)); err != nil {
		t.Fatalf("the same keys in the other table: %v", err)
	}
	page, err := b.QueryTables(c, api.TableQuery{})
	if err != nil || !slices.Equal(page.Tables, []string{"CosmosCase", "cosmoscase"}) {
		t.Fatalf("listed %v %v", page.Tables, err)
	}
	if err := b.DeleteTable(c, "CosmosCase"); err != nil {
		t.Errorf("delete through the created name: %v", err)
	}
	if _, err := b.GetEntity(c, "cosmoscase", "p", "r", nil); err != nil {
		t.Errorf("cosmoscase after CosmosCase was deleted: %v", err)
	}
}

// Malformed requests get a clear 4xx from the Cosmos flavour too, never a 5xx or a panic.
func TestCosmosMalformedRequests(t *testing.T) {
	b, _ := serveCosmos(t)
	if err := b.CreateTable(ctx(t), "cosmosbad"); err != nil {
		t.Fatal(err)
	}
	json := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		method, path, body string
	}{
		{"POST", "cosmosbad", `{`},
		{"POST", "cosmosbad", `[]`},
		{"POST", "cosmosbad", `{"PartitionKey":1,"RowKey":"r"}`},
		{"POST", "cosmosbad", `{"PartitionKey":"p","RowKey":"r","a":1,"A":2,"a@odata.type":"Edm.Int64"}`},
		{"PUT", "cosmosbad(PartitionKey='',RowKey='r')", `{}`},
		{"GET", "cosmosbad()?NextPartitionKey=%5B&NextRowKey=NA", ""},
		{"GET", "cosmosbad()?NextPartitionKey=%7B%22token%22%3A1%7D&NextRowKey=NA", ""},
		{"GET", "cosmosbad()?NextPartitionKey=%5B%7B%7D%2C%7B%7D%5D&NextRowKey=NA", ""},
		{"GET", "Tables?$top=abc", ""},
		{"GET", "Tables?NextTableName=cosmos-end-of-tables&$top=1", ""},
		{"POST", "$batch", "--x\r\n"},
		{"GET", "COSMOSBAD(PartitionKey='p',RowKey='r')", ""},
	} {
		a := rawSend(t, b, c.method, c.path, []byte(c.body), json)
		if a.status >= 500 {
			t.Errorf("%s %s %q: %d %s", c.method, c.path, c.body, a.status, a.body)
		}
	}
}
