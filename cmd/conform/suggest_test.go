package main

import (
	"bytes"
	"strings"
	"testing"
)

// execute runs conform's command line in process on args and returns its error's line.
func execute(t *testing.T, args ...string) string {
	t.Helper()
	root := rootCmd()
	root.SetArgs(args)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.Execute()
	if err == nil {
		t.Fatalf("conform %v: no error", args)
	}
	return commandError(root, args, err).Error()
}

// Issue 34 item 14: a mistyped flag or command names the nearest one and the help of the
// command it was given to.
func TestTyposSuggestTheNearest(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--backnd", "reference"}, []string{"unknown flag: --backnd", "did you mean --backend?", "(see conform run --help)"}},
		{[]string{"run", "--label-filtr=x"}, []string{"did you mean --label-filter?", "conform run --help"}},
		{[]string{"bench", "--duraton", "1s"}, []string{"did you mean --duration?", "conform bench --help"}},
		{[]string{"rn"}, []string{`unknown command "rn"`, "did you mean run?", "(see conform --help)"}},
	} {
		got := execute(t, c.args...)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("conform %v: %q, want it to hold %q", c.args, got, w)
			}
		}
		if strings.Contains(got, "\n") {
			t.Errorf("conform %v: %q is more than one line", c.args, got)
		}
	}
	// Nothing near enough: no suggestion, but still the command's help.
	got := execute(t, "run", "--zzzzzzzz")
	if strings.Contains(got, "did you mean") || !strings.Contains(got, "conform run --help") {
		t.Errorf("conform run --zzzzzzzz: %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"backnd", "backend", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"same", "same", 0}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
