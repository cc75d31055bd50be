package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A sharded run is N processes (shards 0 to N-1, on one machine or many) that together run
// each workload once at N times the load, with no coordinator: each shard runs every
// selected workload in tables of its own under the run's common id (so that the shards'
// key spaces are disjoint), its part of an operation count (ShardOps), at its own
// --target-rate, and writes its raw results to shard-<I>-of-<N>.json. `conform bench merge`
// adds the shards up. A Kubernetes Indexed Job runs the shards (deploy/kubernetes).

// ShardFormat names the format of a shard's results file.
const ShardFormat = "conform-bench-shard/1"

// Environment of a sharded run: the Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in
// every pod; the shard count (the Job's completions) and the run id are set by the
// manifest.
const (
	EnvShardIndex = "JOB_COMPLETION_INDEX"
	EnvShardCount = "CONFORM_SHARD_COUNT"
	EnvRunID      = "CONFORM_RUN_ID"
)

// Shard is one shard of a run: Index from 0 to Count-1.
type Shard struct {
	Index, Count int
}

// String is "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// FileName is the name of the shard's results file: "shard-I-of-N.json".
func (s Shard) FileName() string { return fmt.Sprintf("shard-%d-of-%d.json", s.Index, s.Count) }

// MaxShards bounds the shard count.
const MaxShards = 10000

// ParseShard reads "I/N" with 0 <= I < N <= MaxShards.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 0/4", v)
	}
	return newShard(i, n)
}

func newShard(index, count string) (Shard, error) {
	i, err1 := strconv.Atoi(strings.TrimSpace(index))
	n, err2 := strconv.Atoi(strings.TrimSpace(count))
	if err1 != nil || err2 != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %s/%s: want I/N with 0 <= I < N <= %d", index, count, MaxShards)
	}
	return Shard{Index: i, Count: n}, nil
}

// ShardFromEnv reads the shard from the Indexed Job's environment (EnvShardIndex and
// EnvShardCount, through getenv); ok is false when neither is set. One without the other
// is an error.
func ShardFromEnv(getenv func(string) string) (s Shard, ok bool, err error) {
	index, count := getenv(EnvShardIndex), getenv(EnvShardCount)
	if index == "" && count == "" {
		return Shard{}, false, nil
	}
	if index == "" || count == "" {
		return Shard{}, false, fmt.Errorf("%s=%q and %s=%q: a shard needs both", EnvShardIndex, index, EnvShardCount, count)
	}
	s, err = newShard(index, count)
	return s, err == nil, err
}

// ShardOps is shard s's part of total operations: total/N, one more for the first
// total%N shards, so that the shards' parts add up to total.
func ShardOps(total int, s Shard) int {
	n := total / s.Count
	if s.Index < total%s.Count {
		n++
	}
	return n
}

var runIDPattern = regexp.MustCompile(`^[a-z0-9]{8}$`)

// TableRunID is the 8-character run id of table names for a run id given by the user: the
// id itself when it is 8 lower-case letters or digits, else a hash of it (a Kubernetes
// Job's uid, for instance), so that every shard of one run derives the same tables' prefix.
func TableRunID(runID string) string {
	if runIDPattern.MatchString(runID) {
		return runID
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(runID))
	v := h.Sum64()
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 8)
	for i := range out {
		out[i] = digits[v%uint64(len(digits))]
		v /= uint64(len(digits))
	}
	return string(out)
}

// UseRun makes the tables this process creates from now on belong to run id runID
// (TableRunID) and, when shard.Count > 0, to that shard: "cf" + id + "b" + shard index +
// a 6-digit sequence number, so that no two shards of a run share a table. Call it before
// any workload is prepared.
func UseRun(runID string, shard Shard) {
	tableRun.id = TableRunID(runID)
	tableRun.sharded = shard.Count > 0
	tableRun.shard = shard.Index
}

// ParseRate reads a --target-rate: "R" (operations per second) or "R1:R2" (a ramp from R1
// to R2 over the run); "" and "0" mean unpaced.
func ParseRate(v string) (from, to float64, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, 0, nil
	}
	a, b, ramp := strings.Cut(v, ":")
	from, err = strconv.ParseFloat(strings.TrimSpace(a), 64)
	if err == nil && ramp {
		to, err = strconv.ParseFloat(strings.TrimSpace(b), 64)
	}
	if err != nil || from < 0 || to < 0 || from > 1e9 || to > 1e9 || ramp && (from == 0 || to == 0) {
		return 0, 0, fmt.Errorf("rate %q: want R or R1:R2, operations per second (positive for a ramp)", v)
	}
	return from, to, nil
}

// ClockOffset is how far a shard's clock is from the backend's, measured from the Date
// header of its answers (one-second resolution): the backend's time is the shard's plus
// Offset, within ±Uncertainty. Source says how it was measured.
type ClockOffset struct {
	Offset      time.Duration `json:"offset_ns"`
	Uncertainty time.Duration `json:"uncertainty_ns"`
	Source      string        `json:"source"`
	Samples     int           `json:"samples"`
}

// MeasureClockOffset measures this machine's clock against the Date header of the answers
// of endpoint (any answer will do; the request carries no credential): samples requests
// spaced by gap. Each answer bounds the offset: the server's clock read Date, truncated to
// the second, between the request's start and the answer's arrival. The bounds intersect.
func MeasureClockOffset(ctx context.Context, client *http.Client, endpoint string, samples int, gap time.Duration) (ClockOffset, error) {
	if endpoint == "" {
		return ClockOffset{Source: "none: the backend runs in this process, on this clock"}, nil
	}
	lo, hi := time.Duration(-1<<62), time.Duration(1<<62)
	got := 0
	for i := 0; i < samples; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ClockOffset{}, ctx.Err()
			case <-time.After(gap):
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		if err != nil {
			return ClockOffset{}, err
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		t1 := time.Now()
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		d, err := http.ParseTime(resp.Header.Get("Date"))
		if err != nil {
			continue
		}
		got++
		lo = max(lo, d.Sub(t1))
		hi = min(hi, d.Add(time.Second).Sub(t0))
	}
	if got == 0 {
		return ClockOffset{Source: "none: no answer carried a Date header"}, nil
	}
	if lo > hi { // a clock stepped while measuring: keep the last bounds' middle
		lo, hi = hi, lo
	}
	return ClockOffset{Offset: (lo + hi) / 2, Uncertainty: (hi - lo) / 2, Source: "the backend's Date header", Samples: got}, nil
}

// ShardRun describes a sharded run; every shard of one run writes the same one, but for
// Shard, Clock and the times.
type ShardRun struct {
	RunID string `json:"run_id"`
	Shard Shard  `json:"shard"`
	// Workloads are the selected cases' names, in order.
	Workloads []string   `json:"workloads"`
	Backend   BackendRun `json:"backend"`
	Seed      uint64     `json:"seed"`
	// Ops is each workload's operation count over all shards (0: each shard runs for
	// Duration); TargetRate is each shard's pace in operations per second (0: unpaced),
	// ramped to TargetRateTo over the run when that is set (Limit).
	Ops          int           `json:"ops,omitempty"`
	Duration     time.Duration `json:"duration_ns,omitempty"`
	TargetRate   float64       `json:"target_rate,omitempty"`
	TargetRateTo float64       `json:"target_rate_to,omitempty"`
	// Open says the rates are arrival rates (Limit.Open), on up to MaxWorkers workers.
	Open       bool `json:"open,omitempty"`
	MaxWorkers int  `json:"max_workers,omitempty"`
	Workers    int  `json:"workers,omitempty"`
	Large      bool `json:"large,omitempty"`
}

// differs says how o differs from r as a run (not as a shard), or "" when it does not.
func (r ShardRun) differs(o ShardRun) string {
	switch {
	case r.RunID != o.RunID:
		return fmt.Sprintf("run %q, not %q", o.RunID, r.RunID)
	case r.Shard.Count != o.Shard.Count:
		return fmt.Sprintf("one of %d shards, not %d", o.Shard.Count, r.Shard.Count)
	case strings.Join(r.Workloads, "\n") != strings.Join(o.Workloads, "\n"):
		return "other workloads"
	case r.Backend.Name != o.Backend.Name:
		return fmt.Sprintf("backend %q, not %q", o.Backend.Name, r.Backend.Name)
	case r.Ops != o.Ops || r.Duration != o.Duration || r.TargetRate != o.TargetRate || r.TargetRateTo != o.TargetRateTo || r.Open != o.Open || r.MaxWorkers != o.MaxWorkers || r.Workers != o.Workers || r.Large != o.Large || r.Seed != o.Seed:
		return "other settings (operations, duration, target rate, workers, data size or seed)"
	}
	return ""
}

// ShardOutcome is one workload's result on one shard, with its raw measures.
type ShardOutcome struct {
	Outcome
	Measures RawMeasures `json:"measures"`
}

// ShardResults is what one shard writes: the run, its clock offset, and per workload its
// result and raw measures.
type ShardResults struct {
	Format   string         `json:"format"`
	Run      ShardRun       `json:"run"`
	Clock    ClockOffset    `json:"clock"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	Outcomes []ShardOutcome `json:"outcomes"`
}

// Write writes the results into dir as Shard.FileName(), creating dir; the file appears
// whole or not at all.
func (s *ShardResults) Write(dir string) (string, error) {
	s.Format = ShardFormat
	for i := range s.Outcomes {
		if err := s.Outcomes[i].Measures.Encode(); err != nil {
			return "", err
		}
	}
	js, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, s.Run.Shard.FileName())
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(js, '\n'), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// maxShardFile bounds a shard file read by ReadShardFiles.
const maxShardFile = 256 << 20

// ReadShardFiles reads the shard files among paths: a file is read as one; a directory
// contributes its files named shard-*-of-*.json. Damaged files are refused with their
// name.
func ReadShardFiles(paths []string) ([]ShardResults, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "shard-*-of-*.json"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s holds no shard-*-of-*.json", p)
		}
		files = append(files, m...)
	}
	var out []ShardResults
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if st.Size() > maxShardFile {
			return nil, fmt.Errorf("%s: %d bytes, more than a shard writes", f, st.Size())
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s ShardResults
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: not a shard's results: %w", f, err)
		}
		if s.Format != ShardFormat {
			return nil, fmt.Errorf("%s: format %q, want %q", f, s.Format, ShardFormat)
		}
		for i := range s.Outcomes {
			if n := len(s.Outcomes[i].Measures.Series); n > MaxSeconds {
				return nil, fmt.Errorf("%s: %s: %d seconds, more than the %d a series holds", f, s.Outcomes[i].Case, n, MaxSeconds)
			}
			if err := s.Outcomes[i].Measures.Decode(); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", f, s.Outcomes[i].Case, err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ErrMissingShards is wrapped by Merge's error when shards of the run are missing.
var ErrMissingShards = errors.New("missing shards")

// TableRunPrefix is the prefix of the tables this process creates: "cf" and the run id.
func TableRunPrefix() string { return TablePrefix + tableRun.id }
