package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func events(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

func TestRelayPassesEventsThroughAndCollectsSkipsAndSummaries(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := events(
		`{"Action":"start","Package":"github.com/tableconform/conform/suites/all"}`,
		`{"Action":"run","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance","Output":"    all_test.go:40: conform summary: reference: 1230 specs, 1230 passed\n"}`,
		`{"Action":"pass","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance"}`,
		`{"Action":"run","Package":"github.com/tableconform/conform/suites/report","Test":"TestHTMLInBrowser"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/report","Test":"TestHTMLInBrowser","Output":"=== RUN   TestHTMLInBrowser\n"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/report","Test":"TestHTMLInBrowser","Output":"    browser_test.go:30: no Chromium: make browser installs it\n"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/report","Test":"TestHTMLInBrowser","Output":"--- SKIP: TestHTMLInBrowser (0.00s)\n"}`,
		`{"Action":"skip","Package":"github.com/tableconform/conform/suites/report","Test":"TestHTMLInBrowser"}`,
		`not json: passed through as it is`,
	)
	var out bytes.Buffer
	w := newWatcher(t0)
	if err := relay(strings.NewReader(in), &out, w, func() time.Time { return t0 }); err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("the events changed on the way:\n%s", out.String())
	}
	got := strings.Join(w.closing(), "\n")
	want := "Skipped (1):\n  suites/report TestHTMLInBrowser: no Chromium: make browser installs it\n" +
		"Conformance runs:\n  reference: 1230 specs, 1230 passed"
	if got != want {
		t.Errorf("closing lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestHeartbeatAfterQuietLimitNamesTheRunningPackages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWatcher(t0)
	w.observe(testEvent{Action: "start", Package: "github.com/tableconform/conform/cmd/conform"}, t0)
	w.observe(testEvent{Action: "run", Package: "github.com/tableconform/conform/cmd/conform", Test: "TestX"}, t0)
	if line := w.heartbeat(t0.Add(quietLimit - time.Second)); line != "" {
		t.Errorf("a line before the quiet limit: %q", line)
	}
	line := w.heartbeat(t0.Add(quietLimit))
	if !strings.Contains(line, "cmd/conform (25s)") {
		t.Errorf("heartbeat %q does not name the running package", line)
	}
	if again := w.heartbeat(t0.Add(quietLimit + time.Second)); again != "" {
		t.Errorf("a second line right after the first: %q", again)
	}
	// A package's end is a line of gotestsum's: it restarts the quiet time.
	w.observe(testEvent{Action: "pass", Package: "github.com/tableconform/conform/cmd/conform"}, t0.Add(40*time.Second))
	if line := w.heartbeat(t0.Add(60 * time.Second)); line != "" {
		t.Errorf("a line 20 s after a package ended: %q", line)
	}
	if line := w.heartbeat(t0.Add(70 * time.Second)); !strings.Contains(line, "building") {
		t.Errorf("with nothing running the line says %q", line)
	}
}
