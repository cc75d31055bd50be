//go:build !unix

package persist

import (
	"os"
	"path/filepath"
)

// lockDir opens dir/LOCK; without flock, nothing stops a second process.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o644)
}
