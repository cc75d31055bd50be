package main

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/tableserver"
)

// TestServeAccountsAreSeparate: `conform serve --account` adds an account with a table
// namespace of its own (E-account-namespace), driven through the Go SDK.
func TestServeAccountsAreSeparate(t *testing.T) {
	secondKey := base64.StdEncoding.EncodeToString([]byte("the second account's own key!!!!"))
	_, base := startServe(t, "--account", "second:"+secondKey)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}, InsecureAllowCredentialWithHTTP: true}}
	service := func(account, key string) *aztables.ServiceClient {
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
	dev, second := service(tableserver.DevAccountName, tableserver.DevAccountKey), service("second", secondKey)
	if _, err := dev.CreateTable(ctx, "cfaccounts1", nil); err != nil {
		t.Fatalf("create the table in the development account: %v", err)
	}
	pager := second.NewListTablesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tables) != 0 {
			t.Fatalf("the second account lists the development account's table: %v", *page.Tables[0].Name)
		}
	}
	if _, err := second.CreateTable(ctx, "cfaccounts1", nil); err != nil {
		t.Fatalf("the same name in the second account: %v", err)
	}
	if _, err := second.DeleteTable(ctx, "cfaccounts1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.NewClient("cfaccounts1").GetAccessPolicy(ctx, nil); err != nil {
		t.Fatalf("deleting the second account's table touched the development account's: %v", err)
	}
}
