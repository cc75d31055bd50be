package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/provision"
)

// open starts target with this driver, skipping where the machine lacks Node.js.
func open(t *testing.T, target string) *provision.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	tg, err := provision.Open(ctx, target, provision.WithDriver(provision.DriverSDK))
	if err != nil {
		if errors.Is(err, provision.ErrDockerUnavailable) || strings.Contains(err.Error(), "is not installed") {
			t.Skip(err.Error())
		}
		t.Fatalf("open %s: %v", target, err)
	}
	t.Cleanup(func() { _ = tg.Close() })
	if tg.Info.Driver != "sdk" {
		t.Fatalf("%s opened with driver %q, want sdk", target, tg.Info.Driver)
	}
	return tg
}

func TestAgainstReferenceHTTP(t *testing.T) {
	exercise(t, open(t, provision.ReferenceHTTP).Backend)
}

func TestAgainstAzurite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Azurite")
	}
	exercise(t, open(t, provision.Azurite).Backend)
}
