package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/report"
)

// A backend whose version has no baseline of its own is judged against the nearest
// version's, and the summary and report.md say which baseline was looked for, which exist
// and which was used; the known divergences stay known instead of failing the run as new
// (issue 34, item 4: the other version's baseline was ignored without a word).
func TestAnotherVersionsBaselineIsUsedAndSaid(t *testing.T) {
	dir := t.TempDir()
	const backend = "mutant:batch-not-atomic"
	if stdout, stderr, code := conformIn(t, dir, nil, "run", "--backend", backend, "--label-filter", "area:batch", "--update-baseline", "--no-corpus"); code != 0 {
		t.Fatalf("update: exit %d\n%s%s", code, stdout, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, defaultBaselineDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("baseline files written: %v", files)
	}
	older := filepath.Join(dir, defaultBaselineDir, "mutant_batch-not-atomic-0.0.1.json")
	if err := os.Rename(files[0], older); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := conformIn(t, dir, nil, "run", "--backend", backend, "--label-filter", "area:batch", "--no-corpus")
	if code != 0 {
		t.Errorf("the run against the older version's baseline: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	says := []string{filepath.Base(files[0]) + " does not exist", "judged against the nearest version's, mutant_batch-not-atomic-0.0.1.json"}
	md, err := os.ReadFile(filepath.Join(dir, "conform-report", report.FileMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range says {
		if !strings.Contains(stdout, s) {
			t.Errorf("the summary does not say %q:\n%s", s, stdout)
		}
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md does not say %q", s)
		}
	}
}
