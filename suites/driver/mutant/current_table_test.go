package mutant

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/inproc"
)

// reads-from-last-written-table keeps one current table per connection: an entity written
// over raw HTTP makes its table the current one as a typed write does; a raw read, a request
// about tables and a hand-made transaction (which may name several tables) leave it as it is.
func TestCurrentTableFollowsRawWrites(t *testing.T) {
	ctx := context.Background()
	b := mustLookup(t, "reads-from-last-written-table").Wrap(&fakeCapable{Backend: inproc.New()})
	seed(t, b, "raw", api.Key{PartitionKey: "p", RowKey: "raw"})
	seed(t, b, "typed", api.Key{PartitionKey: "p", RowKey: "typed"})
	raw := b.(driver.RawHTTP)
	send := func(method, path string, body ...string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1:10002/account/"+path, strings.NewReader(strings.Join(body, "")))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = raw.Do(req) // the fake sends nothing; the request is what the mutant sees
	}
	readsFrom := func(want string) {
		t.Helper()
		if _, err := b.GetEntity(ctx, "anything", "p", want, nil); err != nil {
			t.Errorf("Get Entity after the writes answered %v; want the entity of table %q, the last written", err, want)
		}
	}
	readsFrom("typed")
	send(http.MethodPost, "raw")
	readsFrom("raw")
	send(http.MethodPut, "typed(PartitionKey='p',RowKey='x')")
	readsFrom("typed")
	send(http.MethodPost, "Tables")
	send(http.MethodGet, "raw()")
	readsFrom("typed")
	send(http.MethodPost, "$batch", "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n--changeset_1\r\n"+
		"Content-Type: application/http\r\n\r\nPOST http://127.0.0.1:10002/account/raw HTTP/1.1\r\n\r\n{}\r\n--changeset_1--\r\n--batch_1--\r\n")
	readsFrom("typed")
}
