package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/tableserver"
)

// TestServeDataKeepsACLsAndServiceProperties: with --data, a table's stored access
// policies and the account's service properties (its CORS rules among them) are
// acknowledged writes like any other: they survive a killed process, for the development
// account and for one given with --account.
func TestServeDataKeepsACLsAndServiceProperties(t *testing.T) {
	dir := t.TempDir()
	secondKey := "c2Vjb25kIGFjY291bnQncyBrZXkgZm9yIHRoZSB0ZXN0"
	args := []string{"--data", dir, "--account", "second:" + secondKey}
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, InsecureAllowCredentialWithHTTP: true}}
	service := func(base, account, key string) *aztables.ServiceClient {
		t.Helper()
		cred, err := aztables.NewSharedKeyCredential(account, key)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := aztables.NewServiceClientWithSharedKey(base+"/"+account, cred, opts)
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	accounts := []struct{ name, key, origin string }{
		{tableserver.DevAccountName, tableserver.DevAccountKey, "https://dev.conform.example"},
		{"second", secondKey, "https://second.conform.example"},
	}

	p := startServeProcess(t, args...)
	for _, a := range accounts {
		svc := service(p.base, a.name, a.key)
		if _, err := svc.CreateTable(ctx, "cfsettings1", nil); err != nil {
			t.Fatal(err)
		}
		policy := []*aztables.SignedIdentifier{{ID: to.Ptr("policy-of-" + a.name), AccessPolicy: &aztables.AccessPolicy{
			Start: to.Ptr(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Expiry: to.Ptr(time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)), Permission: to.Ptr("r")}}}
		if _, err := svc.NewClient("cfsettings1").SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: policy}); err != nil {
			t.Fatal(err)
		}
		cors := []*aztables.CorsRule{{AllowedOrigins: to.Ptr(a.origin), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr[int32](60)}}
		if _, err := svc.SetProperties(ctx, aztables.ServiceProperties{Cors: cors}, nil); err != nil {
			t.Fatal(err)
		}
	}
	p.stop(t, os.Kill)

	p = startServeProcess(t, args...)
	defer p.stop(t, os.Interrupt)
	for _, a := range accounts {
		svc := service(p.base, a.name, a.key)
		acl, err := svc.NewClient("cfsettings1").GetAccessPolicy(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(acl.SignedIdentifiers) != 1 || *acl.SignedIdentifiers[0].ID != "policy-of-"+a.name {
			t.Errorf("%s: after a restart the table's stored access policies are %d, want the one set before", a.name, len(acl.SignedIdentifiers))
		}
		props, err := svc.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(props.Cors) != 1 || *props.Cors[0].AllowedOrigins != a.origin {
			t.Errorf("%s: after a restart the account's CORS rules are %d, want the one set before", a.name, len(props.Cors))
		}
	}
}
