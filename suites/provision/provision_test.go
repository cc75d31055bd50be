package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
)

// openOrSkip opens target, skipping when the machine lacks what it needs (Node.js, a
// Docker engine) and failing on any other error.
func openOrSkip(t *testing.T, ctx context.Context, target string, opts ...Option) *Target {
	t.Helper()
	tg, err := Open(ctx, target, opts...)
	if err != nil {
		if errors.Is(err, ErrDockerUnavailable) || strings.Contains(err.Error(), "is not installed") {
			t.Skip(err.Error())
		}
		t.Fatalf("Open(%q): %v", target, err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tg
}

// batchRoundTrip checks create table, insert, get, query and a batch on b.
func batchRoundTrip(t *testing.T, ctx context.Context, b api.Backend) {
	t.Helper()
	if err := roundTrip(ctx, b); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	table := fmt.Sprintf("provbatch%d", time.Now().UnixNano()%1_000_000_000)
	if err := b.CreateTable(ctx, table); err != nil {
		t.Fatalf("create table: %v", err)
	}
	defer func() { _ = b.DeleteTable(context.Background(), table) }()
	results, err := b.SubmitBatch(ctx, table, []api.BatchOp{
		{Kind: api.BatchInsert, Entity: api.NewEntity("pk", "a", map[string]api.Value{"N": api.Int64(1<<53 + 1)})},
		{Kind: api.BatchInsertOrReplace, Entity: api.NewEntity("pk", "b", nil)},
	})
	if err != nil {
		t.Fatalf("batch: %v", err)
	}
	if len(results) != 2 {
		t.Fatalf("batch: %d results, want 2", len(results))
	}
	got, err := b.GetEntity(ctx, table, "pk", "a", nil)
	if err != nil {
		t.Fatalf("get batch-inserted entity: %v", err)
	}
	if v := got.Properties["N"]; !v.Equal(api.Int64(1<<53 + 1)) {
		t.Errorf("batch-inserted Int64 came back as %v", v)
	}
	page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'pk'"})
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	if len(page.Entities) != 2 {
		t.Errorf("query: %d entities, want 2", len(page.Entities))
	}
}

func TestOpenReference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg := openOrSkip(t, ctx, Reference)
	if tg.Info.Name != Reference || tg.Info.Driver != "inproc" || tg.Info.Endpoint != "" {
		t.Errorf("info = %+v", tg.Info)
	}
	batchRoundTrip(t, ctx, tg.Backend)
}

// Issue 37: "model" opens reference/model in process, with raw HTTP and SAS through the
// reference's server over the same model.
func TestOpenModel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tg, err := Open(ctx, Model)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Info.Name != Model || tg.Info.Kind != Model || tg.Info.Driver != "inproc" || tg.Info.Endpoint != "" {
		t.Errorf("info = %+v", tg.Info)
	}
	if d, ok := tg.Backend.(driver.Describer); !ok || d.Info() != tg.Info {
		t.Errorf("the backend does not describe itself as %+v", tg.Info)
	}
	if !driver.Has(tg.Backend, driver.CapRawHTTP) || !driver.Has(tg.Backend, driver.CapSAS) {
		t.Error("the model has no raw HTTP or SAS capability")
	}
	batchRoundTrip(t, ctx, tg.Backend)
}

func TestOpenReferenceHTTP(t *testing.T) {
	for _, drv := range []string{DriverREST, DriverSDK} {
		t.Run(drv, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tg, err := Open(ctx, ReferenceHTTP, WithDriver(drv))
			if err != nil {
				t.Fatal(err)
			}
			if tg.Info.Driver != drv || !strings.HasPrefix(tg.Info.Endpoint, "http://127.0.0.1:") || strings.Contains(tg.Info.Endpoint, "AccountKey") {
				t.Errorf("info = %+v", tg.Info)
			}
			batchRoundTrip(t, ctx, tg.Backend)
			if err := tg.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := tg.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := tg.Backend.QueryTables(ctx, api.TableQuery{}); !driver.IsTransport(err) {
				t.Errorf("after Close the server still answers: %v", err)
			}
		})
	}
}

// TestOpenAzurite installs Azurite from npm on first use (bounded by the install timeout),
// starts it and drives it through both remote drivers.
func TestOpenAzurite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Azurite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	for _, drv := range []string{DriverREST, DriverSDK} {
		t.Run(drv, func(t *testing.T) {
			start := time.Now()
			tg := openOrSkip(t, ctx, Azurite, WithDriver(drv))
			t.Logf("Azurite %s ready in %v at %s (log %s)", tg.Info.Version, time.Since(start).Round(time.Millisecond), tg.Info.Endpoint, tg.LogPath)
			if tg.Info.Version != azuriteCurrent.version || tg.Info.Kind != "azurite" || tg.Info.Driver != drv {
				t.Errorf("info = %+v", tg.Info)
			}
			opCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			batchRoundTrip(t, opCtx, tg.Backend)
			logPath := tg.LogPath
			if err := tg.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if _, err := tg.Backend.QueryTables(opCtx, api.TableQuery{}); !driver.IsTransport(err) {
				t.Errorf("after Close Azurite still answers: %v", err)
			}
			if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) && os.Getenv("CONFORM_KEEP_LOGS") == "" {
				t.Errorf("log directory of a temporary run kept after Close: %v", err)
			}
		})
	}
}

// TestOpenAzuriteLegacy accepts both outcomes the task allows: the deprecated line works
// for a round trip, or Open says clearly that it does not.
func TestOpenAzuriteLegacy(t *testing.T) {
	if testing.Short() {
		t.Skip("installs and starts Azurite 2.7.1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	tg, err := Open(ctx, AzuriteLegacy)
	if err != nil {
		if strings.Contains(err.Error(), "is not installed") {
			t.Skip(err.Error())
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, AzuriteLegacy+": ") || strings.Contains(msg, "\n") {
			t.Errorf("error is not one line naming the backend: %q", msg)
		}
		t.Logf("azurite-legacy refused, as allowed: %v", err)
		return
	}
	defer tg.Close()
	if tg.Info.Version != azuriteLegacy.version {
		t.Errorf("info = %+v", tg.Info)
	}
	if err := roundTrip(ctx, tg.Backend); err != nil {
		t.Errorf("round trip after a successful Open: %v", err)
	}
}

// TestOpenAzuriteDocker runs the testcontainers path. With a Docker engine it starts
// Azurite's container, runs a batch through it and checks that Close removed the container;
// without one, Open fails fast with ErrDockerUnavailable and one line the test skips with.
func TestOpenAzuriteDocker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	tg, err := Open(ctx, AzuriteDocker)
	elapsed := time.Since(start)
	if err == nil {
		before := azuriteContainers(t, ctx)
		batchRoundTrip(t, ctx, tg.Backend)
		if err := tg.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if after := azuriteContainers(t, ctx); len(after) >= len(before) {
			t.Errorf("Close left the container: %d Azurite containers before Close, %d after", len(before), len(after))
		}
		t.Logf("started, used and removed a container of %s in %v", tg.Info.Endpoint, time.Since(start).Round(time.Millisecond))
		return
	}
	if !errors.Is(err, ErrDockerUnavailable) {
		t.Fatalf("with an engine present Open failed: %v", err)
	}
	var de *DockerUnavailableError
	if !errors.As(err, &de) || len(de.Tried) == 0 {
		t.Errorf("error %T does not list the hosts tried", err)
	}
	if bound := time.Duration(len(de.Tried)+1) * dockerPingTimeout; elapsed > bound {
		t.Errorf("took %v to find no engine, want under %v", elapsed, bound)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, AzuriteDocker+": ") {
		t.Errorf("skip message is not one line naming the backend: %q", msg)
	}
	t.Skip(err.Error())
}

// azuriteContainers lists the ids of the engine's containers, running or not, made from
// the image azurite-docker uses.
func azuriteContainers(t *testing.T, ctx context.Context) []string {
	t.Helper()
	tried, ok := dockerReachable(ctx)
	if !ok {
		t.Fatalf("no engine answers (tried %v)", tried)
	}
	u, err := url.Parse(tried[len(tried)-1])
	if err != nil || u.Scheme != "unix" {
		t.Skipf("listing containers is only done over a unix socket here, not %s", tried[len(tried)-1])
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", u.Path)
	}}}
	defer client.CloseIdleConnections()
	filters := url.QueryEscape(fmt.Sprintf(`{"ancestor":[%q]}`, defaults().dockerImage))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/containers/json?all=1&filters="+filters, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("list containers: %v", err)
	}
	defer resp.Body.Close()
	var list []struct {
		ID string `json:"Id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("list containers: status %d, %v", resp.StatusCode, err)
	}
	ids := make([]string, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return ids
}

// Inside a container (the marker file present), azurite-docker starts only when
// TESTCONTAINERS_HOST_OVERRIDE names a loopback address; outside one it is not needed.
func TestCheckDockerHostInsideContainer(t *testing.T) {
	marker := filepath.Join(t.TempDir(), ".dockerenv")
	saved := insideContainerMarker
	t.Cleanup(func() { insideContainerMarker = saved })
	insideContainerMarker = marker

	t.Setenv(dockerHostOverrideEnv, "")
	if err := checkDockerHost(AzuriteDocker); err != nil {
		t.Errorf("outside a container: %v", err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for host, ok := range map[string]bool{"": false, "10.0.0.1": false, "docker.example": false, "host.docker.internal": false,
		"127.0.0.1": true, "127.0.0.2": true, "localhost": true, "::1": true, "[::1]": true} {
		t.Setenv(dockerHostOverrideEnv, host)
		err := checkDockerHost(AzuriteDocker)
		if ok != (err == nil) {
			t.Errorf("%s=%q: got %v", dockerHostOverrideEnv, host, err)
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrDockerHostUnsafe) || errors.Is(err, ErrDockerUnavailable) {
			t.Errorf("%s=%q: error %v does not match ErrDockerHostUnsafe only", dockerHostOverrideEnv, host, err)
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, AzuriteDocker+": ") || !strings.Contains(msg, dockerHostOverrideEnv+"=127.0.0.1") {
			t.Errorf("not one line naming the backend and the fix: %q", msg)
		}
	}
}

// With an engine answering, Open refuses inside a container without a loopback override,
// before anything is started.
func TestOpenAzuriteDockerRefusesWithoutLoopbackOverride(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pretendInsideContainer(t, ctx)
	t.Setenv(dockerHostOverrideEnv, "")
	before := azuriteContainers(t, ctx)
	tg, err := Open(ctx, AzuriteDocker)
	if err == nil {
		tg.Close()
		t.Fatal("Open started a container without a loopback TESTCONTAINERS_HOST_OVERRIDE inside a container")
	}
	if !errors.Is(err, ErrDockerHostUnsafe) {
		t.Fatalf("Open: %v, want ErrDockerHostUnsafe", err)
	}
	if msg := err.Error(); strings.Count(msg, AzuriteDocker+":") != 1 || strings.Contains(msg, "\n") {
		t.Errorf("not one line naming the backend once: %q", msg)
	}
	if after := azuriteContainers(t, ctx); len(after) != len(before) {
		t.Errorf("a refused Open changed the containers: %d before, %d after", len(before), len(after))
	}
}

const testSecret = "dGhpcy1pcy1hLXNlY3JldC1rZXktZm9yLXRlc3RpbmctMTIzNDU2Nzg5MA=="

func TestOpenUnreachableEndpointFailsFastWithoutSecrets(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		silent.Close()
		<-accepting
		for _, c := range held {
			c.Close()
		}
	}()

	for name, tc := range map[string]struct {
		cs   string
		want string
	}{
		"refused": {"DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + testSecret + ";TableEndpoint=http://" + closed + "/acct", "unreachable"},
		"silent":  {"DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + testSecret + ";TableEndpoint=http://" + silent.Addr().String() + "/acct", "did not answer"},
		"sas":     {"TableEndpoint=http://" + closed + "/acct;SharedAccessSignature=sv=2019-02-02&tn=t&sp=r&sig=" + strings.TrimRight(testSecret, "="), "unreachable"},
	} {
		for _, drv := range []string{DriverREST, DriverSDK} {
			t.Run(name+"/"+drv, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				_, err := Open(ctx, "faraway="+tc.cs, WithDriver(drv), WithProbeTimeout(time.Second))
				if err == nil {
					t.Fatal("Open succeeded")
				}
				if elapsed := time.Since(start); elapsed > 3*time.Second {
					t.Errorf("took %v", elapsed)
				}
				msg := err.Error()
				if strings.Contains(msg, strings.TrimRight(testSecret, "=")) || strings.Contains(msg, "AccountKey=") {
					t.Errorf("error leaks a secret: %s", msg)
				}
				if !strings.HasPrefix(msg, "faraway: ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line starting with the name and saying %q", msg, tc.want)
				}
			})
		}
	}
}

func TestOpenEndpointWithWrongKeyIsReadable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ref := openOrSkip(t, ctx, ReferenceHTTP)
	cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + testSecret + ";TableEndpoint=" + ref.Info.Endpoint
	_, err := Open(ctx, "wrongkey="+cs)
	if err == nil {
		t.Fatal("Open with a wrong key succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, strings.TrimRight(testSecret, "=")) || !strings.Contains(msg, "403") || !strings.HasPrefix(msg, "wrongkey: ") {
		t.Errorf("error %q: want the 403 named, no key", msg)
	}
	good, err := Open(ctx, "local=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+emulatorKey+";TableEndpoint="+ref.Info.Endpoint, WithDriver(DriverSDK))
	if err != nil {
		t.Fatalf("Open with the right key: %v", err)
	}
	defer good.Close()
	if good.Info.Name != "local" || good.Info.Kind != "endpoint" || good.Info.Endpoint != ref.Info.Endpoint || good.Info.Driver != DriverSDK {
		t.Errorf("info = %+v", good.Info)
	}
}

func TestOpenRejectsUnknownNamesAndDrivers(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "azurite-nightly")
	if err == nil || !strings.Contains(err.Error(), Azurite) || !strings.Contains(err.Error(), "NAME=CONNECTION_STRING") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Open(ctx, Reference, WithDriver("grpc")); err == nil || !strings.Contains(err.Error(), "grpc") {
		t.Errorf("unknown driver: %v", err)
	}
	if _, err := Open(ctx, "x=AccountName=a;AccountKey=%%%"); err == nil || strings.Contains(err.Error(), "%%%") {
		t.Errorf("bad connection string: %v", err)
	}
}

func TestNamesDescribeEveryBuiltin(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		if n.Name == "" || n.Description == "" || strings.Contains(n.Description, "\n") {
			t.Errorf("bad entry %+v", n)
		}
		seen[n.Name] = true
	}
	for _, want := range []string{Reference, Model, ReferenceHTTP, Azurite, AzuriteLegacy, AzuriteDocker} {
		if !seen[want] {
			t.Errorf("Names() lacks %s", want)
		}
	}
}

// TestPinnedVersionsMatchManifests keeps the versions in code equal to the exact pins of
// the committed npm manifests.
func TestPinnedVersionsMatchManifests(t *testing.T) {
	root, err := findRoot("")
	if err != nil {
		t.Fatal(err)
	}
	for _, em := range []emulator{azuriteCurrent, azuriteLegacy} {
		pinned, err := pinnedVersion(filepath.Join(root, em.pkg.manifestDir), "azurite")
		if err != nil {
			t.Fatal(err)
		}
		if pinned != em.version {
			t.Errorf("%s: package.json pins %q, code says %q (pins must be exact)", em.name, pinned, em.version)
		}
		if _, err := os.Stat(filepath.Join(root, em.pkg.manifestDir, "package-lock.json")); err != nil {
			t.Errorf("%s: no committed lock file: %v", em.name, err)
		}
	}
}

// TestEnsureInstalledRunsNpmOnceWhenRacing races two installs against a stand-in npm that
// records each run: the lock makes the second find the first's install.
func TestEnsureInstalledRunsNpmOnceWhenRacing(t *testing.T) {
	root := t.TempDir()
	for f, body := range map[string]string{"go.mod": "module x\n", "package.json": "{}\n", "package-lock.json": "{\"lockfileVersion\":3}\n"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	runs := filepath.Join(root, "runs")
	fakeNpm := "#!/bin/sh\nsleep 0.3\nmkdir -p node_modules\necho \"$@\" >> " + runs + "\n"
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(fakeNpm), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = ensureInstalled(ctx, root, npmPackage{name: "fake"}) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1 || lines[0] != "ci --no-audit --no-fund" {
		t.Errorf("npm runs: %q, want exactly one `ci --no-audit --no-fund`", lines)
	}
	// A changed lock file means a new install.
	if err := os.WriteFile(filepath.Join(root, "package-lock.json"), []byte("{\"lockfileVersion\":3,\"x\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ensureInstalled(ctx, root, npmPackage{name: "fake"}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(runs)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Errorf("after a lock change npm ran %d times in all, want 2", n)
	}
}

func TestEnsureInstalledReportsNpmFailureInOneLine(t *testing.T) {
	root := t.TempDir()
	for f, body := range map[string]string{"go.mod": "module x\n", "package.json": "{}\n", "package-lock.json": "{}\n"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte("#!/bin/sh\necho working\necho 'npm error code E404' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err := ensureInstalled(context.Background(), root, npmPackage{name: "fake"})
	if err == nil || !strings.Contains(err.Error(), "npm error code E404") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
}

func TestRedactRemovesKeysAndSignatures(t *testing.T) {
	cs := "AccountName=a;AccountKey=" + testSecret + ";SharedAccessSignature=sv=1&sig=abc%2Bdef"
	msg := redact("key "+testSecret+" url http://h/t?sv=1&sig=abc%2Bdef&x=1 sas sv=1&sig=abc%2Bdef", cs)
	if strings.Contains(msg, testSecret) || strings.Contains(msg, "abc%2Bdef") {
		t.Errorf("redact left a secret: %s", msg)
	}
}

// NAME=env:VARIABLE reads the connection string from the environment: a run against it
// works like one given the string itself, and errors name the variable, never its value.
func TestOpenEndpointFromEnvironment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ref, err := Open(ctx, ReferenceHTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	t.Setenv("CONFORM_TEST_CONN", devConnectionString(ref.Info.Endpoint))
	tg, err := Open(ctx, "me=env:CONFORM_TEST_CONN")
	if err != nil {
		t.Fatalf("Open(me=env:CONFORM_TEST_CONN): %v", err)
	}
	defer tg.Close()
	if tg.Info.Name != "me" || tg.Info.Endpoint != ref.Info.Endpoint {
		t.Errorf("info = %+v, want me at %s", tg.Info, ref.Info.Endpoint)
	}
	if err := roundTrip(ctx, tg.Backend); err != nil {
		t.Errorf("round trip: %v", err)
	}

	t.Setenv("CONFORM_TEST_CONN", "")
	_, err = Open(ctx, "me=env:CONFORM_TEST_CONN")
	if err == nil || !strings.Contains(err.Error(), "CONFORM_TEST_CONN") || !strings.HasPrefix(err.Error(), "me: ") {
		t.Errorf("with the variable empty: %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	t.Setenv("CONFORM_TEST_CONN", "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey="+testSecret+";TableEndpoint=http://"+closed+"/acct")
	_, err = Open(ctx, "me=env:CONFORM_TEST_CONN")
	if err == nil || strings.Contains(err.Error(), strings.TrimRight(testSecret, "=")[:20]) {
		t.Errorf("unreachable endpoint from the environment: %v", err)
	}
}

// Inside a container, Open does not let testcontainers pull a missing image from a
// registry: it fails in one line naming the image and the local build.
func TestOpenAzuriteDockerWithoutLocalImageInsideContainer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pretendInsideContainer(t, ctx)
	t.Setenv(dockerHostOverrideEnv, "127.0.0.1")
	const absent = "mcr.microsoft.com/azure-storage/azurite:0.0.0-absent"
	tg, err := Open(ctx, AzuriteDocker, WithDockerImage(absent))
	if err == nil {
		tg.Close()
		t.Fatal("Open started a container of an image the engine does not hold")
	}
	if !errors.Is(err, ErrDockerImageMissing) {
		t.Fatalf("Open: %v, want ErrDockerImageMissing", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, absent) || !strings.HasPrefix(msg, AzuriteDocker+": ") {
		t.Errorf("not one line naming the backend and the image: %q", msg)
	}
}

// pretendInsideContainer skips t without a Docker engine, and otherwise makes Open see a
// container's marker file (/.dockerenv) until t ends.
func pretendInsideContainer(t *testing.T, ctx context.Context) {
	t.Helper()
	if tried, ok := dockerReachable(ctx); !ok {
		t.Skipf("no Docker engine answers (tried %s)", strings.Join(tried, ", "))
	}
	marker := filepath.Join(t.TempDir(), ".dockerenv")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	saved := insideContainerMarker
	t.Cleanup(func() { insideContainerMarker = saved })
	insideContainerMarker = marker
}
