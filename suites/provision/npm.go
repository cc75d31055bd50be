package provision

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// cacheDir is the git-ignored directory, under the repository root, for install folders,
// lock files and install logs.
const cacheDir = ".cache"

// installMarker is written into node_modules after a successful `npm ci`; it holds the
// hash of the lock file that was installed.
const installMarker = ".conform-installed"

// npmPackage is an npm manifest (package.json + package-lock.json) committed in the
// repository and the folder it is installed into.
type npmPackage struct {
	// name names the install in lock and log files.
	name string
	// manifestDir holds the committed package.json and package-lock.json, relative to
	// the repository root ("" for the root itself).
	manifestDir string
	// installDir is where node_modules goes, relative to the root.
	installDir string
}

// ensureInstalled installs p with `npm ci --no-audit --no-fund` unless the install is
// already complete for the committed lock file, and returns the install folder. Two
// processes that race take turns on a lock file; the second finds the first's install.
func ensureInstalled(ctx context.Context, root string, p npmPackage) (string, error) {
	dir := filepath.Join(root, p.installDir)
	lock, err := os.ReadFile(filepath.Join(root, p.manifestDir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("read the committed npm lock file: %w", err)
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	if installed(dir, want) {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Join(root, cacheDir), 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, filepath.Join(root, cacheDir, "npm-"+p.name+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if installed(dir, want) { // another process finished while we waited
		return dir, nil
	}
	if p.manifestDir != p.installDir {
		if err := copyManifest(filepath.Join(root, p.manifestDir), dir); err != nil {
			return "", err
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("npm is not installed (conform needs Node.js 20 or later with npm to run Azurite)")
	}
	logPath := filepath.Join(root, cacheDir, "npm-"+p.name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("npm ci did not finish in time (%v); log: %s", ctx.Err(), logPath)
		}
		return "", fmt.Errorf("npm ci failed (%v): %s; log: %s", err, lastLine(logPath), logPath)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", installMarker), []byte(want+"\n"), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// installed reports whether dir's node_modules was installed by ensureInstalled from the
// lock file whose hash is want.
func installed(dir, want string) bool {
	got, err := os.ReadFile(filepath.Join(dir, "node_modules", installMarker))
	return err == nil && strings.TrimSpace(string(got)) == want
}

func copyManifest(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		if old, err := os.ReadFile(filepath.Join(to, f)); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// packageVersion returns the version field of dir/package.json.
func packageVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
	}
	return m.Version, nil
}

// pinnedVersion returns the version of dependency dep that dir/package.json pins.
func pinnedVersion(dir, dep string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var m struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
	}
	v, ok := m.Dependencies[dep]
	if !ok {
		return "", fmt.Errorf("%s does not depend on %s", filepath.Join(dir, "package.json"), dep)
	}
	return v, nil
}

// lastLine returns the last non-empty line of a log file, for one-line errors.
func lastLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no output)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return "(no output)"
}

// InstallNodeTools installs the repository's pinned npm packages (Azurite and the
// JavaScript Table SDK, from the root package-lock.json) unless they are installed
// already, and returns the folder that holds node_modules. It is the one installer: the
// Makefile, `conform setup` and the tests that need Node.js packages all call it, so a
// completed install is never redone while another process uses it.
func InstallNodeTools(ctx context.Context, opts ...Option) (string, error) {
	cfg := defaults()
	for _, o := range opts {
		o(&cfg)
	}
	root, err := findRoot(cfg.root)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.installTimeout)
	defer cancel()
	return ensureInstalled(ctx, root, azuriteCurrent.pkg)
}
