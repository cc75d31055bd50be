package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// The shards of a backend together hold every rule the filter selects, each once; the
// account-wide rules are in none of them (they run afterwards, alone).
func TestShardsCoverTheSelectionOnceAndKeepAccountWideRulesApart(t *testing.T) {
	for _, filter := range []string{"", "area:batch", "area:service || area:query"} {
		plan := planShards(filter, "mine", 8)
		var got []string
		for _, s := range plan.shards {
			if len(s) == 0 {
				t.Errorf("filter %q: an empty shard", filter)
			}
			got = append(got, s...)
		}
		for _, id := range plan.accountWide {
			if r, _ := spec.LookupRule(id); !r.AccountWide() {
				t.Errorf("filter %q: %s is not account-wide", filter, id)
			}
		}
		got = append(got, plan.accountWide...)
		slices.Sort(got)
		if n := selectedRules(orTrue(filter), "mine"); len(got) != n || len(slices.Compact(slices.Clone(got))) != n {
			t.Errorf("filter %q: %d rules in the shards, %d selected", filter, len(got), n)
		}
	}
	if plan := planShards("", "mine", 8); len(plan.shards) != 8 || len(plan.accountWide) == 0 {
		t.Errorf("the whole catalogue in %d shards and %d account-wide rules", len(plan.shards), len(plan.accountWide))
	}
}

func orTrue(filter string) string {
	if filter == "" {
		return "!no-such-label"
	}
	return filter
}

func TestParallelDefaults(t *testing.T) {
	for _, c := range []struct {
		backend   string
		requested int
		want      int
	}{
		{"mine=env:MY_TABLE", 0, endpointParallel},
		{"reference", 0, localParallel},
		{"azurite", 0, localParallel},
		{"reference", 4, 4},
		{"mine=env:MY_TABLE", 1000, maxParallel},
	} {
		if got := parallelFor(c.backend, c.requested); got != c.want {
			t.Errorf("parallelFor(%q, %d) = %d, want %d", c.backend, c.requested, got, c.want)
		}
	}
}

// A terminal sees the elapsed time and an estimate of what is left; a backend's last line
// after Ctrl-C says "interrupted", as the run's exit status (130) does, not the exit status
// of its process (issue 24, found 10 and 11).
func TestProgressSaysElapsedTimeEstimateAndInterruption(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	p.now = func() time.Time { return clock }
	p.start("x", 2)
	p.event("x", event{Kind: "total", Total: 5})
	p.event("x", event{Kind: "total", Total: 5})
	clock = t0.Add(20 * time.Second)
	for range 2 {
		p.event("x", event{Kind: "spec", Outcome: "pass"})
	}
	p.done("x", 1, true)
	out := buf.String()
	for _, want := range []string{
		"[x] starting, 2 processes at once",
		"[x] 10 specs to run",
		"[x] 2/10 specs done, 0 failed, 0 errors, 0 blocked; elapsed 20s, about 1m20s left",
		"[x] finished: 2 specs, 0 failed, 0 errors, 0 blocked, in 20s (interrupted)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "exit 1") {
		t.Errorf("an interrupted backend's line gives its process's status:\n%s", out)
	}
}

// While some of a backend's processes have not said how many specs they run, progress
// gives no count "of" a partial total (which grew from line to line: 7/65, 14/70, then
// "86 specs to run").
func TestProgressWaitsForEveryProcessesTotal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.start("x", 2)
	p.event("x", event{Kind: "total", Total: 5})
	for range 3 {
		p.event("x", event{Kind: "spec", Outcome: "pass"})
	}
	if strings.Contains(buf.String(), "specs done") {
		t.Errorf("progress counts against one process's total:\n%s", buf.String())
	}
	p.event("x", event{Kind: "total", Total: 5})
	p.event("x", event{Kind: "spec", Outcome: "pass"})
	if want := "[x] 4/10 specs done"; !strings.Contains(buf.String(), want) {
		t.Errorf("progress lacks %q once every process counted:\n%s", want, buf.String())
	}
}

// A backend's specs run in several processes give every spec and rule the outcome one
// process gives, on a correct backend and on a deliberately wrong one (issue 24, found 13).
func TestParallelRunGivesTheOutcomesOfOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite four times: make test-all runs it")
	}
	srv := startServeProcess(t)
	for _, backend := range []string{"served=env:CONFORM_TEST_SERVED", "mutant:batch-not-atomic"} {
		outcomes := map[int]map[string]verdict.Outcome{}
		verdicts := map[int]string{}
		for _, n := range []int{1, 4} {
			out := t.TempDir()
			_, stderr, _ := conformIn(t, t.TempDir(), []string{"CONFORM_TEST_SERVED=" + srv.conn},
				"run", "--backend", backend, "--parallel", strconv.Itoa(n), "--no-corpus", "--out", out)
			rep, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
			if err != nil {
				t.Fatalf("%s --parallel %d: no report: %v\n%s", backend, n, err, lastLines(stderr, 20))
			}
			if n > 1 && !strings.Contains(stderr, fmt.Sprintf("%d processes at once", n)) {
				t.Errorf("%s --parallel %d did not run in %d processes:\n%s", backend, n, n, lastLines(stderr, 20))
			}
			outcomes[n], verdicts[n] = specOutcomes(rep, 0), rep.Backends[0].Verdict
			for _, row := range rep.Rules {
				outcomes[n]["rule "+row.ID] = row.Cells[0].Outcome
			}
		}
		if verdicts[1] != verdicts[4] {
			t.Errorf("%s: verdict %q in one process, %q in four", backend, verdicts[1], verdicts[4])
		}
		if len(outcomes[1]) < 1000 {
			t.Errorf("%s: only %d outcomes", backend, len(outcomes[1]))
		}
		var diffs []string
		for k, o := range outcomes[1] {
			if outcomes[4][k] != o {
				diffs = append(diffs, fmt.Sprintf("  %s: %s in one process, %s in four", k, o, outcomes[4][k]))
			}
		}
		sort.Strings(diffs)
		if len(diffs) > 0 || len(outcomes[1]) != len(outcomes[4]) {
			t.Errorf("%s: %d outcomes differ (%d and %d outcomes):\n%s", backend, len(diffs), len(outcomes[1]), len(outcomes[4]), strings.Join(firstN(diffs, 20), "\n"))
		}
	}
}
