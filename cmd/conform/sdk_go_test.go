package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/tableserver"
)

// TestServeWithTheGoSDK drives `conform serve` through the official Go SDK (aztables):
// tables, an entity of every EDM type, a paged query, a transaction, the table ACL, a
// service SAS, an account SAS, a stored access policy, service properties and stats, and a
// CORS preflight, asserting each answer.
func TestServeWithTheGoSDK(t *testing.T) {
	_, base := startServe(t)
	driveWithTheGoSDK(t, base, http.DefaultClient, aztables.SASProtocolHTTPSandHTTP, "cfgosdkcheck1")
}

// TestServeTLSWithTheGoSDK does the same over https (`conform serve --tls`), trusting the
// generated CA, with SAS tokens signed for spr=https, as SDKs issue them by default.
func TestServeTLSWithTheGoSDK(t *testing.T) {
	dir := t.TempDir()
	_, base := startServe(t, "--tls", "--tls-dir", dir)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("conform serve --tls prints %s", base)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, tlsCAFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("%s holds no certificate", tlsCAFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	driveWithTheGoSDK(t, base, &http.Client{Transport: tr, Timeout: time.Minute}, aztables.SASProtocolHTTPS, "cfgosdkcheck3")
}

// driveWithTheGoSDK runs the checks of TestServeWithTheGoSDK against the server at base,
// through httpClient, with SAS tokens for protocol.
func driveWithTheGoSDK(t *testing.T, base string, httpClient *http.Client, protocol aztables.SASProtocol, table string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cred, err := aztables.NewSharedKeyCredential(tableserver.DevAccountName, tableserver.DevAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, InsecureAllowCredentialWithHTTP: true, Transport: httpClient}}
	endpoint := base + "/" + tableserver.DevAccountName
	svc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		t.Fatalf("create table: %v", err)
	}
	client := svc.NewClient(table)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// An entity of every EDM type. A whole float64 is left out: the SDK sends 3.0 as the
	// JSON number 3 without a type annotation, which every service stores as Int32 (a
	// pitfall of the SDK, not of the server).
	when := time.Date(2021, 4, 1, 1, 1, 1, 123456700, time.UTC)
	typed := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "p", RowKey: "types"},
		Properties: map[string]any{
			"Bin": aztables.EDMBinary("bytes\x00\xff"), "Bool": true, "When": aztables.EDMDateTime(when),
			"Dbl": 1.5, "Id": aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f"),
			"I32": int32(-7), "I64": aztables.EDMInt64(1 << 53), "Str": "héllo",
		},
	}
	body, err := json.Marshal(typed)
	must("marshal the typed entity", err)
	_, err = client.AddEntity(ctx, body, nil)
	must("add the typed entity", err)
	got, err := client.GetEntity(ctx, "p", "types", nil)
	must("get the typed entity", err)
	var back aztables.EDMEntity
	must("unmarshal the typed entity", json.Unmarshal(got.Value, &back))
	p := back.Properties
	if string(p["Bin"].(aztables.EDMBinary)) != "bytes\x00\xff" || p["Bool"] != true || !time.Time(p["When"].(aztables.EDMDateTime)).Equal(when) ||
		p["Dbl"] != 1.5 || p["Id"] != aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f") ||
		p["I32"] != int32(-7) || p["I64"] != aztables.EDMInt64(1<<53) || p["Str"] != "héllo" {
		t.Fatalf("typed entity read back as %#v", p)
	}

	// A query with continuation: 10 entities in pages of 4.
	for i := 0; i < 10; i++ {
		e, _ := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "q", RowKey: string(rune('a' + i))}, Properties: map[string]any{"N": int32(i)}})
		_, err := client.AddEntity(ctx, e, nil)
		must("add a paged entity", err)
	}
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'q'"), Top: to.Ptr(int32(4))})
	pages, seen := 0, 0
	for pager.More() {
		page, err := pager.NextPage(ctx)
		must("list a page", err)
		pages++
		seen += len(page.Entities)
	}
	if pages != 3 || seen != 10 {
		t.Fatalf("paged query: %d pages, %d entities; want 3 and 10", pages, seen)
	}

	// A transaction.
	action := func(kind aztables.TransactionType, rk string) aztables.TransactionAction {
		e, _ := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "t", RowKey: rk}, Properties: map[string]any{"V": int32(1)}})
		return aztables.TransactionAction{ActionType: kind, Entity: e}
	}
	_, err = client.SubmitTransaction(ctx, []aztables.TransactionAction{action(aztables.TransactionTypeAdd, "a"), action(aztables.TransactionTypeAdd, "b"), action(aztables.TransactionTypeInsertMerge, "c")}, nil)
	must("submit a transaction", err)
	txn := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 't'")})
	page, err := txn.NextPage(ctx)
	must("list the transaction's entities", err)
	if len(page.Entities) != 3 {
		t.Fatalf("transaction: %d entities stored; want 3", len(page.Entities))
	}

	// Table ACL and a stored access policy that a SAS names.
	_, err = client.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{{
		ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: to.Ptr(time.Now().Add(-time.Hour).UTC().Truncate(time.Second)),
			Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)), Permission: to.Ptr("r")},
	}}})
	must("set the table ACL", err)
	acl, err := client.GetAccessPolicy(ctx, nil)
	must("get the table ACL", err)
	if len(acl.SignedIdentifiers) != 1 || *acl.SignedIdentifiers[0].ID != "readers" || *acl.SignedIdentifiers[0].AccessPolicy.Permission != "r" {
		t.Fatalf("table ACL read back as %+v", acl.SignedIdentifiers)
	}
	policySAS, err := aztables.SASSignatureValues{TableName: table, Identifier: "readers"}.Sign(cred)
	must("sign a SAS naming the policy", err)
	viaPolicy, err := aztables.NewClientWithNoCredential(endpoint+"/"+table+"?"+policySAS, opts)
	must("client with the policy SAS", err)
	if _, err := viaPolicy.GetEntity(ctx, "p", "types", nil); err != nil {
		t.Fatalf("get through the policy SAS: %v", err)
	}
	expectStatus(t, "add through the read-only policy SAS", addOne(ctx, viaPolicy, "policy"), http.StatusForbidden)

	// A service SAS with read and add. (Client.GetTableSASURL joins a path-style endpoint
	// and the table without a slash, a pitfall of the SDK, so the URL is built here.)
	serviceSAS, err := aztables.SASSignatureValues{TableName: table, Protocol: protocol, Permissions: aztables.SASPermissions{Read: true, Add: true}.String(),
		StartTime: time.Now().Add(-time.Minute).UTC(), ExpiryTime: time.Now().Add(time.Hour).UTC()}.Sign(cred)
	must("sign a service SAS", err)
	viaSAS, err := aztables.NewClientWithNoCredential(endpoint+"/"+table+"?"+serviceSAS, opts)
	must("client with the service SAS", err)
	must("add through the service SAS", addOne(ctx, viaSAS, "sas"))
	expectStatus(t, "delete through a service SAS without d", func() error {
		_, err := viaSAS.DeleteEntity(ctx, "p", "sas", nil)
		return err
	}(), http.StatusForbidden)

	if !strings.Contains(serviceSAS, "spr="+url.QueryEscape(string(protocol))) {
		t.Fatalf("the service SAS does not carry spr=%s", protocol)
	}

	// An account SAS for objects with read only.
	qp, err := aztables.AccountSASSignatureValues{Protocol: protocol, StartTime: time.Now().Add(-time.Minute).UTC(),
		ExpiryTime: time.Now().Add(time.Hour).UTC(), Permissions: aztables.AccountSASPermissions{Read: true, List: true}.String(),
		Services: "t", ResourceTypes: aztables.AccountSASResourceTypes{Container: true, Object: true}.String()}.Sign(cred)
	must("sign an account SAS", err)
	viaAccount, err := aztables.NewServiceClientWithNoCredential(endpoint+"/?"+qp.Encode(), opts)
	must("service client with the account SAS", err)
	if _, err := viaAccount.NewClient(table).GetEntity(ctx, "p", "types", nil); err != nil {
		t.Fatalf("get through the account SAS: %v", err)
	}
	expectStatus(t, "add through a read-only account SAS", addOne(ctx, viaAccount.NewClient(table), "account"), http.StatusForbidden)
	_, err = viaAccount.CreateTable(ctx, "cfgosdkcheck2", nil)
	expectStatus(t, "create a table through an account SAS without w", err, http.StatusForbidden)

	// Service properties (put back afterwards) and stats on the secondary location.
	old, err := svc.GetProperties(ctx, nil)
	must("get the service properties", err)
	rule := &aztables.CorsRule{AllowedOrigins: to.Ptr("https://conform.example"), AllowedMethods: to.Ptr("GET,PUT"), MaxAgeInSeconds: to.Ptr(int32(60)),
		ExposedHeaders: to.Ptr("x-ms-meta-*"), AllowedHeaders: to.Ptr("x-ms-client-request-id")}
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule},
		HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(5))}}}, nil)
	must("set the service properties", err)
	t.Cleanup(func() { _, _ = svc.SetProperties(context.Background(), old.ServiceProperties, nil) })
	props, err := svc.GetProperties(ctx, nil)
	must("get the service properties back", err)
	if len(props.Cors) != 1 || *props.Cors[0].AllowedOrigins != "https://conform.example" || props.HourMetrics == nil ||
		!*props.HourMetrics.Enabled || *props.HourMetrics.RetentionPolicy.Days != 5 {
		t.Fatalf("service properties read back as %+v", props.ServiceProperties)
	}
	_, err = svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{rule, rule, rule, rule, rule, rule}}, nil)
	expectStatus(t, "six CORS rules", err, http.StatusBadRequest)
	secondary, err := aztables.NewServiceClientWithSharedKey(endpoint+"-secondary", cred, opts)
	must("secondary service client", err)
	stats, err := secondary.GetStatistics(ctx, nil)
	must("get the service stats", err)
	if stats.GeoReplication == nil || stats.GeoReplication.Status == nil || *stats.GeoReplication.Status != aztables.GeoReplicationStatusLive {
		t.Fatalf("service stats: %+v", stats.GeoReplication)
	}

	// A CORS preflight, as a browser sends it (no SDK sends one).
	req, _ := http.NewRequestWithContext(ctx, http.MethodOptions, endpoint+"/Tables", nil)
	req.Header.Set("Origin", "https://conform.example")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	resp, err := httpClient.Do(req)
	must("CORS preflight", err)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "https://conform.example" || resp.Header.Get("Access-Control-Max-Age") != "60" {
		t.Fatalf("CORS preflight answered %d %v", resp.StatusCode, resp.Header)
	}

	if _, err := svc.DeleteTable(ctx, table, nil); err != nil {
		t.Fatalf("delete table: %v", err)
	}
	_, err = client.GetEntity(ctx, "p", "types", nil)
	expectStatus(t, "get from the deleted table", err, http.StatusNotFound)
}

func addOne(ctx context.Context, c *aztables.Client, rk string) error {
	e, _ := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: rk}})
	_, err := c.AddEntity(ctx, e, nil)
	return err
}

func expectStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status {
		t.Fatalf("%s: got %v; want status %d", what, err, status)
	}
	if strings.TrimSpace(re.ErrorCode) == "" {
		t.Fatalf("%s: status %d without an error code", what, status)
	}
}
