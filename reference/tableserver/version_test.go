package tableserver_test

import (
	"net/http"
	"testing"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
)

// TestAnswerEchoesRequestedVersion: Storage answers with the x-ms-version the request asked
// for (E-version-echo); without one, the server's own.
func TestAnswerEchoesRequestedVersion(t *testing.T) {
	_, ts := serve(t, tableserver.WithAllowAnonymous())
	for _, c := range []struct{ sent, want string }{
		{"2019-07-07", "2019-07-07"},
		{"2020-12-06", "2020-12-06"},
		{"", spec.APIVersion},
		{"invalid", spec.APIVersion},
	} {
		req, _ := http.NewRequest("GET", ts.URL+"/"+tableserver.DevAccountName+"/Tables", nil)
		if c.sent != "" {
			req.Header.Set("x-ms-version", c.sent)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("x-ms-version"); got != c.want {
			t.Errorf("x-ms-version %q: answered %q, want %q", c.sent, got, c.want)
		}
	}
}
