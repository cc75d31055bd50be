package tableserver_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// queryAll follows a query's pages on the Cosmos flavour and returns the values of field
// of every item, in the order they came.
func queryAll(t *testing.T, b *rest.Backend, path, field, continuation string, headers map[string]string) (values []string, pages int) {
	t.Helper()
	next := ""
	for {
		p := path
		if next != "" {
			p += "&Next" + continuation + "=" + url.QueryEscape(next)
			if continuation == "PartitionKey" {
				p += "&NextRowKey=NA"
			}
		}
		a := rawSend(t, b, "GET", p, nil, headers)
		if a.status != 200 {
			t.Fatalf("%s: %d %s", p, a.status, a.body)
		}
		var page struct{ Value []map[string]any }
		if err := json.Unmarshal([]byte(a.body), &page); err != nil {
			t.Fatalf("%s: %v", a.body, err)
		}
		for _, v := range page.Value {
			values = append(values, fmt.Sprint(v[field]))
		}
		pages++
		next = a.header.Get("X-Ms-Continuation-Next" + continuation)
		if next == "" || pages > 20 {
			return values, pages
		}
	}
}

// Entity queries list a partition's entities in the order they were inserted, as every
// recorded Cosmos query does (RowKeys 1 to 10 come back 1, 2, ..., 10, not 1, 10, 2, ...),
// on one page and across pages, also when $select leaves the keys out (E-cosmos-order).
func TestCosmosEntitiesInInsertionOrder(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "cosmosinsertion"); err != nil {
		t.Fatal(err)
	}
	var inserted []string
	for i := 1; i <= 10; i++ {
		rk := fmt.Sprint(i)
		inserted = append(inserted, rk)
		if _, err := b.InsertEntity(c, "cosmosinsertion", api.NewEntity("p", rk, map[string]api.Value{"N": api.Int32(int32(i))})); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := queryAll(t, b, "cosmosinsertion()?$filter=PartitionKey%20eq%20'p'", "RowKey", "PartitionKey", nil)
	if !slices.Equal(got, inserted) {
		t.Errorf("one page: %v, want the insertion order %v", got, inserted)
	}
	got, pages := queryAll(t, b, "cosmosinsertion()?$top=3", "RowKey", "PartitionKey", nil)
	if !slices.Equal(got, inserted) || pages != 4 {
		t.Errorf("pages of 3: %v in %d pages, want %v in 4", got, pages, inserted)
	}
	got, _ = queryAll(t, b, "cosmosinsertion()?$top=4&$select=N", "N", "PartitionKey", nil)
	if want := inserted; !slices.Equal(got, want) {
		t.Errorf("$select=N: %v, want %v", got, want)
	}
	a := rawSend(t, b, "GET", "cosmosinsertion()?$top=1&$select=N", nil, nil)
	if strings.Contains(a.body, "RowKey") || strings.Contains(a.body, "Timestamp") {
		t.Errorf("$select=N answers properties it did not select: %s", a.body)
	}
}

// Query Tables lists tables in an order that is not their names' (E-cosmos-order), the same
// on every listing and across pages.
func TestCosmosTablesNotInNameOrder(t *testing.T) {
	b, _ := serveCosmos(t)
	var names []string
	for i := range 8 {
		n := fmt.Sprintf("cosmoslisted%d", i)
		names = append(names, n)
		if err := b.CreateTable(ctx(t), n); err != nil {
			t.Fatal(err)
		}
	}
	whole, _ := queryAll(t, b, "Tables?$filter=TableName%20ge%20'cosmoslisted'", "TableName", "TableName", nil)
	if !slices.Equal(slices.Sorted(slices.Values(whole)), names) {
		t.Fatalf("listed %v, want the tables %v", whole, names)
	}
	if slices.Equal(whole, names) {
		t.Errorf("the tables are listed in name (and creation) order: %v", whole)
	}
	paged, pages := queryAll(t, b, "Tables?$top=3", "TableName", "TableName", nil)
	if !slices.Equal(paged, whole) || pages != 3 {
		t.Errorf("pages of 3: %v in %d pages, want %v in 3", paged, pages, whole)
	}
}

// DateTime values keep seven fractional digits at odata=nometadata too, without annotations
// (E-cosmos-shapes).
func TestCosmosDateTimeAtNoMetadata(t *testing.T) {
	b, _ := serveCosmos(t)
	if err := b.CreateTable(ctx(t), "cosmosnometa"); err != nil {
		t.Fatal(err)
	}
	a := rawSend(t, b, "POST", "cosmosnometa", []byte(`{"PartitionKey":"p","RowKey":"r","D":"1973-10-04T00:00:00Z","D@odata.type":"Edm.DateTime","S":"1973-10-04T00:00:00Z"}`), map[string]string{"Content-Type": "application/json"})
	if a.status != 201 {
		t.Fatalf("insert: %d %s", a.status, a.body)
	}
	nometadata := map[string]string{"Accept": "application/json;odata=nometadata"}
	for _, path := range []string{"cosmosnometa()", "cosmosnometa(PartitionKey='p',RowKey='r')"} {
		a := rawSend(t, b, "GET", path, nil, nometadata)
		if !strings.Contains(a.body, `"D":"1973-10-04T00:00:00.0000000Z"`) || !strings.Contains(a.body, `"S":"1973-10-04T00:00:00Z"`) {
			t.Errorf("%s: DateTime not in seven digits, or a String rewritten: %s", path, a.body)
		}
		if strings.Contains(a.body, "odata") || a.header.Get("Content-Type") != "application/json; odata=nometadata" {
			t.Errorf("%s: not odata=nometadata: %s %s", path, a.header.Get("Content-Type"), a.body)
		}
	}
}

// Error messages as recorded (E-cosmos-shapes): Cosmos's first lines, an ActivityId line
// where recorded, 501s in full metadata, and to a client that accepts XML no Storage tail.
func TestCosmosErrorTexts(t *testing.T) {
	b, _ := serveCosmos(t)
	c := ctx(t)
	if err := b.CreateTable(c, "cosmoserrors"); err != nil {
		t.Fatal(err)
	}
	jsonBody := map[string]string{"Content-Type": "application/json"}
	for _, x := range []struct {
		name, method, path, body string
		headers                  map[string]string
		status                   int
		first                    string
		activity                 bool
		contentType              string
	}{
		{"existing table", "POST", "Tables", `{"TableName":"cosmoserrors"}`, jsonBody, 409, "The specified table already exists.", false, "application/json; odata=minimalmetadata"},
		{"missing table, any answer accepted", "DELETE", "Tables('cosmosmissing')", "", map[string]string{"Accept": "*/*"}, 404, "The specified resource does not exist.", false, ""},
		{"ACL", "GET", "cosmoserrors?comp=acl", "", map[string]string{"Accept": "application/xml"}, 501, "The requested operation is not supported.", true, "application/json; odata=fullmetadata"},
		{"service properties", "PUT", "?restype=service&comp=properties", "<StorageServiceProperties/>", map[string]string{"Accept": "application/xml"}, 501, "The requested operation is not supported.", true, "application/json; odata=fullmetadata"},
		{"bad filter", "GET", "cosmoserrors()?$filter=PartitionKey%20eq", "", nil, 400, "Request url is invalid.", false, ""},
		{"empty key", "POST", "cosmoserrors", `{"PartitionKey":"","RowKey":"r"}`, jsonBody, 400, "PartitionKey/RowKey cannot be empty", true, "application/json; odata=fullmetadata"},
	} {
		a := rawSend(t, b, x.method, x.path, []byte(x.body), x.headers)
		var doc struct {
			Err struct {
				Message struct{ Value string } `json:"message"`
			} `json:"odata.error"`
		}
		if err := json.Unmarshal([]byte(a.body), &doc); err != nil || a.status != x.status {
			t.Errorf("%s: %d %s", x.name, a.status, a.body)
			continue
		}
		msg := doc.Err.Message.Value
		id := a.header.Get("X-Ms-Request-Id")
		want := x.first
		if x.activity {
			want += "\r\nActivityId: " + id + ", documentdb-dotnet-sdk/2.14.0 Host/64-bit MicrosoftWindowsNT/10.0.19041.0"
		}
		if want += "\nRequestID:" + id + "\n"; msg != want {
			t.Errorf("%s: message %q, want %q", x.name, msg, want)
		}
		if x.contentType != "" && a.header.Get("Content-Type") != x.contentType {
			t.Errorf("%s: Content-Type %q, want %q", x.name, a.header.Get("Content-Type"), x.contentType)
		}
	}
	_, err := b.SubmitBatch(c, "cosmoserrors", []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("p", "r", nil)},
		{Kind: api.BatchInsertOrReplace, Entity: api.NewEntity("p", "r", nil)},
	})
	if err == nil || !strings.Contains(err.Error(), "InvalidDuplicateRow (operation 1)") {
		t.Errorf("the same row twice: %v, want the operation's index 1 before the message", err)
	}
}

// Past the 255 custom properties its store holds, the flavour says that the limit is its own:
// Cosmos documents no practical limit and no recording shows it refusing a 256th
// (E-cosmos-property-limits).
func TestCosmosPropertyCapacityIsTheFlavours(t *testing.T) {
	b, _ := serveCosmos(t)
	if err := b.CreateTable(ctx(t), "cosmoswide"); err != nil {
		t.Fatal(err)
	}
	props := map[string]any{"PartitionKey": "p", "RowKey": "r"}
	for i := range 256 {
		props[fmt.Sprintf("P%03d", i)] = i
	}
	body, _ := json.Marshal(props)
	a := rawSend(t, b, "POST", "cosmoswide", body, map[string]string{"Content-Type": "application/json"})
	if a.status != 400 || !strings.Contains(a.body, "The Cosmos flavour of conform holds at most 255 custom properties.") {
		t.Errorf("a 256th property: %d %s", a.status, a.body)
	}
}

// Each account has its own request-unit budget: while one account spends all of its own,
// another account's requests are served.
func TestCosmosRequestUnitsPerAccount(t *testing.T) {
	key := []byte("another-account-key-of-32-bytes!")
	srv := tableserver.New(reference.New(reference.CosmosOptions()...),
		tableserver.WithAccount("second", key, reference.New(reference.CosmosOptions()...)))
	ts := httptest.NewServer(tableserver.NewCosmos(srv, tableserver.WithRequestUnitsPerSecond(5)))
	defer ts.Close()
	dev := client(t, ts)
	second, err := rest.New("DefaultEndpointsProtocol=http;AccountName=second;AccountKey=" +
		base64.StdEncoding.EncodeToString(key) + ";TableEndpoint=" + ts.URL + "/second")
	if err != nil {
		t.Fatal(err)
	}
	devThrottled := 0
	for range 20 {
		if rawSend(t, dev, "GET", "Tables", nil, nil).status == 429 {
			devThrottled++
		}
	}
	if devThrottled == 0 {
		t.Fatal("the development account was never throttled past its budget")
	}
	for i := range 2 {
		if a := rawSend(t, second, "GET", "Tables", nil, nil); a.status != 200 {
			t.Errorf("the second account's request %d, within its own budget: %d %s", i, a.status, a.body)
		}
	}
}
