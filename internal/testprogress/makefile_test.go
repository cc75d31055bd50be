package main

import (
	"errors"
	"os/exec"
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
		{"test", "false", "make test: FAILED (deps)", true},
		{"test-all", "false", "make test-all: FAILED (deps)", true},
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
