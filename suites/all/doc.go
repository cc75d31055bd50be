// Package all links every spec package into one suite: `go test ./suites/all` runs the whole
// conformance suite against the backends named in CONFORM_BACKENDS (default "reference"),
// and cmd/conform links it the same way. Each spec package is imported by a file of its own
// (one file an area), so areas can be added without touching the others.
//
// It may import every spec package, suites/framework and suites/provision.
package all

import (
	"context"
	"fmt"
	"strings"

	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
)

// SDKSuffix after a backend's name ("azurite+sdk", "cosmos+sdk=CONNECTION_STRING") drives
// that backend through the official Go SDK (aztables) instead of the raw REST driver, so a
// report can show what an application using the SDK sees next to what the service does.
const SDKSuffix = "+sdk"

// Open opens a backend by name or NAME=CONNECTION_STRING for the framework; "mutant:NAME"
// and "mutant:NAME@BASE" open a deliberately wrong backend (suites/driver/mutant); a name
// ending in SDKSuffix uses the SDK driver.
func Open(ctx context.Context, target string) (*framework.Target, error) {
	return OpenWith(ctx, target)
}

// OpenWith is Open with options passed on to provision.Open (conform run --record gives the
// HTTP client).
func OpenWith(ctx context.Context, target string, opts ...provision.Option) (*framework.Target, error) {
	if t, ok, err := openMutant(ctx, target, opts...); ok {
		return t, err
	}
	opts = append([]provision.Option(nil), opts...)
	sdkOpts := len(opts)
	name, conn, hasConn := strings.Cut(target, "=")
	if base, ok := strings.CutSuffix(name, SDKSuffix); ok {
		if base == provision.Reference || base == provision.Model {
			return nil, fmt.Errorf("backend %s: %s runs in process and has no HTTP endpoint for the SDK; use %s%s", name, base, provision.ReferenceHTTP, SDKSuffix)
		}
		opts = append(opts, provision.WithDriver(provision.DriverSDK))
		target = base
		if hasConn {
			target = base + "=" + conn
		}
	}
	t, err := provision.Open(ctx, target, opts...)
	if err != nil {
		return nil, err
	}
	info := t.Info
	if len(opts) > sdkOpts {
		info.Name = name
	}
	return &framework.Target{Backend: t.Backend, Info: info, Close: t.Close}, nil
}
