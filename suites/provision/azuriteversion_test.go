package provision

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNpm puts a stand-in npm first on PATH. Its body runs in the install folder with npm's
// arguments; runs counts its runs in a file.
func fakeNpm(t *testing.T, body string) (runs string) {
	t.Helper()
	bin := t.TempDir()
	runs = filepath.Join(bin, "runs")
	script := "#!/bin/sh\necho \"$@\" >> " + runs + "\n" + body
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return runs
}

// fakeAzuriteInstall is a stand-in npm's body that installs an Azurite of the version its
// last argument names (azurite@VERSION), with a table service that knows flags.
func fakeAzuriteInstall(flags ...string) string {
	var declared []string
	for _, f := range flags {
		declared = append(declared, `\"`+f+`\"`)
	}
	return `for a in "$@"; do spec="$a"; done
v="${spec#azurite@}"
mkdir -p node_modules/azurite/dist/src/table
printf '{"name":"azurite","version":"%s"}' "$v" > node_modules/azurite/package.json
echo "args.option([\"\", \"tableHost\"], ` + strings.Join(declared, ", ") + `);" > node_modules/azurite/dist/src/table/TableEnvironment.js
echo "// table service" > node_modules/azurite/dist/src/table/main.js
`
}

func npmRuns(t *testing.T, runs string) []string {
	t.Helper()
	b, err := os.ReadFile(runs)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestCacheDirFollowsTheVariable(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheDirEnv, dir)
	if got, err := CacheDir(""); err != nil || got != dir {
		t.Errorf("CacheDir = %q, %v; want %q", got, err, dir)
	}
	if got, _ := CacheDir(filepath.Join(dir, "x")); got != filepath.Join(dir, "x") {
		t.Errorf("a configured folder is not used: %q", got)
	}
	t.Setenv(CacheDirEnv, "")
	if got, err := CacheDir(""); err == nil && !strings.HasSuffix(got, string(filepath.Separator)+"conform") {
		t.Errorf("default cache %q does not end in conform", got)
	}
}

// TestEnsureVersionInstalledOncePerVersion installs a version into the cache through a
// stand-in npm, non-interactively, once even when three processes race, and says so.
func TestEnsureVersionInstalledOncePerVersion(t *testing.T) {
	cache := t.TempDir()
	runs := fakeNpm(t, "sleep 0.3\n"+fakeAzuriteInstall("inMemoryPersistence"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		lines []string
	)
	errs := make([]error, 3)
	dirs := make([]string, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = ensureVersionInstalled(ctx, cache, "3.29.0", func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() })
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(cache, "azurite", "3.29.0"); dirs[i] != want {
			t.Errorf("installed into %q, want %q", dirs[i], want)
		}
	}
	got := npmRuns(t, runs)
	if len(got) != 1 || !strings.HasPrefix(got[0], "install ") || !strings.HasSuffix(got[0], " azurite@3.29.0") ||
		!strings.Contains(got[0], "--ignore-scripts") {
		t.Errorf("npm runs %q, want one non-interactive install of azurite@3.29.0", got)
	}
	if len(lines) < 2 || !strings.Contains(lines[0], "installing Azurite 3.29.0 from npm into "+filepath.Join(cache, "azurite", "3.29.0")) ||
		!strings.Contains(lines[len(lines)-1], "installed Azurite 3.29.0") {
		t.Errorf("progress lines %q", lines)
	}
	// Another version is another install; the same one is none.
	if _, err := ensureVersionInstalled(ctx, cache, "3.30.0", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureVersionInstalled(ctx, cache, "3.29.0", nil); err != nil {
		t.Fatal(err)
	}
	if got := npmRuns(t, runs); len(got) != 2 {
		t.Errorf("npm ran %d times for two versions: %q", len(got), got)
	}
}

func TestEnsureVersionInstalledSaysWhileItWaits(t *testing.T) {
	old := progressInterval
	progressInterval = 100 * time.Millisecond
	t.Cleanup(func() { progressInterval = old })
	fakeNpm(t, "sleep 1\n"+fakeAzuriteInstall())
	var lines []string
	var mu sync.Mutex
	if _, err := ensureVersionInstalled(context.Background(), t.TempDir(), "3.20.1", func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	still := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "still installing Azurite 3.20.1 from npm (") {
			still++
		}
	}
	if still < 3 {
		t.Errorf("%d progress lines during a 1 s install at 100 ms intervals: %q", still, lines)
	}
}

func TestEnsureVersionInstalledFailuresAreOneClearLine(t *testing.T) {
	for _, tc := range []struct {
		name, npm string
		timeout   time.Duration
		want      string
	}{
		{"registry unreachable", "echo 'npm error code ENOTFOUND' >&2\necho 'npm error network request to https://registry.npmjs.org/azurite failed' >&2\nexit 1\n", 0,
			"npm cannot reach its registry (ENOTFOUND)"},
		{"version unknown", "echo 'npm error code ETARGET' >&2\necho 'npm error notarget No matching version found for azurite@3.99.0.' >&2\nexit 1\n", 0,
			"npm has no Azurite 3.99.0"},
		{"other failure", "echo 'npm error disk on fire' >&2\nexit 1\n", 0, "npm error disk on fire"},
		{"too slow", "sleep 30\n", 500 * time.Millisecond, "did not finish in time"},
		{"wrong version left", fakeAzuriteInstall() + "printf '{\"version\":\"3.1.0\"}' > node_modules/azurite/package.json\n", 0, `left version "3.1.0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeNpm(t, tc.npm)
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := ensureVersionInstalled(ctx, t.TempDir(), "3.99.0", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "log: ") {
				t.Errorf("got %v, want one line saying %q and naming the log", err, tc.want)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
	t.Run("npm missing", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := ensureVersionInstalled(context.Background(), t.TempDir(), "3.29.0", nil)
		if err == nil || !strings.Contains(err.Error(), "npm is not installed") {
			t.Errorf("got %v", err)
		}
	})
}

func TestVersionArgsFollowTheFlagsAVersionKnows(t *testing.T) {
	old := t.TempDir()
	dir := filepath.Join(old, "node_modules", "azurite", "dist", "src", "table")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(old, "node_modules", "azurite")
	write := func(src string) {
		if err := os.WriteFile(filepath.Join(dir, "TableEnvironment.js"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`args.option(["", "tableHost"], "skipApiVersionCheck");`)
	got := strings.Join(versionArgs(pkg)(10002, "/data"), " ")
	if got != "--tableHost 127.0.0.1 --tablePort 10002 --location /data --skipApiVersionCheck" {
		t.Errorf("an old version's command line: %q", got)
	}
	write(`"inMemoryPersistence" "disableTelemetry" "skipApiVersionCheck"`)
	got = strings.Join(versionArgs(pkg)(10002, "/data"), " ")
	if got != "--tableHost 127.0.0.1 --tablePort 10002 --inMemoryPersistence --disableTelemetry --skipApiVersionCheck" {
		t.Errorf("a new version's command line: %q", got)
	}
}

// TestOpenAzuriteOutsideACheckoutUsesTheCache: a binary run outside any checkout (no
// CONFORM_ROOT, no repository above the working directory, compiled elsewhere) installs the
// pinned Azurite into conform's cache rather than asking for CONFORM_ROOT.
func TestOpenAzuriteOutsideACheckoutUsesTheCache(t *testing.T) {
	old := compiledRoot
	compiledRoot = func() string { return "" }
	t.Cleanup(func() { compiledRoot = old })
	// The working directory is another project with go.mod and package.json: not conform's.
	project := t.TempDir()
	for f, body := range map[string]string{"go.mod": "module example.com/app\n", "package.json": "{}\n", "package-lock.json": "{}\n"} {
		if err := os.WriteFile(filepath.Join(project, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(project)
	t.Setenv(rootEnv, "")
	cache := t.TempDir()
	t.Setenv(CacheDirEnv, cache)
	runs := fakeNpm(t, "echo 'npm error code EAI_AGAIN' >&2\nexit 1\n")
	for _, target := range []string{Azurite, AzuritePrefix + "3.29.0"} {
		_, err := Open(context.Background(), target)
		if err == nil || strings.Contains(err.Error(), rootEnv) || !strings.Contains(err.Error(), "npm cannot reach its registry") {
			t.Errorf("Open(%s) outside a checkout: %v, want npm's install into the cache tried", target, err)
		}
	}
	got := npmRuns(t, runs)
	if len(got) != 2 || !strings.HasSuffix(got[0], " azurite@"+azuriteCurrent.version) || !strings.HasSuffix(got[1], " azurite@3.29.0") {
		t.Errorf("npm runs %q, want the pinned version then 3.29.0", got)
	}
	if _, err := os.Stat(filepath.Join(cache, "azurite", azuriteCurrent.version, "npm-install.log")); err != nil {
		t.Errorf("no install log in the cache: %v", err)
	}
	// A root named explicitly is never replaced by the cache.
	t.Setenv(rootEnv, t.TempDir())
	if _, err := Open(context.Background(), Azurite); err == nil || !strings.Contains(err.Error(), "go.mod and package.json") {
		t.Errorf("a wrong %s: %v", rootEnv, err)
	}
}

// TestOpenAzuriteVersionFromNpm installs a real published Azurite other than the pinned one
// into a fresh cache and runs a batch through it (tens of seconds; needs the npm registry).
func TestOpenAzuriteVersionFromNpm(t *testing.T) {
	if testing.Short() {
		t.Skip("installs Azurite 3.29.0 from npm")
	}
	if os.Getenv("CONFORM_TEST_NPM_VERSIONS") == "" {
		t.Skip("set CONFORM_TEST_NPM_VERSIONS=1 to install Azurite 3.29.0 from the npm registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tg := openOrSkip(t, ctx, AzuritePrefix+"3.29.0", WithCacheDir(t.TempDir()))
	if tg.Info.Name != "azurite@3.29.0" || tg.Info.Kind != "azurite" || tg.Info.Version != "3.29.0" {
		t.Errorf("info %+v", tg.Info)
	}
	batchRoundTrip(t, ctx, tg.Backend)
}

// TestOpenAzuriteVersionWithoutTableService: a 3.x release from before the table service
// (3.11.0 has only blob and queue) is refused in one line that says so.
func TestOpenAzuriteVersionWithoutTableService(t *testing.T) {
	fakeNpm(t, fakeAzuriteInstall()+"rm -r node_modules/azurite/dist/src/table\n")
	_, err := Open(context.Background(), AzuritePrefix+"3.11.0", WithCacheDir(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "has no table service") || !strings.HasPrefix(err.Error(), "azurite@3.11.0: ") {
		t.Errorf("got %v", err)
	}
}
