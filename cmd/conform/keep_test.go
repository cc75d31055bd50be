package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 34 item 13: --keep-failed lists the tables it kept and says how to remove them.
// conform serve --flavor cosmos judged under the Storage profile fails the rules where
// Cosmos differs, so their specs' tables are kept on the endpoint.
func TestKeepFailedListsTheKeptTables(t *testing.T) {
	conn, _ := startServe(t, "--flavor", "cosmos")
	t.Setenv("CONFORM_TEST_KEEP_FAILED", conn)
	filter := strings.Join(cosmosDiffering(true), " || ")
	dir := filepath.Join(t.TempDir(), "report")
	stdout, stderr, code := conform(t, "run", "--backend", "served=env:CONFORM_TEST_KEEP_FAILED", "--profile", "storage",
		"--label-filter", filter, "--keep-failed", "--no-corpus", "--parallel", "1", "--out", dir)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitFailed, stdout, stderr)
	}
	if !strings.Contains(stdout, "kept ") || !strings.Contains(stdout, "for --keep-failed: cf") {
		t.Fatalf("the kept tables are not listed:\n%s", stdout)
	}
	m := regexp.MustCompile(`conform clean --backend served=env:CONFORM_TEST_KEEP_FAILED --prefix (cf\w+) removes them`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no line says how to remove them:\n%s", stdout)
	}
	cleaned, stderr, code := conform(t, "clean", "--backend", "served=env:CONFORM_TEST_KEEP_FAILED", "--prefix", m[1])
	if code != 0 || !strings.Contains(cleaned, "deleted cf") {
		t.Errorf("the printed conform clean: exit %d\n%s%s", code, cleaned, stderr)
	}
}

func TestPrintKeptTables(t *testing.T) {
	raw := t.TempDir()
	write := func(file string, names []string) {
		data, _ := json.Marshal(names)
		if err := os.WriteFile(filepath.Join(raw, file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var many []string
	for i := range 23 {
		many = append(many, fmt.Sprintf("cfrunp1t%02d", i))
	}
	write("mine.part1.kept.json", many[:10])
	write("mine.part2.kept.json", many[10:])
	write("reference.kept.json", []string{"cfrunp9t1"})
	write("mine-other.kept.json", []string{"cfotherp1t1"})
	var out bytes.Buffer
	printKeptTables(&out, []string{"mine=env:MY_CONNECTION", "reference"}, raw, "cfrun")
	got := out.String()
	for _, want := range []string{
		"kept 23 tables for --keep-failed: cfrunp1t00, ", "cfrunp1t19 and 3 more",
		"conform clean --backend mine=env:MY_CONNECTION --prefix cfrun removes them",
		"kept 1 table for --keep-failed: cfrunp9t1", "they went with reference, which conform started and stopped",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "cfrunp1t20") || strings.Contains(got, "cfotherp1t1") {
		t.Errorf("more than %d tables, or another backend's, listed:\n%s", keptShown, got)
	}
}
