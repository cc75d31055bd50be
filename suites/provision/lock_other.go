//go:build !unix

package provision

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// lockFile takes an exclusive lock by creating path, polling until ctx ends. A lock left
// by a dead process must be removed by hand.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for another install to finish (%s): %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
