package bench

import (
	"encoding/xml"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shardOf builds the results of shard i of n whose one workload recorded values (ns) as get
// requests, starting at start.
func shardOf(i, n int, start time.Time, values []int64) ShardResults {
	m := NewMeter()
	m.Begin(start)
	w := m.Worker(nil)
	for _, v := range values {
		t := w.tallies[KindGet]
		if t == nil {
			t = &tally{hist: newHistogram()}
			w.tallies[KindGet] = t
		}
		_ = t.hist.RecordValue(v)
		t.requests++
		t.entities++
		w.second(start.Add(time.Duration(v))).Requests++
		w.partition("p").Requests++
	}
	if i == 0 && n == 4 { // shard 0 of 4 met throttling on partition "hot": ten answers, one request
		for j := 0; j < 10; j++ {
			w.throttled(KindGet, "hot")
		}
		w.partition("hot").Requests++
		w.tallies[KindGet].requests++
		_ = w.tallies[KindGet].hist.RecordValue(1_000_000)
	}
	raw := m.Raw()
	res := Result{Case: "PointGet/x", Family: "PointGet", Steps: int64(len(values)), Started: start, Summary: raw.Summary(time.Second)}
	return ShardResults{Format: ShardFormat, Run: ShardRun{RunID: "r1", Shard: Shard{i, n}, Workloads: []string{"PointGet/x"}, Backend: BackendRun{Name: "b"}, Ops: 4000},
		Started: start, Finished: start.Add(time.Second), Outcomes: []ShardOutcome{{Outcome: Outcome{Result: res}, Measures: raw}}}
}

// TestMergedShardsEqualOneHistogram: four shards' histograms, written in their encoded form,
// read back and merged, equal one histogram of all the values at every percentile (within
// the histogram's precision: the same buckets), and every count adds up.
func TestMergedShardsEqualOneHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now().Truncate(time.Second)
	all := newHistogram()
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		var vs []int64
		for j := 0; j < 1000; j++ {
			v := int64(200_000 + r.ExpFloat64()*float64(i+1)*300_000) // shards of different speeds
			vs = append(vs, v)
			_ = all.RecordValue(v)
		}
		if i == 0 {
			_ = all.RecordValue(1_000_000) // the throttled request
		}
		s := shardOf(i, 4, start.Add(time.Duration(i)*time.Second), vs)
		if _, err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := ReadShardFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	o := m.Outcomes[0]
	if o.Requests != 4001 || o.Entities != 4000 || o.Steps != 4000 || o.Throttles != 10 || len(o.Kinds) != 1 || o.Kinds[0].Requests != 4001 {
		t.Fatalf("merged counts: requests %d entities %d steps %d kinds %+v", o.Requests, o.Entities, o.Steps, o.Kinds)
	}
	merged := o.raw.Kinds[0].Histogram()
	for _, q := range []float64{1, 10, 50, 90, 99, 99.9, 100} {
		if got, want := merged.ValueAtQuantile(q), all.ValueAtQuantile(q); !all.ValuesAreEquivalent(got, want) {
			t.Errorf("p%v: merged %d, one histogram %d", q, got, want)
		}
	}
	var perSecond int64
	for _, s := range o.Series {
		perSecond += s.Requests
	}
	if perSecond != 4000 || len(o.Series) < 4 {
		t.Errorf("per-second series: %d requests over %d seconds, want 4000 over at least 4 (shards started a second apart)", perSecond, len(o.Series))
	}
	if o.Elapsed != 4*time.Second {
		t.Errorf("span %v, want 4s (first start to last end)", o.Elapsed)
	}
	if len(o.Partitions) != 2 || o.Partitions[0] != (PartitionTally{"hot", 1, 10}) || o.Partitions[1] != (PartitionTally{"p", 4000, 0}) {
		t.Errorf("partitions %+v, want the throttled one first", o.Partitions)
	}
	out := t.TempDir()
	if err := m.WriteFiles(out); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportMarkdown))
	for _, want := range []string{"| PointGet/x | 4001 |", "| PointGet/x | hot | 1 | 10 | 90.9% |", "4 shards"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, ReportSVG))
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	for {
		if _, err := dec.Token(); err != nil {
			if err != io.EOF {
				t.Fatalf("bench.svg is not well-formed: %v", err)
			}
			break
		}
	}
	if !strings.Contains(string(svg), "polyline") || !strings.Contains(string(svg), "hot 90.9%") {
		t.Errorf("bench.svg lacks the series or the throttled partition")
	}
}

func TestMergeRefusesWhatIsNotOneRun(t *testing.T) {
	start := time.Now()
	ok := func(i int) ShardResults { return shardOf(i, 3, start, []int64{1000, 2000}) }
	other := func(i int, f func(*ShardRun)) ShardResults { s := ok(i); f(&s.Run); return s }
	for _, tc := range []struct {
		name   string
		shards []ShardResults
		want   string
	}{
		{"another run", []ShardResults{ok(0), ok(1), other(2, func(r *ShardRun) { r.RunID = "r2" })}, `run "r2"`},
		{"other workloads", []ShardResults{ok(0), ok(1), other(2, func(r *ShardRun) { r.Workloads = []string{"Insert/x"} })}, "other workloads"},
		{"another shard count", []ShardResults{ok(0), ok(1), other(2, func(r *ShardRun) { r.Shard.Count = 4 })}, "one of 4 shards"},
		{"other settings", []ShardResults{ok(0), ok(1), other(2, func(r *ShardRun) { r.TargetRate = 100 })}, "other settings"},
		{"a shard twice", []ShardResults{ok(0), ok(1), ok(1)}, "given twice"},
		{"missing shards", []ShardResults{ok(1)}, "missing shards of run r1: 0, 2 of 3"},
	} {
		_, err := Merge(tc.shards)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
		if tc.name == "missing shards" && !errors.Is(err, ErrMissingShards) {
			t.Errorf("missing shards: %v does not wrap ErrMissingShards", err)
		}
	}
}

func TestDamagedShardFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	s := shardOf(0, 1, time.Now(), []int64{1000, 2000, 3000})
	path, err := s.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := s.Outcomes[0].Measures.Kinds[0].Encoded
	for name, bad := range map[string]string{
		"cut":                  string(good[:len(good)/2]),
		"histogram cut":        strings.Replace(string(good), enc, enc[:len(enc)/2], 1),
		"histogram too short":  strings.Replace(string(good), enc, "HISTFA==", 1),
		"histogram not base64": strings.Replace(string(good), enc, "%%%", 1),
		"count disagrees":      strings.ReplaceAll(string(good), `"requests": 3,`, `"requests": 4,`),
		"unknown field":        strings.Replace(string(good), `"format"`, `"surprise": 1, "format"`, 1),
		"another format":       strings.Replace(string(good), ShardFormat, "conform-bench-shard/9", 1),
	} {
		if bad == string(good) {
			t.Fatalf("%s: the damage changed nothing", name)
		}
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadShardFiles([]string{dir}); err == nil || !strings.Contains(err.Error(), "shard-0-of-1.json") {
			t.Errorf("%s: %v, want a refusal naming the file", name, err)
		}
	}
}

func TestShardsSplitOperationsAndKeys(t *testing.T) {
	total := 0
	for i := 0; i < 4; i++ {
		total += ShardOps(4003, Shard{i, 4})
	}
	if total != 4003 {
		t.Errorf("the shards' parts add up to %d, want 4003", total)
	}
	for _, bad := range []string{"4/4", "-1/4", "1", "a/b", "0/0", "0/10001"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if s, ok, err := ShardFromEnv(env(map[string]string{EnvShardIndex: "2", EnvShardCount: "4"})); !ok || err != nil || s != (Shard{2, 4}) {
		t.Errorf("from the environment: %v %v %v", s, ok, err)
	}
	if _, _, err := ShardFromEnv(env(map[string]string{EnvShardIndex: "2"})); err == nil {
		t.Error("an index without a count is accepted")
	}
	if id := TableRunID("0b6c3f7e-1f8e-4c9a-9d55-2b7f0c1a9e11"); !runIDPattern.MatchString(id) || id != TableRunID("0b6c3f7e-1f8e-4c9a-9d55-2b7f0c1a9e11") {
		t.Errorf("TableRunID of a Job uid: %q", id)
	}
	saved := tableRun
	defer func() { tableRun = saved }()
	names := map[string]bool{}
	for i := 0; i < 12; i++ {
		UseRun("abcd1234", Shard{i, 12})
		n := newTableName()
		if names[n] || !strings.HasPrefix(n, "cfabcd1234b") {
			t.Fatalf("shard %d: table %q", i, n)
		}
		names[n] = true
	}
}

func TestThrottlingOnsetIsTheFirstSecondOverOnePercent(t *testing.T) {
	series := []Second{{Requests: 1000}, {Requests: 1500, Throttles: 5}, {Requests: 1900, Throttles: 40}, {Requests: 1200, Throttles: 900}}
	got := throttlingOnset(series)
	if got == nil || *got != (Onset{Second: 2, Requests: 1900, Throttles: 40}) {
		t.Fatalf("onset %+v, want second 2 (40 of 1940 answers; second 1's 5 of 1505 are under 1%%)", got)
	}
	if throttlingOnset(series[:2]) != nil {
		t.Error("an onset below 1% of a second's answers")
	}
	m := &Merged{Run: ShardRun{RunID: "r", Shard: Shard{0, 2}, TargetRate: 100, TargetRateTo: 2000}, Outcomes: []MergedOutcome{{Case: "Insert/x", Series: series, ThrottlingFrom: got}}}
	if md := string(m.Markdown()); !strings.Contains(md, "second 2, at 1,900 requests/s") || !strings.Contains(md, "ramped from 100 to 2,000") {
		t.Errorf("bench.md:\n%s", md)
	}
	if svg := string(m.SVG()); !strings.Contains(svg, "throttling from second 2") {
		t.Error("bench.svg does not mark where throttling started")
	}
}
