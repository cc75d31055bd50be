package tableserver_test

import (
	"encoding/base64"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
)

// authFixture is a strict server (no anonymous access) with the development account and a
// second account, a table "authz" holding entities in partitions "a" to "d", and a clock
// fixed at now.
type authFixture struct {
	base   string // http://host:port
	devKey []byte
	other  []byte
	now    time.Time
}

func newAuthFixture(t *testing.T) authFixture {
	t.Helper()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	other := []byte("the-second-account-key-32-bytes!")
	ref := reference.New(reference.WithDeleteHold(0))
	c := ctx(t)
	if err := ref.CreateTable(c, "authz"); err != nil {
		t.Fatal(err)
	}
	for _, pk := range []string{"a", "b", "c", "d"} {
		if _, err := ref.InsertEntity(c, "authz", api.NewEntity(pk, "r", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ref.CreateTable(c, "authzother"); err != nil {
		t.Fatal(err)
	}
	srv := tableserver.New(ref, tableserver.WithClock(func() time.Time { return now }), tableserver.WithAccount("second", other, ref))
	_, addr := serveHandler(t, srv)
	devKey, _ := base64.StdEncoding.DecodeString(tableserver.DevAccountKey)
	return authFixture{base: "http://" + addr, devKey: devKey, other: other, now: now}
}

// serveHandler serves srv on loopback until the test ends.
func serveHandler(t *testing.T, srv *tableserver.Server) (*tableserver.Server, string) {
	t.Helper()
	hs := srv.HTTPServer("127.0.0.1:0")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		_ = hs.Close()
		if n := srv.Recovered(); n != 0 {
			t.Errorf("the server recovered from %d panics", n)
		}
	})
	return srv, ln.Addr().String()
}

// authCase is one request and the refusal (or acceptance) it must get.
type authCase struct {
	name   string
	method string
	path   string // below the account, e.g. "authz()" or "Tables"
	query  url.Values
	body   string
	// sign prepares the request's credentials (nil: none).
	sign       func(r *http.Request)
	wantStatus int
	wantCode   string
}

func (f authFixture) signWith(scheme wire.AuthScheme, account string, key []byte, at time.Time) func(*http.Request) {
	return func(r *http.Request) { wire.SignRequest(r, scheme, account, key, at) }
}

// sas returns the query of a service SAS signed by key for the development account.
func (f authFixture) sas(t *testing.T, s wire.SAS, key []byte) url.Values {
	t.Helper()
	q, err := s.Encode(tableserver.DevAccountName, key)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func with(q url.Values, k, v string) url.Values {
	c := url.Values{}
	for key, vs := range q {
		c[key] = append([]string(nil), vs...)
	}
	c.Set(k, v)
	return c
}

// tamper changes one character of the signature in the middle, keeping it valid base64.
func tamper(sig string) string {
	b := []byte(sig)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// TestAuthenticationCannotBeBypassed sends each way of getting credentials wrong and checks
// the documented refusal (EVIDENCE.md 7): status and x-ms-error-code, from a strict server.
// Valid credentials of each kind are sent too, so that every refusal is shown to hinge on
// the one thing the case gets wrong.
func TestAuthenticationCannotBeBypassed(t *testing.T) {
	f := newAuthFixture(t)
	now := f.now
	devSK := f.signWith(wire.SharedKey, tableserver.DevAccountName, f.devKey, now)
	hour := time.Hour
	readA := wire.SAS{Table: "authz", Permissions: "r", Start: now.Add(-hour), Expiry: now.Add(hour)}
	rangeBC := wire.SAS{Table: "authz", Permissions: "rau", Expiry: now.Add(hour), StartPK: "b", EndPK: "c"}
	rowRange := wire.SAS{Table: "authz", Permissions: "r", Expiry: now.Add(hour), StartPK: "b", StartRK: "s", EndPK: "c", EndRK: "q"}
	good := f.sas(t, readA, f.devKey)

	cases := []authCase{
		// Accepted: the baselines the refusals differ from.
		{name: "valid Shared Key", method: "GET", path: "Tables", sign: devSK, wantStatus: 200},
		{name: "valid Shared Key Lite", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKeyLite, tableserver.DevAccountName, f.devKey, now), wantStatus: 200},
		{name: "valid SAS", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: good, wantStatus: 200},
		{name: "valid SAS in key range", method: "GET", path: "authz(PartitionKey='b',RowKey='r')", query: f.sas(t, rangeBC, f.devKey), wantStatus: 200},
		{name: "date at the edge of the skew", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, tableserver.DevAccountName, f.devKey, now.Add(-14*time.Minute)), wantStatus: 200},

		// Missing or malformed credentials.
		{name: "no credentials", method: "GET", path: "Tables", wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "no credentials on an entity", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "no credentials on a write", method: "POST", path: "authz", body: `{"PartitionKey":"z","RowKey":"z"}`, wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "unknown scheme", method: "GET", path: "Tables", sign: header("Basic ZGV2OmtleQ=="), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},
		{name: "scheme only", method: "GET", path: "Tables", sign: header("SharedKey"), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},
		{name: "no colon", method: "GET", path: "Tables", sign: header("SharedKey devstoreaccount1"), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},
		{name: "no account", method: "GET", path: "Tables", sign: header("SharedKey :c2ln"), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},
		{name: "no signature", method: "GET", path: "Tables", sign: header("SharedKey devstoreaccount1:"), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},
		{name: "scheme in lower case", method: "GET", path: "Tables", sign: header("sharedkey devstoreaccount1:c2ln"), wantStatus: 400, wantCode: "InvalidAuthenticationInfo"},

		// Wrong signatures, accounts and dates.
		{name: "signed with another key", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, tableserver.DevAccountName, f.other, now), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "Shared Key Lite with another key", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKeyLite, tableserver.DevAccountName, f.other, now), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "tampered signature", method: "GET", path: "Tables", sign: func(r *http.Request) {
			devSK(r)
			r.Header.Set("Authorization", tamper(r.Header.Get("Authorization")))
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "truncated signature", method: "GET", path: "Tables", sign: func(r *http.Request) {
			devSK(r)
			r.Header.Set("Authorization", r.Header.Get("Authorization")[:40])
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "another account's valid signature", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, "second", f.other, now), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "unknown account", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, "nosuchaccount", f.devKey, now), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "signed for another verb", method: "DELETE", path: "authz(PartitionKey='a',RowKey='r')", sign: func(r *http.Request) {
			r.Method = "GET"
			devSK(r)
			r.Method = "DELETE"
			r.Header.Set("If-Match", "*")
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "signed for another path", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", sign: func(r *http.Request) {
			orig := *r.URL
			r.URL.RawPath = "/" + tableserver.DevAccountName + "/authzother(PartitionKey='a',RowKey='r')"
			r.URL.Path = r.URL.RawPath
			devSK(r)
			r.URL = &orig
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "date too old", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, tableserver.DevAccountName, f.devKey, now.Add(-16*time.Minute)), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "date too far ahead", method: "GET", path: "Tables", sign: f.signWith(wire.SharedKey, tableserver.DevAccountName, f.devKey, now.Add(16*time.Minute)), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "no date", method: "GET", path: "Tables", sign: func(r *http.Request) {
			devSK(r)
			r.Header.Del("x-ms-date")
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "unreadable date", method: "GET", path: "Tables", sign: func(r *http.Request) {
			r.Header.Set("x-ms-date", "yesterday at noon")
			devSK(r)
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "Date header changed after signing", method: "GET", path: "Tables", sign: func(r *http.Request) {
			devSK(r)
			r.Header.Set("x-ms-date", now.Add(time.Second).Format(http.TimeFormat))
		}, wantStatus: 403, wantCode: "AuthenticationFailed"},

		// Service SAS.
		{name: "SAS expired", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: f.sas(t, wire.SAS{Table: "authz", Permissions: "r", Expiry: now.Add(-time.Minute)}, f.devKey), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS not yet valid", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: f.sas(t, wire.SAS{Table: "authz", Permissions: "r", Start: now.Add(20 * time.Minute), Expiry: now.Add(hour)}, f.devKey), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS without the permission", method: "POST", path: "authz", body: `{"PartitionKey":"a","RowKey":"new"}`, query: good, wantStatus: 403, wantCode: "AuthorizationPermissionMismatch"},
		{name: "SAS delete without d", method: "DELETE", path: "authz(PartitionKey='b',RowKey='r')", query: f.sas(t, rangeBC, f.devKey), wantStatus: 403, wantCode: "AuthorizationPermissionMismatch"},
		{name: "SAS for another table", method: "GET", path: "authzother()", query: good, wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS for a table operation", method: "GET", path: "Tables", query: good, wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS below its key range", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: f.sas(t, rangeBC, f.devKey), wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS above its key range", method: "POST", path: "authz", body: `{"PartitionKey":"d","RowKey":"x"}`, query: f.sas(t, rangeBC, f.devKey), wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS below its row range", method: "GET", path: "authz(PartitionKey='b',RowKey='r')", query: f.sas(t, rowRange, f.devKey), wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS above its row range", method: "GET", path: "authz(PartitionKey='c',RowKey='r')", query: f.sas(t, rowRange, f.devKey), wantStatus: 403, wantCode: "AuthorizationFailure"},
		{name: "SAS tampered signature", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: with(good, "sig", tamper(good.Get("sig"))), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS signed with another key", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: f.sas(t, readA, f.other), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS with more permissions than signed", method: "POST", path: "authz", body: `{"PartitionKey":"a","RowKey":"new"}`, query: with(good, "sp", "raud"), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS with a later expiry than signed", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: with(good, "se", now.Add(48*hour).Format(wire.SASTimeFormat)), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS moved to another table", method: "GET", path: "authzother()", query: with(good, "tn", "authzother"), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS with a key range removed", method: "GET", path: "authz(PartitionKey='a',RowKey='r')", query: func() url.Values {
			q := f.sas(t, rangeBC, f.devKey)
			q.Del("spk")
			return q
		}(), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS with an empty signature", method: "GET", path: "authz()", query: with(good, "sig", ""), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS without expiry", method: "GET", path: "authz()", query: func() url.Values {
			q := with(good, "sig", good.Get("sig"))
			q.Del("se")
			return q
		}(), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS with a stored policy", method: "GET", path: "authz()", query: with(good, "si", "policy1"), wantStatus: 403, wantCode: "AuthenticationFailed"},
		{name: "SAS of another account", method: "GET", path: "authz()", query: func() url.Values {
			q, err := readA.Encode("second", f.other)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}(), wantStatus: 403, wantCode: "AuthenticationFailed"},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	c := ctx(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := f.base + "/" + tableserver.DevAccountName + "/" + tc.path
			if tc.query != nil {
				u += "?" + tc.query.Encode()
			}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequestWithContext(c, tc.method, u, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("x-ms-version", "2019-02-02")
			req.Header.Set("Accept", "application/json;odata=nometadata")
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tc.sign != nil {
				tc.sign(req)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			code := resp.Header.Get("x-ms-error-code")
			if resp.StatusCode != tc.wantStatus || code != tc.wantCode {
				t.Errorf("got %d %q, want %d %q (%s)", resp.StatusCode, code, tc.wantStatus, tc.wantCode, data)
			}
			if tc.wantCode != "" {
				if e := wire.DecodeError(resp.StatusCode, http.Header{}, data); e.Code != tc.wantCode {
					t.Errorf("error body names %q", e.Code)
				}
			}
		})
	}
}

func header(v string) func(*http.Request) {
	return func(r *http.Request) {
		r.Header.Set("x-ms-date", time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Format(http.TimeFormat))
		r.Header.Set("Authorization", v)
	}
}

// TestSignaturesAreComparedInConstantTime reads reference/wire's sources and fails when a
// signature, MAC or key is compared with == or != (a comparison that stops at the first
// differing byte leaks how much of a forged signature is right): they must go through
// crypto/subtle or hmac.Equal.
func TestSignaturesAreComparedInConstantTime(t *testing.T) {
	dir := filepath.Join("..", "wire")
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = f
	}
	secret := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			var name string
			switch v := n.(type) {
			case *ast.Ident:
				name = v.Name
			case *ast.SelectorExpr:
				name = v.Sel.Name
			}
			l := strings.ToLower(name)
			if l == "sig" || strings.Contains(l, "signature") || strings.Contains(l, "mac") || l == "want" || l == "key" {
				found = true
			}
			return !found
		})
		return found
	}
	constantTime := 0
	{
		for name, file := range files {
			ast.Inspect(file, func(n ast.Node) bool {
				switch v := n.(type) {
				case *ast.BinaryExpr:
					if (v.Op == token.EQL || v.Op == token.NEQ) && secret(v.X) && secret(v.Y) {
						t.Errorf("%s: %s compares secrets with %s", filepath.Base(name), fset.Position(v.Pos()), v.Op)
					}
				case *ast.CallExpr:
					if sel, ok := v.Fun.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && (x.Name == "subtle" && sel.Sel.Name == "ConstantTimeCompare" || x.Name == "hmac" && sel.Sel.Name == "Equal") {
							constantTime++
						}
					}
				}
				return true
			})
		}
	}
	// Shared Key and SAS each verify a signature.
	if constantTime < 2 {
		t.Errorf("%d constant-time comparisons in reference/wire, want at least 2 (Shared Key and SAS)", constantTime)
	}
}
