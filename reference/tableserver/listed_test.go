package tableserver_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
)

// mappedOnly hides a backend's listing methods, so that the server takes the general
// path: entities in maps, rendered through wire.AppendEntity.
type mappedOnly struct{ api.Backend }

// TestListedAnswersMatchMapped holds the answers the server renders from listed entities
// (reference.Service's QueryEntitiesListed and GetEntityListed) to those of the general
// path, byte for byte, header for header: every EDM type, names and values that need
// escaping, the three metadata levels, $select, key-range and other filters, pages with
// continuations, missing entities and tables, in the Storage and Cosmos flavours.
func TestListedAnswersMatchMapped(t *testing.T) {
	for _, flavour := range []string{tableserver.FlavorStorage, tableserver.FlavorCosmos} {
		t.Run(flavour, func(t *testing.T) {
			clock := func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 891_234_500, time.UTC) }
			opts := []reference.Option{reference.WithClock(clock), reference.WithDeleteHold(0)}
			if flavour == tableserver.FlavorCosmos {
				opts = append(reference.CosmosOptions(), opts...)
			}
			model := reference.New(opts...)
			ctx := context.Background()
			if err := model.CreateTable(ctx, "tbl"); err != nil {
				t.Fatal(err)
			}
			for p := range 3 {
				for r := range 12 {
					props := map[string]api.Value{
						"s": api.String(fmt.Sprintf("value %d/%d with \"quotes\", \\, \n, é and \u2028", p, r)), "long": api.String(strings.Repeat("x", 100+r)),
						"i32": api.Int32(int32(r - 5)), "i64": api.Int64(math.MaxInt64 - int64(r)), "d": api.Double(float64(r) / 4), "whole": api.Double(float64(r)),
						"b": api.Bool(r%2 == 0), "bin": api.Binary([]byte{byte(r), 0, 255}), "g": api.Guid("C9DA6455-213D-42C9-9A79-3E9149A5783" + fmt.Sprint(r%10)),
						"dt": api.DateTime(time.Date(2000+r, 1, 2, 3, 4, 5, r*100, time.UTC)), "naïve": api.String("n"),
					}
					for k := range r % 4 {
						props[fmt.Sprintf("extra%d", k)] = api.Int32(int32(k))
					}
					if _, err := model.InsertEntity(ctx, "tbl", api.NewEntity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r), props)); err != nil {
						t.Fatal(err)
					}
				}
			}
			handler := func(b api.Backend) http.Handler {
				srv := tableserver.New(b, tableserver.WithAllowAnonymous(), tableserver.WithClock(clock))
				if flavour == tableserver.FlavorCosmos {
					return tableserver.NewCosmos(srv)
				}
				return srv
			}
			listed, mapped := handler(model), handler(mappedOnly{model})
			paths := []string{
				"tbl(PartitionKey='p1',RowKey='r03')", "tbl(PartitionKey='p1',RowKey='r03')?$select=s,i64,RowKey,missing",
				"tbl(PartitionKey='p1',RowKey='r03')?$select=*", "tbl(PartitionKey='p9',RowKey='r03')", "nope(PartitionKey='p1',RowKey='r03')",
				"tbl()", "tbl()?$filter=PartitionKey%20eq%20'p2'", "tbl()?$filter=PartitionKey%20eq%20'p2'&$top=5",
				"tbl()?$filter=PartitionKey%20eq%20'p2'&$top=5&NextPartitionKey=1!4!cDI-&NextRowKey=1!4!cjA1",
				"tbl()?$filter=PartitionKey%20ge%20'p1'&$top=7&$select=PartitionKey,dt,g,bin",
				"tbl()?$filter=i32%20gt%200", "tbl()?$filter=PartitionKey%20eq%20'none'", "tbl()?$top=0", "tbl()?$filter=bad%20filter",
				"nope()", "tbl()?$select=Timestamp,d,whole",
			}
			accepts := []string{"application/json;odata=nometadata", "application/json;odata=minimalmetadata", "application/json;odata=fullmetadata", ""}
			for _, path := range paths {
				for _, accept := range accepts {
					want := answer(listed, mapped, path, accept, false)
					got := answer(listed, mapped, path, accept, true)
					if got != want {
						t.Fatalf("GET %s (Accept %q):\nlisted:\n%s\nmapped:\n%s", path, accept, got, want)
					}
				}
			}
		})
	}
}

var requestIDInBody = regexp.MustCompile(`Request(ID|Id):[0-9a-f-]{36}`)

// answer serves GET path with Accept accept through the listed or the mapped handler and
// returns the status, the header fields but the request id, and the body.
func answer(listed, mapped http.Handler, path, accept string, useListed bool) string {
	r := httptest.NewRequest(http.MethodGet, acct+"/"+path, nil)
	r.Header.Set("x-ms-version", "2019-02-02")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	if useListed {
		listed.ServeHTTP(w, r)
	} else {
		mapped.ServeHTTP(w, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", w.Code)
	h := w.Result().Header
	for _, k := range []string{"Content-Type", "Etag", "X-Ms-Continuation-Nextpartitionkey", "X-Ms-Continuation-Nextrowkey", "Dataserviceversion", "Preference-Applied"} {
		fmt.Fprintf(&b, "%s: %q\n", k, h.Values(k))
	}
	b.WriteString(requestIDInBody.ReplaceAllString(w.Body.String(), "RequestID:ID"))
	return b.String()
}
