package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/bench"
)

// shardWorkloads are bounded, one request per operation, so that counts compare exactly.
const shardWorkloads = "PointGet,Insert,YCSB/workload=A/dist=uniform"

// shardOps is each workload's operation count over all shards.
const shardOps = 1203

// runShards runs `conform bench` as n shard processes at once with the environment contract
// of the Kubernetes Indexed Job (deploy/kubernetes): JOB_COMPLETION_INDEX,
// CONFORM_SHARD_COUNT, CONFORM_RUN_ID, and the connection string in a variable (a Secret
// there), writing into dir.
func runShards(t *testing.T, conn, runID string, n int, dir string) {
	t.Helper()
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	procs := make([]*proc, n)
	for i := range procs {
		p := &proc{cmd: exec.Command(conformBin, "bench", "--backend", "served=env:CONFORM_TEST_TABLE", "--workloads", shardWorkloads,
			"--ops", strconv.Itoa(shardOps), "--workers", "2", "--out", dir)}
		p.cmd.Env = append(os.Environ(), "CONFORM_TEST_TABLE="+conn, bench.EnvShardIndex+"="+string(rune('0'+i)),
			bench.EnvShardCount+"="+string(rune('0'+n)), bench.EnvRunID+"="+runID)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	timer := time.AfterFunc(3*time.Minute, func() {
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("shard %d of %d: %v\n%s", i, n, err, p.out.String())
		}
		if strings.Contains(p.out.String(), conn) {
			t.Fatalf("shard %d printed the connection string", i)
		}
	}
}

func readMerged(t *testing.T, dir string) bench.Merged {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, bench.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	var m bench.Merged
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFourShardsAddUpToOneRun runs four shard processes against `conform serve`, merges
// them, and checks that the merged result counts every operation once and agrees with a
// single process running the same operations: the same requests per workload and kind,
// nothing failed or throttled, and each merged percentile within the range of the
// shards' own (a merge that added or averaged percentiles would leave it).
func TestFourShardsAddUpToOneRun(t *testing.T) {
	conn, _ := startServe(t)
	shardsDir, singleDir := t.TempDir(), t.TempDir()
	runShards(t, conn, "0b6c3f7e-1f8e-4c9a-9d55-2b7f0c1a9e11", 4, shardsDir)
	runShards(t, conn, "single01", 1, singleDir)

	out, stderr, code := conform(t, "bench", "merge", shardsDir, "--out", filepath.Join(shardsDir, "merged"))
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, _, code := conform(t, "bench", "merge", singleDir, "--out", filepath.Join(singleDir, "merged")); code != 0 {
		t.Fatalf("merge of the single process: exit %d", code)
	}
	sharded, single := readMerged(t, filepath.Join(shardsDir, "merged")), readMerged(t, filepath.Join(singleDir, "merged"))
	if sharded.Run.Shard.Count != 4 || len(sharded.Shards) != 4 || len(sharded.Outcomes) != 3 || len(single.Outcomes) != 3 {
		t.Fatalf("merged: %d shards, %d outcomes; single: %d outcomes", len(sharded.Shards), len(sharded.Outcomes), len(single.Outcomes))
	}
	files, err := bench.ReadShardFiles([]string{shardsDir})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range sharded.Outcomes {
		s := single.Outcomes[i]
		if o.Case != s.Case || len(o.Failures) > 0 || o.Errors != 0 || o.Throttles != 0 || o.GaveUp != 0 {
			t.Fatalf("%s: failures %v errors %d throttles %d", o.Case, o.Failures, o.Errors, o.Throttles)
		}
		if o.Steps != shardOps || s.Steps != shardOps || o.Requests != shardOps || s.Requests != shardOps {
			t.Errorf("%s: steps %d (single %d), requests %d (single %d); want %d each", o.Case, o.Steps, s.Steps, o.Requests, s.Requests, shardOps)
		}
		var perSecond int64
		for _, sec := range o.Series {
			perSecond += sec.Requests
		}
		if perSecond != o.Requests {
			t.Errorf("%s: the per-second series counts %d requests, the run %d", o.Case, perSecond, o.Requests)
		}
		if strings.HasPrefix(o.Case, "PointGet") || strings.HasPrefix(o.Case, "Insert") {
			if len(o.Kinds) != 1 || len(s.Kinds) != 1 || o.Kinds[0].Kind != s.Kinds[0].Kind || o.Kinds[0].Entities != s.Kinds[0].Entities {
				t.Errorf("%s: kinds %+v, single %+v", o.Case, o.Kinds, s.Kinds)
			}
		}
		lo, hi := [3]float64{1e18, 1e18, 1e18}, [3]float64{}
		for _, f := range files {
			for _, so := range f.Outcomes {
				if so.Case != o.Case {
					continue
				}
				for j, v := range []float64{so.Latency.P50, so.Latency.P99, so.Latency.P999} {
					lo[j], hi[j] = min(lo[j], v), max(hi[j], v)
				}
			}
		}
		for j, v := range []float64{o.Latency.P50, o.Latency.P99, o.Latency.P999} {
			// 0.1% is the histograms' precision (3 significant digits).
			if v < lo[j]*0.999 || v > hi[j]*1.001 {
				t.Errorf("%s: merged percentile %d is %.1f µs, outside the shards' %.1f to %.1f", o.Case, j, v, lo[j], hi[j])
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(shardsDir, "merged", bench.ReportMarkdown))
	if err != nil || !strings.Contains(string(md), "4 shards") || !strings.Contains(string(md), "p99.9") {
		t.Errorf("bench.md: %v\n%s", err, md)
	}

	// A missing shard is named; a shard of another run is refused.
	if err := os.Remove(filepath.Join(shardsDir, "shard-2-of-4.json")); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := conform(t, "bench", "merge", shardsDir, "--out", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "missing shards") || !strings.Contains(stderr, ": 2 of 4") {
		t.Errorf("merge without shard 2: exit %d, %s", code, stderr)
	}
	if _, stderr, code := conform(t, "bench", "merge", filepath.Join(shardsDir, "shard-0-of-4.json"), filepath.Join(singleDir, "shard-0-of-1.json"), "--out", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "another run") {
		t.Errorf("merge of two runs: exit %d, %s", code, stderr)
	}
}

func TestShardUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--backend", "reference", "--shard", "4/4"}, "want I/N"},
		{[]string{"bench", "--backend", "reference", "--shard", "1/4"}, "common --run-id"},
		{[]string{"bench", "--backend", "reference,reference-http", "--shard", "0/1"}, "one backend"},
		{[]string{"bench", "--backend", "reference", "--ops", "-1"}, "must not be negative"},
		{[]string{"bench", "--backend", "reference", "--target-rate", "100:0"}, "--target-rate"},
		{[]string{"bench", "--backend", "reference", "--target-rate", "fast"}, "--target-rate"},
		{[]string{"bench", "merge", "does-not-exist"}, "does-not-exist"},
	} {
		_, stderr, code := conform(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("conform %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
