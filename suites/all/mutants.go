package all

import (
	"context"
	"fmt"

	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
)

// openMutant opens "mutant:NAME" or "mutant:NAME@BASE": the base backend (the mutant's own
// default when none is named) wrapped by the mutant's decorator. ok is false when target
// names no mutant.
func openMutant(ctx context.Context, target string, opts ...provision.Option) (t *framework.Target, ok bool, err error) {
	m, base, ok, err := mutant.ParseTarget(target)
	if !ok || err != nil {
		return nil, ok, err
	}
	b, err := provision.Open(ctx, base, opts...)
	if err != nil {
		return nil, true, fmt.Errorf("%s: base backend: %w", target, err)
	}
	return &framework.Target{Backend: m.Wrap(b.Backend), Info: mutant.Info(m, b.Info), Close: b.Close}, true, nil
}
