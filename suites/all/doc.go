// Package all links every spec package into one suite: `go test ./suites/all` runs the whole
// conformance suite against the backends named in CONFORM_BACKENDS (default "reference"),
// and cmd/conform links it the same way. Each spec package is imported by a file of its own
// (one file an area), so areas can be added without touching the others.
//
// It may import every spec package, suites/framework and suites/provision.
package all

import (
	"context"

	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
)

// Open opens a backend by name or NAME=CONNECTION_STRING for the framework; "mutant:NAME"
// and "mutant:NAME@BASE" open a deliberately wrong backend (suites/driver/mutant).
func Open(ctx context.Context, target string) (*framework.Target, error) {
	if t, ok, err := openMutant(ctx, target); ok {
		return t, err
	}
	t, err := provision.Open(ctx, target)
	if err != nil {
		return nil, err
	}
	return &framework.Target{Backend: t.Backend, Info: t.Info, Close: t.Close}, nil
}
