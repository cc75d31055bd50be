package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var totalsLine = regexp.MustCompile(`(\d+) exchanges agree, (\d+) disagree, (\d+) skipped`)

// replayTotals reads the agree and disagree counts of conform replay's first line.
func replayTotals(t *testing.T, out string) (agree, disagree int) {
	t.Helper()
	m := totalsLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("conform replay printed no totals:\n%s", out)
	}
	agree, _ = strconv.Atoi(m[1])
	disagree, _ = strconv.Atoi(m[2])
	return agree, disagree
}

// TestRecordedRunReplays records a run against `conform serve`, then replays it against a
// fresh `conform serve` (full agreement) and against a deliberately wrong backend
// (disagreements).
func TestRecordedRunReplays(t *testing.T) {
	conn, _ := startServe(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "recorded")
	_, stderr, code := conform(t, "run", "--backend", "me="+conn, "--record", rec, "--out", filepath.Join(dir, "report"),
		"--label-filter", "area:query || area:batch")
	if code != 0 {
		t.Fatalf("conform run --record: exit %d\n%s", code, stderr)
	}
	files, err := filepath.Glob(filepath.Join(rec, "me", "*.json"))
	if err != nil || len(files) < 100 {
		t.Fatalf("conform run --record wrote %d files (%v)", len(files), err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq") || regexp.MustCompile(`SharedKey [^:"]+:[A-Za-z0-9+/=]{20,}`).Match(data) {
		t.Fatalf("a recording holds a credential: %s", files[0])
	}

	fresh, _ := startServe(t)
	out, stderr, code := conform(t, "replay", "--backend", "fresh="+fresh, "--out", filepath.Join(dir, "replay-serve"), filepath.Join(rec, "me"))
	agree, disagree := replayTotals(t, out)
	if code != 0 || disagree != 0 || agree < 500 {
		t.Fatalf("replay against conform serve: exit %d, %d agree, %d disagree\n%s%s", code, agree, disagree, out, stderr)
	}
	t.Logf("against conform serve: %s", firstLine(out))

	out, stderr, code = conform(t, "replay", "--backend", "mutant:booleans-as-int32", "--out", filepath.Join(dir, "replay-mutant"), filepath.Join(rec, "me"))
	_, disagree = replayTotals(t, out)
	if code != exitFailed || disagree == 0 {
		t.Fatalf("replay against a mutant: exit %d, %d disagree; want exit 1 and disagreements\n%s%s", code, disagree, out, stderr)
	}
	if md, err := os.ReadFile(filepath.Join(dir, "replay-mutant", "replay.md")); err != nil || !strings.Contains(string(md), "Recorded:") {
		t.Fatalf("the replay report shows no recorded and live answers (%v)", err)
	}
	t.Logf("against mutant:booleans-as-int32: %s", firstLine(out))
}

// TestRecordRefusesTheInProcessReference: its traffic is not HTTP.
func TestRecordRefusesTheInProcessReference(t *testing.T) {
	_, stderr, code := conform(t, "run", "--backend", "reference", "--record", t.TempDir())
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "not HTTP") {
		t.Fatalf("exit %d, stderr %q; want exit 2 and one line saying the traffic is not HTTP", code, stderr)
	}
}

// TestReplaySkipsBadRecordings: truncated files, unknown formats and other services are
// skipped with one line each; a replay that compared nothing is inconclusive, never exit 0
// (issue 20, item 4).
func TestReplaySkipsBadRecordings(t *testing.T) {
	dir := t.TempDir()
	bad := map[string]string{
		"truncated.json": `{"Entries":[{"RequestUri":"https://a.table.core.windows.net/Tables","RequestMethod":"GET",`,
		"unknown.json":   `{"recordings":[]}`,
		"unknown.yaml":   "just: a map\n",
		"blob.json":      `{"Entries":[{"RequestUri":"https://a.blob.core.windows.net/c?restype=container","RequestMethod":"PUT","RequestHeaders":{},"RequestBody":null,"StatusCode":201,"ResponseHeaders":{},"ResponseBody":null}],"Variables":{}}`,
		"empty.json":     ``,
	}
	for name, text := range bad {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, code := conform(t, "replay", "--backend", "reference", "--out", filepath.Join(dir, "out"), dir)
	if code != exitInconclusive {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	for name := range bad {
		if n := strings.Count(stderr, name+": skipped"); n != 1 {
			t.Errorf("%s: %d lines saying it was skipped, want 1\n%s", name, n, stderr)
		}
	}
}

// `conform replay --strict` compares errors' first lines too: the Storage reference answers
// the Cosmos recording's Create Table of an existing table with the same status and code but
// Storage's message, which only a strict replay reports.
func TestReplayStrict(t *testing.T) {
	recording, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "recordings", "go-service-errors-cosmos.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const difference = `error message: recorded "The specified table already exists."`
	for _, strict := range []bool{false, true} {
		args := []string{"replay", "--backend", "reference", "--profile", "cosmos", "--out", filepath.Join(dir, fmt.Sprint(strict)), recording}
		if strict {
			args = append(args, "--strict")
		}
		out, stderr, code := conform(t, args...)
		if code != 0 && code != 1 {
			t.Fatalf("strict %v: exit %d\n%s%s", strict, code, out, stderr)
		}
		report, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(strict), "replay.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(report), difference); got != strict {
			t.Errorf("strict %v: the report names the message difference: %v\n%s", strict, got, report)
		}
	}
}
