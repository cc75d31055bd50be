package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func events(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// outputs returns the Output of the events testprogress added (those not in in).
func added(t *testing.T, in, out string) []string {
	t.Helper()
	orig := map[string]bool{}
	for _, l := range strings.Split(in, "\n") {
		orig[l] = true
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if orig[l] {
			continue
		}
		var e testEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Action != "output" || e.Test != "" {
			t.Fatalf("added line is not a package output event: %q", l)
		}
		lines = append(lines, strings.TrimSuffix(e.Output, "\n"))
	}
	return lines
}

func TestRelayAddsSkipsAndSummariesBeforeThePackagesLine(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := events(
		`{"Action":"start","Package":"github.com/tableconform/conform/suites/all"}`,
		`{"Action":"run","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance","Output":"    all_test.go:40: conform summary: reference: 1230 specs, 1230 passed\n"}`,
		`{"Action":"pass","Package":"github.com/tableconform/conform/suites/all","Test":"TestConformance"}`,
		`{"Action":"run","Package":"github.com/tableconform/conform/suites/all","Test":"TestHTMLInBrowser"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/all","Test":"TestHTMLInBrowser","Output":"=== RUN   TestHTMLInBrowser\n"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/all","Test":"TestHTMLInBrowser","Output":"    browser_test.go:30: no Chromium: make browser installs it\n"}`,
		`{"Action":"output","Package":"github.com/tableconform/conform/suites/all","Test":"TestHTMLInBrowser","Output":"--- SKIP: TestHTMLInBrowser (0.00s)\n"}`,
		`{"Action":"skip","Package":"github.com/tableconform/conform/suites/all","Test":"TestHTMLInBrowser"}`,
		`{"Action":"pass","Package":"github.com/tableconform/conform/suites/all"}`,
	)
	var buf bytes.Buffer
	w := newWatcher(t0)
	if err := relay(strings.NewReader(in), &output{w: &buf}, w, func() time.Time { return t0 }); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(added(t, in, buf.String()), "\n")
	want := "SKIP suites/all TestHTMLInBrowser: no Chromium: make browser installs it\n" +
		"conformance run: reference: 1230 specs, 1230 passed"
	if got != want {
		t.Errorf("added lines:\n%s\nwant:\n%s", got, want)
	}
	// The package's own event comes last, after the added lines.
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"Action":"pass","Package":"github.com/tableconform/conform/suites/all"}`) {
		t.Errorf("last event %q", last)
	}
}

func TestHeartbeatAfterQuietLimitNamesTheRunningPackages(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWatcher(t0)
	w.observe(testEvent{Action: "start", Package: "github.com/tableconform/conform/cmd/conform"}, t0)
	w.observe(testEvent{Action: "run", Package: "github.com/tableconform/conform/cmd/conform", Test: "TestX"}, t0)
	if line, _ := w.heartbeat(t0.Add(quietLimit - time.Second)); line != "" {
		t.Errorf("a line before the quiet limit: %q", line)
	}
	line, pkg := w.heartbeat(t0.Add(quietLimit))
	if !strings.Contains(line, "cmd/conform (20s)") || pkg != "github.com/tableconform/conform/cmd/conform" {
		t.Errorf("heartbeat %q of %q does not name the running package", line, pkg)
	}
	if again, _ := w.heartbeat(t0.Add(quietLimit + time.Second)); again != "" {
		t.Errorf("a second line right after the first: %q", again)
	}
	// A package's end is a line: it restarts the quiet time.
	w.observe(testEvent{Action: "pass", Package: "github.com/tableconform/conform/cmd/conform"}, t0.Add(40*time.Second))
	if line, _ := w.heartbeat(t0.Add(40*time.Second + quietLimit - time.Second)); line != "" {
		t.Errorf("a line before the quiet limit after a package ended: %q", line)
	}
	if line, pkg := w.heartbeat(t0.Add(40*time.Second + quietLimit + 10*time.Second)); !strings.Contains(line, "building") || pkg != "" {
		t.Errorf("with nothing running the line says %q (package %q)", line, pkg)
	}
}

func TestRetriedSpecsAreListedWithAHeader(t *testing.T) {
	path := t.TempDir() + "/retries"
	if got := retried(path); got != nil {
		t.Errorf("no file: %q", got)
	}
	if err := os.WriteFile(path, []byte("azurite x: passed after 2 attempts\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := retried(path)
	if len(got) != 2 || !strings.HasPrefix(got[0], "1 specs passed only when retried") || got[1] != "azurite x: passed after 2 attempts" {
		t.Errorf("retried = %q", got)
	}
}
