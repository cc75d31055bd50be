package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/suites/provision"
)

// startServe runs `conform serve` on a free loopback port and returns its connection
// string and base URL; the server is stopped with SIGINT when the test ends.
func startServe(t *testing.T, extra ...string) (conn, base string) {
	t.Helper()
	cmd := exec.Command(conformBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("conform serve did not stop on SIGINT")
		}
	})
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(30 * time.Second)
	for conn == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("conform serve ended before printing its connection string")
			}
			if strings.HasPrefix(l, "DefaultEndpointsProtocol=") {
				conn = l
			}
		case <-deadline:
			t.Fatal("conform serve printed no connection string")
		}
	}
	go func() {
		for range lines {
		}
	}()
	m := regexp.MustCompile(`TableEndpoint=(https?://[^/;]+)`).FindStringSubmatch(conn)
	if m == nil {
		t.Fatalf("no endpoint in %q", conn)
	}
	return conn, m[1]
}

// repoRoot is the module's root, where node_modules is installed.
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TestServeWithTheJavaScriptSDK drives `conform serve` through @azure/data-tables
// (scripts/js-sdk-check.mjs).
func TestServeWithTheJavaScriptSDK(t *testing.T) {
	runNodeCheck(t, "js-sdk-check.mjs", "@azure/data-tables", "cfjscheck1")
}

// TestServeTLSWithTheJavaScriptSDK drives `conform serve --tls` through @azure/data-tables
// over https, trusting the generated CA (NODE_EXTRA_CA_CERTS); the script's SAS tokens then
// carry spr=https.
func TestServeTLSWithTheJavaScriptSDK(t *testing.T) {
	dir := t.TempDir()
	runNodeCheck(t, "js-sdk-check.mjs", "@azure/data-tables", "cfjscheck2", "--tls", "--tls-dir", dir)
}

// TestServeWithTheLegacyNodeSDK drives `conform serve` through Microsoft's legacy
// azure-storage Node SDK (scripts/legacy-node-check.cjs).
func TestServeWithTheLegacyNodeSDK(t *testing.T) {
	runNodeCheck(t, "legacy-node-check.cjs", "azure-storage", "cflegacycheck1")
}

// runNodeCheck installs the pinned npm packages, starts `conform serve` and runs a check
// script of scripts/ against it; the script prints "<name>: ok" when every answer was as
// expected. It skips, with one line, where Node, npm or the package is missing.
// Extra arguments go to conform serve; with --tls-dir the script trusts that CA.
func runNodeCheck(t *testing.T, script, pkg, table string, serveArgs ...string) {
	root := repoRoot(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	installCtx, cancelInstall := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancelInstall()
	if _, err := provision.InstallNodeTools(installCtx, provision.WithRoot(root)); err != nil {
		t.Skipf("%s could not be installed (offline?): %v", pkg, err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", pkg, "package.json")); err != nil {
		t.Skipf("%s is not installed in node_modules", pkg)
	}
	conn, _ := startServe(t, serveArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("scripts", script))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CONFORM_CONNECTION_STRING="+conn, "CONFORM_TABLE="+table)
	for i, a := range serveArgs {
		if a == "--tls-dir" && i+1 < len(serveArgs) {
			cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+filepath.Join(serveArgs[i+1], tlsCAFile))
		}
	}
	out, err := cmd.CombinedOutput()
	marker := strings.TrimSuffix(strings.TrimSuffix(script, ".mjs"), ".cjs") + ": ok"
	if err != nil || !strings.Contains(string(out), marker) {
		t.Fatalf("%s against conform serve: %v\n%s", pkg, err, out)
	}
}

// TestServeWithCurl talks to an anonymous `conform serve` with plain HTTP, as curl does.
func TestServeWithCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	_, base := startServe(t, "--allow-anonymous")
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		all := append([]string{"-sS", "-w", "\n%{http_code}", "-H", "x-ms-version: 2019-02-02", "-H", "Accept: application/json;odata=nometadata"}, args...)
		out, err := exec.CommandContext(ctx, curl, all...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	acct := base + "/devstoreaccount1"
	if out := run("-X", "POST", "-H", "Content-Type: application/json", "-d", `{"TableName":"cfcurl1"}`, acct+"/Tables"); !strings.HasSuffix(out, "201") {
		t.Fatalf("create table: %s", out)
	}
	if out := run("-X", "POST", "-H", "Content-Type: application/json", "-d", `{"PartitionKey":"p","RowKey":"r","Name":"curl"}`, acct+"/cfcurl1"); !strings.HasSuffix(out, "201") {
		t.Fatalf("insert: %s", out)
	}
	out := run(acct + "/cfcurl1(PartitionKey='p',RowKey='r')")
	if !strings.HasSuffix(out, "200") || !strings.Contains(out, `"Name":"curl"`) {
		t.Fatalf("get: %s", out)
	}
	// Without --allow-anonymous the same request is refused.
	_, strict := startServe(t)
	resp, err := http.Get(strict + "/devstoreaccount1/Tables")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 && resp.StatusCode != 403 {
		t.Fatalf("anonymous request to a strict server: %d", resp.StatusCode)
	}
}

// TestRunWithAWrongKeyExitsTwo points conform run at a live server with a key it does not
// know: one readable line, exit status 2, and the key printed nowhere.
func TestRunWithAWrongKeyExitsTwo(t *testing.T) {
	_, base := startServe(t)
	out := t.TempDir()
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + secretKey + ";TableEndpoint=" + base + "/devstoreaccount1;"
	stdout, stderr, code := conform(t, "run", "--backend", "wrongkey="+conn, "--out", out)
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "wrongkey") || !strings.Contains(stderr, "403") {
		t.Errorf("stderr should name the backend and the refusal: %q", stderr)
	}
	assertNoSecret(t, out, stdout+stderr)
}

// TestListeningBeyondLoopbackIsWarnedAbout: serve warns, in one line, when it listens
// where others can reach it with the development account's public key. Before, it said
// nothing.
func TestListeningBeyondLoopbackIsWarnedAbout(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		warn bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10002}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 10002}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 10002}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 10002}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 10002}, true},
	} {
		w := exposureWarning(c.addr)
		if (w != "") != c.warn || strings.Contains(w, "\n") {
			t.Errorf("%v: warning %q, want one: %v", c.addr, w, c.warn)
		}
	}
}
