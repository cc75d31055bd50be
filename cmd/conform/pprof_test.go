package main

import (
	"errors"
	"io"
	"net/http"
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
