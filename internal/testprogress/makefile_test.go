package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make test and make test-all say last, in one line of their own, whether every step
// passed or which failed, and exit accordingly (issue 31, item 14: after gotestsum's DONE
// came the soak's lines and "ok"). The steps run with GO set to true or false, so that
// each passes or fails at once without building or testing anything.
func TestMakeTestSaysLastWhetherItPassed(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cases := []struct {
		target, goCommand, last string
		failed                  bool
	}{
		{"test", "true", "make test: passed", false},
		{"test-all", "true", "make test-all: passed", false},
		{"test", "false", "make test: FAILED (tools)", true},
		{"test-all", "false", "make test-all: FAILED (tools)", true},
	}
	for _, c := range cases {
		cmd := exec.Command("make", "--no-print-directory", "-C", "../..", c.target, "GO="+c.goCommand)
		out, err := cmd.Output() // standard output: GNU make says its own "*** ... Error" on standard error
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if got := lines[len(lines)-1]; got != c.last || (err != nil) != c.failed {
			t.Errorf("make %s GO=%s: last line %q, error %v; want %q", c.target, c.goCommand, got, err, c.last)
		}
	}
}

// make test's first line comes before anything compiles, and compiling the tools it runs
// the tests through (the progress filter, gotestsum) is never silent: the filter compiles
// under a shell heartbeat, gotestsum under the filter's ticker (issue 34, item 1: 49 s of
// silence on a fresh clone before the first progress line). GO is a stand-in that takes 3 s
// to "build", and the heartbeat beats every second.
func TestMakeToolsSaysWhatItCompilesAndKeepsTalking(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	fakeGo := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\n[ \"$1\" = build ] && sleep 3\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", "../..", "tools", "GO="+fakeGo)
	cmd.Env = append(os.Environ(), "HEARTBEAT_EVERY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make tools: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(lines[0], "make: compiling the test tools") || !strings.Contains(lines[0], "gotestsum") {
		t.Errorf("the first line does not say what is compiled: %q", lines[0])
	}
	if !strings.Contains(string(out), "still compiling the progress filter") {
		t.Errorf("no heartbeat while the progress filter compiled:\n%s", out)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"test", "test-all"} {
		if !regexp.MustCompile(`(?m)^` + target + `:\n\t@\$\(call steps,make ` + target + `,tools `).Match(makefile) {
			t.Errorf("make %s does not compile the tools first", target)
		}
	}
}
