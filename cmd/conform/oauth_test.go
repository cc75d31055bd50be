package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/tableserver"
)

// unsignedToken is an unsigned JWT for the storage audience, a stand-in for a token from an
// identity provider. (The Go SDK sends bearer tokens over TLS only, so plain HTTP is used.)
func unsignedToken() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"aud":%q,"exp":%d}`, tableserver.StorageAudience, time.Now().Add(time.Hour).Unix()))) + "." + enc([]byte("unsigned"))
}

// TestServeOAuth shows that `conform serve --oauth` accepts a bearer token for storage and
// that without --oauth the same token is refused with 401 and the Bearer challenge.
func TestServeOAuth(t *testing.T) {
	create := func(base, table string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/"+tableserver.DevAccountName+"/Tables", strings.NewReader(`{"TableName":"`+table+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json;odata=nometadata")
		req.Header.Set("x-ms-version", "2020-12-06")
		req.Header.Set("Authorization", "Bearer "+unsignedToken())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	_, base := startServe(t, "--oauth")
	if resp := create(base, "cfoauth1"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create table with a bearer token under --oauth: %d", resp.StatusCode)
	}
	_, strict := startServe(t)
	resp := create(strict, "cfoauth2")
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("x-ms-error-code") != "InvalidAuthenticationInfo" ||
		!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer authorization_uri=") {
		t.Fatalf("without --oauth: %d %q %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"))
	}
}
