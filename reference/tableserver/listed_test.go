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

var requestIDInBody = regexp.MustCompile(`(Request(ID|Id)|ActivityId): ?[0-9a-f-]{36}`)

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
	return answerText(w, "Content-Type", "Etag", "X-Ms-Continuation-Nextpartitionkey", "X-Ms-Continuation-Nextrowkey", "Dataserviceversion", "Preference-Applied")
}

// answerText is an answer's status, the values of the header fields named, and its body
// with the request id in an error message masked: what two servers' answers are compared by.
func answerText(w *httptest.ResponseRecorder, fields ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", w.Code)
	h := w.Result().Header
	for _, k := range fields {
		fmt.Fprintf(&b, "%s: %q\n", k, h.Values(k))
	}
	b.WriteString(requestIDInBody.ReplaceAllString(w.Body.String(), "RequestID:ID"))
	return b.String()
}

// TestListedWritesMatchMapped holds the answers of writes the server decodes into listed
// entities (reference.Service's InsertEntityListed and UpdateEntityListed) to those of the
// general path, byte for byte, request by request, and then the entities both stored: valid
// entities of every EDM type, nulls, a sent Timestamp, each refusal of a body (syntax,
// duplicates, annotations, keys, names, values, counts, sizes, in name order), existing and
// missing entities, If-Match, and the Prefer header, in the Storage and Cosmos flavours.
func TestListedWritesMatchMapped(t *testing.T) {
	many := func(n int, null bool) string {
		var b strings.Builder
		b.WriteString(`{"PartitionKey":"p","RowKey":"many"`)
		for i := range n {
			if null && i%2 == 0 {
				fmt.Fprintf(&b, `,"n%03d":null`, i)
			} else {
				fmt.Fprintf(&b, `,"n%03d":%d`, i, i)
			}
		}
		return b.String() + "}"
	}
	// Entities near the size limit whose every string is within the limit of a value: only
	// the stored size (a merge's too) refuses them.
	strs := func(from, n int, ch string) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, `,"s%02d":"%s"`, i, strings.Repeat(ch, 16000))
		}
		return b.String()
	}
	big := strings.Repeat("x", 40000)
	huge := strings.Repeat("y", 60000)
	var tooLarge strings.Builder
	tooLarge.WriteString(`{"PartitionKey":"p","RowKey":"huge","a":"` + big + `"`)
	for i := range 20 {
		fmt.Fprintf(&tooLarge, `,"b%02d":"%s"`, i, huge)
	}
	tooLarge.WriteString("}")
	full := `{"PartitionKey":"p","RowKey":"%s","s":"v \"q\" é \u2028","i32":-5,"i64":"9223372036854775807","i64@odata.type":"Edm.Int64",` +
		`"d":2.5,"whole":3.0,"whole@odata.type":"Edm.Double","b":true,"bin":"AAH/","bin@odata.type":"Edm.Binary",` +
		`"g":"C9DA6455-213D-42C9-9A79-3E9149A57833","g@odata.type":"Edm.Guid","dt":"2001-02-03T04:05:06.7Z","dt@odata.type":"Edm.DateTime",` +
		`"nothing":null,"Timestamp":"2001-01-01T00:00:00Z","odata.etag":"W/\"x\"","naïve":"n"}`
	type write struct{ method, path, body, ifMatch, prefer string }
	writes := []write{
		{"POST", "tbl", fmt.Sprintf(full, "r1"), "", ""},
		{"POST", "tbl", fmt.Sprintf(full, "r1"), "", ""},
		{"POST", "tbl", fmt.Sprintf(full, "r2"), "", "return-no-content"},
		{"POST", "tbl", fmt.Sprintf(full, "r3"), "", "return-content"},
		{"POST", "nope", fmt.Sprintf(full, "r1"), "", ""},
		{"POST", "tbl", `{"PartitionKey":"p"}`, "", "return-no-content"},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":null,"a":1}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","a":1,"a":2}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","a":1`, "", ""},
		{"POST", "tbl", `[1]`, "", ""},
		{"POST", "tbl", ``, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","a@odata.type":"Edm.Int64"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","a":"x","a@odata.type":"Edm.Nope"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","a":"x","a@odata.type":"Edm.Int32"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r/4","a":1}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","1a":1,"b":"C9DA6455","b@odata.type":"Edm.Guid"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","z1":1,"b":"C9DA6455","b@odata.type":"Edm.Guid"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","z$":1,"a$":2}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","` + strings.Repeat("n", 256) + `":1}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","dt":"0001-01-01T00:00:00Z","dt@odata.type":"Edm.DateTime"}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r4","big":"` + big + `"}`, "", ""},
		{"POST", "tbl", tooLarge.String(), "", ""},
		{"POST", "tbl", many(253, false), "", ""},
		{"POST", "tbl", many(300, true), "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r5","a":1,"Seq":"7","Seq@odata.type":"Edm.Int64"}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r5')", `{"b":"new","a":null,"Seq":"8","Seq@odata.type":"Edm.Int64"}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r6')", `{"b":"new","a":null}`, "", ""},
		{"MERGE", "tbl(PartitionKey='p',RowKey='r6')", `{"c":1.5}`, "*", ""},
		{"MERGE", "tbl(PartitionKey='p',RowKey='r7')", `{"c":1.5}`, "*", ""},
		{"MERGE", "tbl(PartitionKey='p',RowKey='r6')", `{"c":1.5}`, `W/"datetime'2001-01-01T00%3A00%3A00Z'"`, ""},
		{"MERGE", "tbl(PartitionKey='p',RowKey='r6')", `{"c":1.5}`, `bad`, ""},
		{"PUT", "tbl(PartitionKey='p',RowKey='r1')", `{"only":"this","RowKey":"ignored"}`, "", ""},
		{"PUT", "tbl(PartitionKey='p',RowKey='r8')", `{"only":"this","x":null}`, "*", ""},
		{"PUT", "tbl(PartitionKey='p',RowKey='r2')", `{"1bad":1}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r3')", many(120, false)[len(`{"PartitionKey":"p","RowKey":"many"`)+1:], "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r3')", `{` + many(140, false)[len(`{"PartitionKey":"p","RowKey":"many"`)+1:], "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r3')", `{"a":"` + huge + `","b":"` + huge + `"}`, "", ""},
		{"PATCH", "nope(PartitionKey='p',RowKey='r3')", `{"a":1}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r3')", `{"a":1,"a":1}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r9"` + strs(0, 33, "x") + `}`, "", ""},
		{"POST", "tbl", `{"PartitionKey":"p","RowKey":"r9"` + strs(0, 32, "é") + `}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r9')", `{"a":1` + strs(32, 1, "é") + `}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r9')", `{"a":1` + strs(0, 1, "x") + strs(32, 1, "x") + `}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r9')", `{"s00":"short","s31":null` + strs(32, 1, "é") + `}`, "", ""},
		{"PATCH", "tbl(PartitionKey='p',RowKey='r9')", `{"s01":"short"` + strs(33, 1, "é") + `}`, "", ""},
	}
	for _, flavour := range []string{tableserver.FlavorStorage, tableserver.FlavorCosmos} {
		t.Run(flavour, func(t *testing.T) {
			clock := func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 891_234_500, time.UTC) }
			handler := func(listed bool) http.Handler {
				opts := []reference.Option{reference.WithClock(clock), reference.WithDeleteHold(0)}
				if flavour == tableserver.FlavorCosmos {
					opts = append(reference.CosmosOptions(), opts...)
				}
				model := reference.New(opts...)
				if err := model.CreateTable(context.Background(), "tbl"); err != nil {
					t.Fatal(err)
				}
				var b api.Backend = model
				if !listed {
					b = mappedOnly{model}
				}
				srv := tableserver.New(b, tableserver.WithAllowAnonymous(), tableserver.WithClock(clock))
				if flavour == tableserver.FlavorCosmos {
					return tableserver.NewCosmos(srv)
				}
				return srv
			}
			listed, mapped := handler(true), handler(false)
			serve := func(h http.Handler, w write) string {
				r := httptest.NewRequest(w.method, acct+"/"+w.path, strings.NewReader(w.body))
				r.Header.Set("x-ms-version", "2019-02-02")
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json;odata=minimalmetadata")
				if w.ifMatch != "" {
					r.Header.Set("If-Match", w.ifMatch)
				}
				if w.prefer != "" {
					r.Header.Set("Prefer", w.prefer)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return answerText(rec, "Content-Type", "Etag", "Location", "Dataserviceid", "Dataserviceversion", "Preference-Applied")
			}
			for i, w := range writes {
				if got, want := serve(listed, w), serve(mapped, w); got != want {
					t.Fatalf("write %d, %s %s %.200s:\nlisted:\n%.2000s\nmapped:\n%.2000s", i, w.method, w.path, w.body, got, want)
				}
			}
			for _, accept := range []string{"application/json;odata=fullmetadata"} {
				if got, want := answer(listed, listed, "tbl()", accept, true), answer(mapped, mapped, "tbl()", accept, true); got != want {
					t.Fatalf("stored entities differ:\nlisted:\n%s\nmapped:\n%s", got, want)
				}
			}
		})
	}
}
