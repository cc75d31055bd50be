package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServeProfilesOnLoopbackOnly(t *testing.T) {
	var log strings.Builder
	stop, err := serveProfiles(&log, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/debug/pprof/ `).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no profile address in %q", log.String())
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + m[1] + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("goroutine profile: %d %.200s", resp.StatusCode, body)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:6060", "example.com:6060", "6060"} {
		_, err := serveProfiles(io.Discard, addr)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("--pprof %s: got %v, want a usage error", addr, err)
		}
	}
}

// TestProfilesNeverShowKeys: /debug/pprof/cmdline shows the command line without the keys
// of --account. Before, it showed them as given.
func TestProfilesNeverShowKeys(t *testing.T) {
	const key = "c2VjcmV0IGtleSBvZiB0aGUgdGVzdA=="
	saved := os.Args
	os.Args = []string{"conform", "serve", "--account", "acct:" + key, "--account=other:" + key, "--pprof", "127.0.0.1:0"}
	defer func() { os.Args = saved }()
	var log strings.Builder
	stop, err := serveProfiles(&log, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/debug/pprof/ `).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no profile address in %q", log.String())
	}
	c := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"cmdline", ""} {
		resp, err := c.Get("http://" + m[1] + "/debug/pprof/" + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), key) {
			t.Errorf("/debug/pprof/%s: %d, shows the key: %v", path, resp.StatusCode, strings.Contains(string(body), key))
		}
		if path == "cmdline" && !strings.Contains(string(body), "acct:(key not shown)\x00--account=other:(key not shown)") {
			t.Errorf("cmdline %q does not name the accounts", body)
		}
	}
}
