package replay

import (
	"net/http"
	"strings"
	"testing"
)

// TestCompareHeaders checks each header a client reads: a difference is reported, and what
// names only one write (an ETag's time) or that no SDK reads (Location, the streaming and
// charset parameters) is not.
func TestCompareHeaders(t *testing.T) {
	recorded := http.Header{
		"Etag":               {`W/"datetime'2021-02-01T20%3A58%3A54.9664808Z'"`},
		"Location":           {"https://account.table.core.windows.net/t(PartitionKey='p',RowKey='r')"},
		"Preference-Applied": {"return-content"},
		"Content-Type":       {"application/json;odata=minimalmetadata;streaming=true;charset=utf-8"},
	}
	same := http.Header{
		"Etag":               {`W/"datetime'2026-11-26T10%3A00%3A00.0000001Z'"`},
		"Location":           {"http://127.0.0.1:10002/devstoreaccount1/cf1(PartitionKey='p',RowKey='r')"},
		"Preference-Applied": {"Return-Content"},
		"Content-Type":       {"application/json; odata=minimalmetadata"},
	}
	same.Del("Location")
	x := Exchange{Status: 201, ResponseHeader: recorded}
	if d := compareHeaders(x, answer{Status: 201, ResponseHeader: same}); len(d) != 0 {
		t.Errorf("equivalent headers differ: %v", d)
	}
	for name, change := range map[string]func(h http.Header){
		"header ETag":               func(h http.Header) { h.Del("Etag") },
		"header Preference-Applied": func(h http.Header) { h.Set("Preference-Applied", "return-no-content") },
		"Content-Type":              func(h http.Header) { h.Set("Content-Type", "application/json;odata=nometadata") },
	} {
		live := same.Clone()
		change(live)
		d := compareHeaders(x, answer{Status: 201, ResponseHeader: live})
		if len(d) != 1 || !strings.HasPrefix(d[0], name+":") {
			t.Errorf("%s changed: differences %v", name, d)
		}
	}
}

// Under the cosmos profile entities and tables are compared as sets: Cosmos DB promises no
// order (E-cosmos-order); the same keys in another order still disagree under storage.
func TestCosmosComparesWithoutOrder(t *testing.T) {
	ct := http.Header{"Content-Type": {"application/json;odata=minimalmetadata"}}
	recorded := Exchange{Method: "GET", URI: "https://a.table.cosmos.azure.com/t()", Status: 200, ResponseHeader: ct,
		ResponseBody: []byte(`{"value":[{"PartitionKey":"p","RowKey":"2"},{"PartitionKey":"p","RowKey":"1"}]}`)}
	live := answer{Status: 200, ResponseHeader: ct, ResponseBody: []byte(`{"value":[{"PartitionKey":"p","RowKey":"1"},{"PartitionKey":"p","RowKey":"2"}]}`)}
	storage := &state{tables: map[string]string{}, back: map[string]string{}}
	if d := compare(storage, recorded, live); len(d) == 0 || !strings.Contains(strings.Join(d, ";"), "entity order") {
		t.Errorf("storage: %v", d)
	}
	cosmos := &state{tables: map[string]string{}, back: map[string]string{}, unordered: true}
	if d := compare(cosmos, recorded, live); len(d) != 0 {
		t.Errorf("cosmos: %v", d)
	}
	if reason := skipExchange(Exchange{Method: "GET", URI: "https://a.table.cosmos.azure.com/Tables", Status: 429}); !strings.Contains(reason, "429") {
		t.Errorf("a recorded 429 is replayed: %q", reason)
	}
}
