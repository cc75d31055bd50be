package provision

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// rootEnv names the repository root explicitly.
const rootEnv = "CONFORM_ROOT"

// findRoot returns the repository root: the one configured, $CONFORM_ROOT, the nearest
// directory above the working directory that is a checkout of conform (isCheckout: another
// project with go.mod and package.json is not), or the root this file was compiled from
// unless that is read-only (a binary built by `go install` was compiled from Go's module
// cache, where nothing can be installed).
func findRoot(configured string) (string, error) {
	if configured != "" {
		return checkRoot(configured)
	}
	if env := os.Getenv(rootEnv); env != "" {
		return checkRoot(env)
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if isCheckout(dir) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if dir := compiledRoot(); dir != "" {
		return dir, nil
	}
	return "", errors.New("cannot find the repository root (a directory with go.mod and package.json); set " + rootEnv)
}

func checkRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if !isRoot(abs) {
		return "", errors.New(abs + " holds no go.mod and package.json")
	}
	return abs, nil
}

// conformModule is the module path of conform's go.mod.
const conformModule = "github.com/tableconform/conform"

// isCheckout reports whether dir is the root of a checkout of conform: isRoot, and its
// go.mod names conform's module.
func isCheckout(dir string) bool {
	if !isRoot(dir) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == conformModule
		}
	}
	return false
}

func isRoot(dir string) bool {
	for _, f := range []string{"go.mod", "package.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// compiledRoot returns the writable repository root this file was compiled from, or "".
var compiledRoot = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	dir := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm()&0o200 == 0 || !isCheckout(dir) {
		return ""
	}
	return dir
}
