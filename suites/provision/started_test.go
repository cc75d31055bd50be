package provision

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/tableserver"
)

// helperServeEnv makes the test binary a Table server (TestHelperServe) on the address it
// holds, so that the exec: form has a command to start without building conform.
const helperServeEnv = "CONFORM_TEST_HELPER_SERVE"

// TestHelperServe is not a test: started with helperServeEnv set, it serves the reference
// over HTTP on that address until killed.
func TestHelperServe(t *testing.T) {
	addr := os.Getenv(helperServeEnv)
	if addr == "" {
		t.Skip("a helper process for the exec: tests, started by them")
	}
	server := tableserver.New(reference.New())
	srv := server.HTTPServer(addr)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(3)
	}
	_ = srv.Serve(tableserver.Listener(l))
}

// helperCommand is the exec: command line that runs TestHelperServe on {port}.
func helperCommand(t *testing.T) string {
	t.Helper()
	if strings.ContainsAny(os.Args[0], " '\"") {
		t.Skip("the test binary's path needs quoting")
	}
	return helperServeEnv + "=127.0.0.1:" + PortPlaceholder + " " + os.Args[0] + " -test.run=^TestHelperServe$"
}

func TestValidateFormReadsEachForm(t *testing.T) {
	for _, tc := range []struct {
		target string
		ok     bool
		err    string // "" for valid
	}{
		{"azurite@3.29.0", true, ""},
		{"azurite@3.35.0", true, ""},
		{"azurite@2.7.1", true, AzuriteLegacy},
		{"azurite@latest", true, "not an Azurite 3.x release"},
		{"azurite@3.29", true, "not an Azurite 3.x release"},
		{"me=exec:conform serve --addr 127.0.0.1:{port}", true, ""},
		{"me=exec:conform serve", true, PortPlaceholder},
		{"me=image:conform:local", true, ""},
		{"me=image:mcr.microsoft.com/azure-storage/azurite:3.35.0,port=10002,account=devstoreaccount1,key=env:K,style=host", true, ""},
		{"me=image:conform:local,port=10002,args=serve --addr 0.0.0.0:10002,x", true, ""},
		{"me=image:,port=1", true, "image reference is empty"},
		{"me=image:x,port=0", true, "not a TCP port"},
		{"me=image:x,key=secret", true, "env:VARIABLE"},
		{"me=image:x,style=vhost", true, "style="},
		{"me=image:x,colour=red", true, `unknown image option "colour"`},
		{"=image:x", true, "no name"},
		{"azurite", false, ""},
		{"me=DefaultEndpointsProtocol=http;AccountName=a", false, ""},
	} {
		ok, err := ValidateForm(tc.target)
		if ok != tc.ok {
			t.Errorf("ValidateForm(%q): ok %v, want %v", tc.target, ok, tc.ok)
		}
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("ValidateForm(%q): %v", tc.target, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ValidateForm(%q): %v, want an error saying %q", tc.target, err, tc.err)
		}
	}
}

func TestParseStartedImageOptions(t *testing.T) {
	t.Setenv("IMAGE_KEY", "a2V5")
	f, err := parseStarted("mine=image:registry.local/team/emu:1.2.3,port=8902,account=acct1,key=env:IMAGE_KEY,style=host,args=serve --addr 0.0.0.0:8902")
	if err != nil {
		t.Fatal(err)
	}
	if f.name != "mine" || f.image != "registry.local/team/emu:1.2.3" || f.port != 8902 || f.account != "acct1" || f.style != styleHost ||
		strings.Join(f.args, "|") != "serve|--addr|0.0.0.0:8902" {
		t.Errorf("parsed %+v", f)
	}
	cs, endpoint, err := f.connectionString("127.0.0.1", 32768)
	if err != nil {
		t.Fatal(err)
	}
	if endpoint != "http://acct1.127.0.0.1:32768" || !strings.Contains(cs, "AccountKey=a2V5;") || !strings.Contains(cs, "AccountName=acct1;") {
		t.Errorf("connection string %q, endpoint %q", cs, endpoint)
	}
	t.Setenv("IMAGE_KEY", "")
	if _, _, err := f.connectionString("127.0.0.1", 1); err == nil || !strings.Contains(err.Error(), "IMAGE_KEY") {
		t.Errorf("an unset key variable: %v", err)
	}
}

// TestOpenExecStartsServesAndStops starts a local server through exec:, runs a batch through
// it, and checks that its output went beside the report and that Close stopped it.
func TestOpenExecStartsServesAndStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logDir := t.TempDir()
	var lines []string
	var mu sync.Mutex
	progress := func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
	tg, err := Open(ctx, "local=exec:"+helperCommand(t), WithLogDir(logDir), WithProgress(progress))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Info.Name != "local" || tg.Info.Kind != KindExec || !strings.HasPrefix(tg.Info.Endpoint, "http://127.0.0.1:") {
		t.Errorf("info %+v", tg.Info)
	}
	batchRoundTrip(t, ctx, tg.Backend)
	if want := filepath.Join(logDir, "local.server.log"); tg.LogPath != want {
		t.Errorf("log at %q, want %q", tg.LogPath, want)
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "waiting for its first answer") {
		t.Errorf("progress lines %q", lines)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	u := strings.TrimSuffix(tg.Info.Endpoint, "/"+emulatorAccount) + "/"
	if resp, err := (&http.Client{Timeout: time.Second}).Get(u); err == nil {
		resp.Body.Close()
		t.Errorf("after Close the server still answers on %s", u)
	}
}

func TestOpenExecThatExitsSaysWhyWithItsLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := Open(ctx, "broken=exec:echo cannot serve on {port}; exit 3")
	if err == nil {
		t.Fatal("a command that exits opened")
	}
	msg := err.Error()
	for _, want := range []string{"broken:", "exited before answering", "cannot serve on", "log: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to notice the exit", d)
	}
}

// TestOpenImageServesConformImage runs the project's own image (make image) as
// NAME=image:...,args=serve ... where a Docker engine runs (CI); elsewhere it skips in one
// line. CONFORM_TEST_IMAGE names another image of conform.
func TestOpenImageServesConformImage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a container")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host, err := checkDocker(ctx, AzuriteDocker)
	if errors.Is(err, ErrDockerUnavailable) {
		t.Skip("the image: form needs a Docker engine: " + err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	image := os.Getenv("CONFORM_TEST_IMAGE")
	if image == "" {
		image = "conform:local"
	}
	if status, err := dockerGet(ctx, host, "/images/"+image+"/json"); err == nil && status == http.StatusNotFound {
		t.Skipf("the image %s is not on the engine (make image builds it)", image)
	}
	logDir := t.TempDir()
	tg := openOrSkip(t, ctx, "own=image:"+image+",args=serve --addr 0.0.0.0:10002", WithLogDir(logDir))
	if tg.Info.Kind != KindImage || tg.Info.Version == "" {
		t.Errorf("info %+v", tg.Info)
	}
	batchRoundTrip(t, ctx, tg.Backend)
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(logDir, "own.server.log")); err != nil || !strings.Contains(string(b), "DefaultEndpointsProtocol") {
		t.Errorf("the container's log beside the report: %q, %v", b, err)
	}
}

func TestOpenImageWithoutDockerSaysSoInOneLine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "absent.sock"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_RUNTIME_DIR", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := checkDocker(ctx, AzuriteDocker); err == nil {
		t.Skip("a Docker engine answers on the default socket")
	}
	_, err := Open(ctx, "emu=image:example/emu:1.0")
	if !errors.Is(err, ErrDockerUnavailable) || !strings.HasPrefix(err.Error(), "emu: ") {
		t.Errorf("got %v, want a one-line error naming the backend emu", err)
	}
}

// With an engine answering, the image: form refuses inside a container without a loopback
// override, in one line that names the backend.
func TestOpenImageRefusesWithoutLoopbackOverride(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pretendInsideContainer(t, ctx)
	t.Setenv(dockerHostOverrideEnv, "")
	tg, err := Open(ctx, "emu=image:example/emu:1.0")
	if err == nil {
		tg.Close()
		t.Fatal("Open started a container without a loopback TESTCONTAINERS_HOST_OVERRIDE inside a container")
	}
	if !errors.Is(err, ErrDockerHostUnsafe) || !strings.HasPrefix(err.Error(), "emu: ") || strings.Contains(err.Error(), AzuriteDocker) {
		t.Errorf("got %v, want one line naming emu", err)
	}
}

// TestOpenImageThatExitsKeepsItsLog: an image whose command ends at once (conform's image
// asked for its version) fails to open, and its output is kept where the error says.
func TestOpenImageThatExitsKeepsItsLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a container")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host, err := checkDocker(ctx, "own")
	if errors.Is(err, ErrDockerUnavailable) {
		t.Skip("the image: form needs a Docker engine: " + err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	image := os.Getenv("CONFORM_TEST_IMAGE")
	if image == "" {
		image = "conform:local"
	}
	if status, err := dockerGet(ctx, host, "/images/"+image+"/json"); err == nil && status == http.StatusNotFound {
		t.Skipf("the image %s is not on the engine (make image builds it)", image)
	}
	logDir := t.TempDir()
	_, err = Open(ctx, "short=image:"+image+",args=version", WithLogDir(logDir), WithStartTimeout(5*time.Second))
	if err == nil {
		t.Fatal("an image that exits at once opened")
	}
	logPath := filepath.Join(logDir, "short.server.log")
	if !strings.Contains(err.Error(), "its log: "+logPath) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q does not name the kept log %s in one line", err, logPath)
	}
	if b, rerr := os.ReadFile(logPath); rerr != nil || !strings.Contains(string(b), "commit") {
		t.Errorf("kept log %q, %v; want the output of conform version", b, rerr)
	}
}
