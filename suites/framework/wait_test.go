package framework

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// A rule that needs a deleted table's name again must be passable by the real service,
// which keeps the name for at least 40 s (issue 20, item 18): against a real endpoint the
// wait is at least that, against the reference and local emulators a few seconds.
func TestDeletedNameWaitFollowsTheDocumentedDelay(t *testing.T) {
	cases := []struct {
		info  driver.Info
		local bool
	}{
		{driver.Info{Kind: "reference"}, true},
		{driver.Info{Kind: "reference-http", Endpoint: "http://127.0.0.1:40123/devstoreaccount1"}, true},
		{driver.Info{Kind: "azurite", Endpoint: "http://localhost:10002/devstoreaccount1"}, true},
		{driver.Info{Kind: "endpoint", Endpoint: "http://[::1]:8902/acct"}, true},
		{driver.Info{Kind: "endpoint", Endpoint: "https://acct.table.core.windows.net"}, false},
		{driver.Info{Kind: "endpoint", Endpoint: "https://acct.table.cosmos.azure.com:443/"}, false},
	}
	for _, c := range cases {
		bound := NameReuseBound(c.info)
		if IsLocal(c.info) != c.local {
			t.Errorf("IsLocal(%+v) = %v", c.info, !c.local)
		}
		if !c.local && bound < spec.TableNameReuseDelay {
			t.Errorf("%s: waits %s for a deleted name, less than the documented %s: the real service could never pass", c.info.Endpoint, bound, spec.TableNameReuseDelay)
		}
		if c.local && bound > 10*time.Second {
			t.Errorf("%+v: waits %s on a local backend", c.info, bound)
		}
		if bound+20*time.Second > DefaultSpecTimeout {
			t.Errorf("%+v: a wait of %s leaves a spec less than 20 s of its %s", c.info, bound, DefaultSpecTimeout)
		}
	}
}

func TestWhileBeingDeletedWaitsAndSaysSo(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	defer SetProgress(progressFn)
	SetProgress(func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() })
	tries := 0
	waited, err := WhileBeingDeleted(context.Background(), "re-creating t", time.Minute, time.Millisecond, time.Nanosecond,
		func(context.Context) error {
			if tries++; tries < 5 {
				return spec.ErrTableBeingDeleted.New()
			}
			return nil
		})
	if err != nil || tries != 5 {
		t.Fatalf("a name held for four tries: %d tries, waited %s, %v", tries, waited, err)
	}
	mu.Lock()
	n := len(lines)
	mu.Unlock()
	if n < 2 || !strings.Contains(lines[0], "TableBeingDeleted") {
		t.Errorf("progress lines while waiting four tries, one due at each: %q", lines)
	}
	_, err = WhileBeingDeleted(context.Background(), "re-creating t", 50*time.Millisecond, 10*time.Millisecond, time.Hour,
		func(context.Context) error { return spec.ErrTableBeingDeleted.New() })
	if e, ok := driver.AsError(err); !ok || e.Code != spec.ErrTableBeingDeleted.Code {
		t.Errorf("a name still held at the bound: want the last 409, got %v", err)
	}
}
