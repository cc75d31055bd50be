package tableserver_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
)

// jwtFor makes an unsigned JWT with the given audience and expiry.
func jwtFor(aud string, exp time.Time) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." +
		enc([]byte(fmt.Sprintf(`{"aud":%q,"exp":%d,"tid":"tenant1"}`, aud, exp.Unix()))) + "." + enc([]byte("sig"))
}

func getTables(t *testing.T, base, auth string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/"+tableserver.DevAccountName+"/Tables", nil)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp
}

func TestBearerTokens(t *testing.T) {
	_, strict := serve(t)
	_, oauth := serve(t, tableserver.WithOAuth())
	good := "Bearer " + jwtFor(tableserver.StorageAudience, time.Now().Add(time.Hour))
	cases := []struct {
		name   string
		base   string
		auth   string
		status int
	}{
		{"without --oauth a good token", strict.URL, good, 401},
		{"a good token", oauth.URL, good, 200},
		{"the audience with a final slash", oauth.URL, "Bearer " + jwtFor(tableserver.StorageAudience+"/", time.Now().Add(time.Hour)), 200},
		{"another audience", oauth.URL, "Bearer " + jwtFor("https://vault.azure.net", time.Now().Add(time.Hour)), 401},
		{"an expired token", oauth.URL, "Bearer " + jwtFor(tableserver.StorageAudience, time.Now().Add(-time.Minute)), 401},
		{"not a JWT", oauth.URL, "Bearer abc.def", 401},
		{"an empty token", oauth.URL, "Bearer  x", 401},
	}
	for _, c := range cases {
		resp := getTables(t, c.base, c.auth)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d; want %d", c.name, resp.StatusCode, c.status)
		}
		if c.status == 401 {
			if code := resp.Header.Get("x-ms-error-code"); code != "InvalidAuthenticationInfo" {
				t.Errorf("%s: code %q", c.name, code)
			}
			if ch := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer authorization_uri=https://login.microsoftonline.com/") || !strings.HasSuffix(ch, " resource_id=https://storage.azure.com") {
				t.Errorf("%s: challenge %q", c.name, ch)
			}
		}
	}
}

func TestAccountSASStringToSign(t *testing.T) {
	s := wire.AccountSAS{Version: "2019-02-02", Services: "t", ResourceTypes: "sco", Permissions: "rl",
		Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), Protocol: "https,http"}
	want := "acct\nrl\nt\nsco\n\n2030-01-02T03:04:05Z\n\nhttps,http\n2019-02-02\n"
	if got := s.StringToSign("acct"); got != want {
		t.Errorf("before 2020-12-06: %q; want %q", got, want)
	}
	s.Version = "2020-12-06"
	want = "acct\nrl\nt\nsco\n\n2030-01-02T03:04:05Z\n\nhttps,http\n2020-12-06\n\n"
	if got := s.StringToSign("acct"); got != want {
		t.Errorf("from 2020-12-06 (ses): %q; want %q", got, want)
	}
}

func TestAccountSASOverHTTP(t *testing.T) {
	_, ts := serve(t)
	b := client(t, ts)
	c := ctx(t)
	if err := b.CreateTable(c, "acct1"); err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2019-02-02", "2020-12-06"} {
		viaSAS, err := b.WithAccountSAS(c, driver.AccountSASOptions{Services: "t", ResourceTypes: "co", Permissions: "rl",
			Expiry: time.Now().Add(time.Hour), Version: version})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := viaSAS.QueryTables(c, api.TableQuery{Filter: "TableName eq 'acct1'"}); err != nil {
			t.Errorf("sv=%s: list tables: %v", version, err)
		}
		wantErr(t, viaSAS.CreateTable(c, "acct2"), 403, "AuthorizationPermissionMismatch")
		wantErr(t, viaSAS.DeleteTable(c, "acct1"), 403, "AuthorizationPermissionMismatch")
	}
}

func TestPreflightAndSecondary(t *testing.T) {
	_, ts := serve(t)
	req, _ := http.NewRequest(http.MethodOptions, ts.URL+"/"+tableserver.DevAccountName+"/Tables", nil)
	req.Header.Set("Origin", "https://a.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a preflight without CORS rules: %d; want 403", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodOptions, ts.URL+"/"+tableserver.DevAccountName+"/Tables", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a preflight without Origin: %d; want 400", resp.StatusCode)
	}
	resp = getTables(t, ts.URL, "")
	if resp.StatusCode != 403 {
		t.Errorf("anonymous: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/"+tableserver.DevAccountName+"-secondary/?restype=service&comp=stats", nil)
	req.Header.Set("x-ms-version", "2019-02-02")
	wire.SignRequest(req, wire.SharedKeyLite, tableserver.DevAccountName, devKey(t), time.Now())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<Status>live</Status>") {
		t.Errorf("stats on the secondary: %d %s", resp.StatusCode, body)
	}
}

func devKey(t *testing.T) []byte {
	k, err := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestServicePropertiesRefuseBadBodies(t *testing.T) {
	_, ts := serve(t)
	put := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPut, ts.URL+"/"+tableserver.DevAccountName+"/?restype=service&comp=properties", strings.NewReader(body))
		req.Header.Set("x-ms-version", "2019-02-02")
		req.Header.Set("Content-Type", "application/xml")
		wire.SignRequest(req, wire.SharedKey, tableserver.DevAccountName, devKey(t), time.Now())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}
	rule := func(methods string, maxAge int) string {
		return fmt.Sprintf("<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>%s</AllowedMethods><MaxAgeInSeconds>%d</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders></CorsRule>", methods, maxAge)
	}
	for name, body := range map[string]string{
		"not XML":            "<StorageServiceProperties",
		"another root":       "<Other/>",
		"six CORS rules":     "<StorageServiceProperties><Cors>" + strings.Repeat(rule("GET", 1), 6) + "</Cors></StorageServiceProperties>",
		"an unknown method":  "<StorageServiceProperties><Cors>" + rule("FETCH", 1) + "</Cors></StorageServiceProperties>",
		"a negative max age": "<StorageServiceProperties><Cors>" + rule("GET", -1) + "</Cors></StorageServiceProperties>",
		"366 days":           "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>",
		"0 days":             "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>0</Days></RetentionPolicy></Logging></StorageServiceProperties>",
	} {
		if status, code := put(body); status != 400 || code != "InvalidXmlDocument" {
			t.Errorf("%s: %d %s; want 400 InvalidXmlDocument", name, status, code)
		}
	}
	if status, _ := put("<StorageServiceProperties><Cors>" + strings.Repeat(rule("GET,PUT", 5), 5) + "</Cors></StorageServiceProperties>"); status != 202 {
		t.Errorf("five CORS rules: %d; want 202", status)
	}
}
