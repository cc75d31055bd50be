package provision

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// AzuritePrefix starts the backend name that asks for one published Azurite 3.x version
// from npm: "azurite@3.29.0".
const AzuritePrefix = Azurite + "@"

// CacheDirEnv names conform's own cache directory (default: the user's cache directory,
// os.UserCacheDir, joined with "conform"). Azurite versions are installed under its
// azurite/<version>.
const CacheDirEnv = "CONFORM_CACHE_DIR"

// azuriteVersionPattern is the form of the versions azurite@VERSION accepts: a release of
// the 3.x line, the one that has a table service.
var azuriteVersionPattern = regexp.MustCompile(`^3\.[0-9]+\.[0-9]+$`)

// progressInterval is the longest an npm install goes without a progress line.
var progressInterval = 20 * time.Second

// CacheDir returns conform's cache directory: configured, else $CONFORM_CACHE_DIR, else
// os.UserCacheDir()/conform.
func CacheDir(configured string) (string, error) {
	if configured != "" {
		return filepath.Abs(configured)
	}
	if env := strings.TrimSpace(os.Getenv(CacheDirEnv)); env != "" {
		return filepath.Abs(env)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the npm install (%v); set %s", err, CacheDirEnv)
	}
	return filepath.Join(dir, "conform"), nil
}

// azuriteVersionOf returns VERSION of a target azurite@VERSION, and whether target has
// that form. A version outside the 3.x line is an error that says what to use instead.
func azuriteVersionOf(target string) (version string, ok bool, err error) {
	version, ok = strings.CutPrefix(target, AzuritePrefix)
	if !ok {
		return "", false, nil
	}
	switch {
	case strings.HasPrefix(version, "2."):
		return "", true, fmt.Errorf("%s is of Azurite's 2.x line: use %s (Azurite %s)", version, AzuriteLegacy, azuriteLegacy.version)
	case !azuriteVersionPattern.MatchString(version):
		return "", true, fmt.Errorf("%q is not an Azurite 3.x release (want %sMAJOR.MINOR.PATCH, e.g. %s%s; `npm view azurite versions` lists them)",
			version, AzuritePrefix, AzuritePrefix, azuriteCurrent.version)
	}
	return version, true, nil
}

// azuriteAt is the emulator of one published Azurite 3.x version, installed from npm into
// the cache rather than from the repository's lock file. Its command line is chosen once
// installed, by the flags that version knows (tableFlags).
func azuriteAt(version string) emulator {
	return emulator{name: AzuritePrefix + version, version: version, entry: azuriteCurrent.entry}
}

// tableFlags reads which of the optional table-service flags an installed Azurite knows
// (each came in a later 3.x release; 3.20.1 has only --skipApiVersionCheck of the three).
// Every release declares its flags, by name, in its TableEnvironment module.
func tableFlags(pkgDir string) map[string]bool {
	src, _ := os.ReadFile(filepath.Join(pkgDir, "dist", "src", "table", "TableEnvironment.js"))
	known := map[string]bool{}
	for _, flag := range []string{"inMemoryPersistence", "disableTelemetry", "skipApiVersionCheck"} {
		known[flag] = strings.Contains(string(src), `"`+flag+`"`)
	}
	return known
}

// versionArgs returns the command line of an installed Azurite's table service on port:
// in memory where it can be, else with its database under dataDir.
func versionArgs(pkgDir string) func(port int, dataDir string) []string {
	known := tableFlags(pkgDir)
	return func(port int, dataDir string) []string {
		args := []string{"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(port)}
		if known["inMemoryPersistence"] {
			args = append(args, "--inMemoryPersistence")
		} else {
			args = append(args, "--location", dataDir)
		}
		if known["disableTelemetry"] {
			args = append(args, "--disableTelemetry")
		}
		if known["skipApiVersionCheck"] {
			args = append(args, "--skipApiVersionCheck")
		}
		return args
	}
}

// azuriteInstallDir is where ensureVersionInstalled puts Azurite version.
func azuriteInstallDir(cache, version string) string {
	return filepath.Join(cache, "azurite", version)
}

// ensureVersionInstalled installs azurite@version with npm into cache/azurite/<version>
// unless a completed install is there, and returns that folder (it holds node_modules).
// The install is non-interactive, says what it does through progress at least every
// progressInterval, and ends with ctx. Two processes that race take turns on a lock file.
func ensureVersionInstalled(ctx context.Context, cache, version string, progress func(string)) (string, error) {
	dir := azuriteInstallDir(cache, version)
	want := "azurite@" + version
	if installed(dir, want) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the install folder: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".install.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if installed(dir, want) { // another process finished while we waited
		return dir, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed: installing Azurite %s needs Node.js 20 or later with npm", version)
	}
	// A manifest of its own keeps npm from climbing to a package.json above the cache.
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"conform-azurite","private":true}`+"\n"), 0o644); err != nil {
		return "", err
	}
	logPath := filepath.Join(dir, "npm-install.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--no-package-lock",
		"--omit=dev", "--ignore-scripts", "--no-progress", want)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Stdin = nil
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_yes=true")
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	say := func(string) {}
	if progress != nil {
		say = progress
	}
	start := time.Now()
	say(fmt.Sprintf("installing Azurite %s from npm into %s (once per version; log: %s)", version, dir, logPath))
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start npm: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case err = <-done:
		case <-tick.C:
			say(fmt.Sprintf("still installing Azurite %s from npm (%s so far)", version, time.Since(start).Round(time.Second)))
			continue
		}
		break
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("npm install %s did not finish in time (%v after %s); log: %s", want, ctx.Err(), time.Since(start).Round(time.Second), logPath)
		}
		return "", npmInstallError(want, version, logPath, err)
	}
	pkgDir := filepath.Join(dir, "node_modules", "azurite")
	got, err := packageVersion(pkgDir)
	if err != nil || got != version {
		return "", fmt.Errorf("npm install %s left version %q in %s, not %s; log: %s", want, got, pkgDir, version, logPath)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", installMarker), []byte(want+"\n"), 0o644); err != nil {
		return "", err
	}
	say(fmt.Sprintf("installed Azurite %s in %s", version, time.Since(start).Round(time.Second)))
	return dir, nil
}

// npmNetworkCodes are npm's error codes for a registry it cannot reach.
var npmNetworkCodes = []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH", "ERR_SOCKET_TIMEOUT"}

// npmInstallError says in one line why npm failed: the registry out of reach, a version
// npm does not know, or npm's last line.
func npmInstallError(want, version, logPath string, err error) error {
	log, _ := os.ReadFile(logPath)
	text := string(log)
	for _, code := range npmNetworkCodes {
		if strings.Contains(text, code) {
			return fmt.Errorf("npm cannot reach its registry (%s) to install %s; check the network or npm's registry setting (npm config get registry); log: %s", code, want, logPath)
		}
	}
	if strings.Contains(text, "ETARGET") || strings.Contains(text, "E404") {
		return fmt.Errorf("npm has no Azurite %s (`npm view azurite versions` lists the published ones); log: %s", version, logPath)
	}
	return fmt.Errorf("npm install %s failed (%v): %s; log: %s", want, err, lastLine(logPath), logPath)
}
