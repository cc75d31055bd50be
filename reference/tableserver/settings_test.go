package tableserver_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
)

// keeperStub keeps what it is given, or fails while failing is set.
type keeperStub struct {
	mu      sync.Mutex
	failing bool
	kept    map[string]tableserver.Settings
}

func (k *keeperStub) SaveSettings(account string, s tableserver.Settings) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failing {
		return errors.New("disk full")
	}
	k.kept[account] = s
	return nil
}

// TestSettingsAreKeptBeforeTheAnswer: a Set Table ACL is answered only once the account's
// keeper kept it, a server started WithSettings serves what was kept, and a change the
// keeper cannot keep is undone and answered 503 ServerBusy (reads go on).
func TestSettingsAreKeptBeforeTheAnswer(t *testing.T) {
	const policy = `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>%s</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
	keeper := &keeperStub{kept: map[string]tableserver.Settings{}}
	backend := reference.New(reference.WithDeleteHold(0))
	ts := httptest.NewServer(tableserver.New(backend, tableserver.WithSettings(tableserver.DevAccountName, tableserver.Settings{}, keeper)))
	defer ts.Close()
	dev := client(t, ts)
	if err := dev.CreateTable(ctx(t), "kept"); err != nil {
		t.Fatal(err)
	}
	if status, _ := aclCall(t, dev, "PUT", "kept", strings.Replace(policy, "%s", "first", 1)); status != 204 {
		t.Fatalf("Set Table ACL: %d", status)
	}
	keeper.mu.Lock()
	kept := keeper.kept[tableserver.DevAccountName]
	keeper.mu.Unlock()
	if ids := kept.ACLs["kept"]; len(ids) != 1 || ids[0].ID != "first" {
		t.Fatalf("kept %+v, want the policy first", kept)
	}

	keeper.mu.Lock()
	keeper.failing = true
	keeper.mu.Unlock()
	if status, body := aclCall(t, dev, "PUT", "kept", strings.Replace(policy, "%s", "second", 1)); status != 503 || !strings.Contains(body, "ServerBusy") {
		t.Fatalf("Set Table ACL the keeper cannot keep: %d %s", status, body)
	}
	if status, body := aclCall(t, dev, "GET", "kept", ""); status != 200 || !strings.Contains(body, "first") || strings.Contains(body, "second") {
		t.Fatalf("after a change that could not be kept: %d %s, want the policy first only", status, body)
	}

	// A server started with what was kept serves it.
	ts2 := httptest.NewServer(tableserver.New(backend, tableserver.WithSettings(tableserver.DevAccountName, kept, nil)))
	defer ts2.Close()
	if status, body := aclCall(t, client(t, ts2), "GET", "kept", ""); status != 200 || !strings.Contains(body, "first") {
		t.Fatalf("a server started with the kept settings: %d %s", status, body)
	}
}

// TestDeletingATableDropsItsKeptPolicies: deleting a table drops its stored access
// policies from what is kept, and a delete of a table without policies keeps nothing
// (no write of the data directory).
func TestDeletingATableDropsItsKeptPolicies(t *testing.T) {
	saves := 0
	keeper := &countingKeeper{saves: &saves}
	ts := httptest.NewServer(tableserver.New(reference.New(reference.WithDeleteHold(0)), tableserver.WithSettings(tableserver.DevAccountName, tableserver.Settings{}, keeper)))
	defer ts.Close()
	dev := client(t, ts)
	for _, name := range []string{"withpolicy", "without"} {
		if err := dev.CreateTable(ctx(t), name); err != nil {
			t.Fatal(err)
		}
	}
	if status, _ := aclCall(t, dev, "PUT", "withpolicy", `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`); status != 204 {
		t.Fatalf("Set Table ACL: %d", status)
	}
	if err := dev.DeleteTable(ctx(t), "without"); err != nil {
		t.Fatal(err)
	}
	if saves != 1 {
		t.Fatalf("%d saves after a delete of a table without policies, want 1 (the Set Table ACL)", saves)
	}
	if err := dev.DeleteTable(ctx(t), "withpolicy"); err != nil {
		t.Fatal(err)
	}
	if saves != 2 || len(keeper.last.ACLs) != 0 {
		t.Fatalf("after deleting the table with policies: %d saves, kept %+v", saves, keeper.last)
	}
}

// countingKeeper counts saves and keeps the last; the server calls it one save at a time.
type countingKeeper struct {
	saves *int
	last  tableserver.Settings
}

func (k *countingKeeper) SaveSettings(_ string, s tableserver.Settings) error {
	*k.saves++
	k.last = s
	return nil
}
