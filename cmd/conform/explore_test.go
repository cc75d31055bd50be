package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/replay"
)

func runExploreCommand(t *testing.T, args ...string) (stdout string, code int) {
	t.Helper()
	root := rootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"explore"}, args...))
	err := root.Execute()
	code = exitOK
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) {
			t.Fatalf("conform explore %v: %v\n%s", args, err, errOut.String())
		}
		code = ee.code
	}
	return out.String(), code
}

// Against a mutant, explore exits 1 and writes the difference as a script, a Go test and a
// recording that conform replay reads, and a report in Markdown and JSON.
func TestExploreWritesAReproductionOfWhatItFound(t *testing.T) {
	dir := t.TempDir()
	out, code := runExploreCommand(t, "--backend", "mutant:merge-as-replace", "--seed", "1", "--ops", "3000",
		"--max-differences", "1", "--shrink-time", "5s", "--out", dir)
	if code != exitFailed {
		t.Fatalf("exit status %d, want %d:\n%s", code, exitFailed, out)
	}
	for _, name := range []string{"explore.md", "explore.json", "difference-1.txt", "difference-1_test.go.txt", "difference-1.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "difference-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := replay.Parse("difference-1.json", data)
	if err != nil || len(rec.Entries) == 0 {
		t.Fatalf("the recording does not read as one: %v (%d exchanges)", err, len(rec.Entries))
	}
	script, _ := os.ReadFile(filepath.Join(dir, "difference-1.txt"))
	if !strings.Contains(string(script), "!") || !strings.Contains(string(script), "covers this") {
		t.Errorf("the script marks no differing step or no catalogue match:\n%s", script)
	}
}

// Against the reference itself nothing differs: exit status 0.
func TestExploreOfTheReferenceAgainstItselfConforms(t *testing.T) {
	out, code := runExploreCommand(t, "--backend", "reference", "--ops", "500", "--out", t.TempDir())
	if code != exitOK {
		t.Fatalf("exit status %d, want 0:\n%s", code, out)
	}
	if !strings.Contains(out, "0 distinct differences") {
		t.Errorf("the summary does not say it found none:\n%s", out)
	}
}

func TestExploreRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--ops", "10"},
		{"--backend", "reference", "--ops", "-1"},
		{"--backend", "reference", "--tables", "0"},
	} {
		if _, code := runExploreCommand(t, args...); code != exitUsage {
			t.Errorf("conform explore %v: exit status %d, want %d", args, code, exitUsage)
		}
	}
}
