package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/bench"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/persist"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/provision"
)

func init() { extraCommands = append(extraCommands, benchCmd) }

type benchOptions struct {
	backends  []string
	workloads []string
	out       string
	duration  time.Duration
	workers   int
	large     bool
	driver    string
	seed      uint64
	list      bool
	// Sharded runs and pacing (bench.Shard).
	shard       string
	runID       string
	ops         int
	targetRate  string
	arrivalRate string
	maxWorkers  int
	repeats     int
	// The growth family (--workloads growth).
	growthSizes    string
	growthRequests int
	growthBudget   time.Duration
	growthData     string
}

// benchOutDefault is where bench and bench merge write without --out: a directory of its
// own, so that a benchmark never lands among the files of a conformance report
// (conform run's default --out, conform-report).
const benchOutDefault = "bench-report"

// benchOpenTimeout bounds opening one backend, an npm install of Azurite included.
const benchOpenTimeout = 6 * time.Minute

func benchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the load benchmarks against backends and write a comparison",
		Long: fmt.Sprintf(`Run the same workloads against each backend for --duration each and write bench.md,
bench.json and bench.svg (throughput and p99 per workload) into --out.

Workloads (--workloads, repeatable or comma-separated): a group (ops, ycsb, ycsb-default,
guide, growth), a family (PointGet, YCSB, HotPartition, ...), a case name or a glob over case names
("YCSB/workload=A/*"). Default: all %d (--list prints them). ycsb is YCSB A-F under each of
three key distributions, ycsb-default the six under YCSB's own (zipfian, latest for D).
growth, never part of the default, grows one table through --growth-sizes entities and at
each size measures a point read, a range query, an upsert and a batch (and, for a backend
in this process, its memory per entity); a size past --growth-budget is stopped and said.

Backends: reference, reference-http, azurite, azurite-legacy, azurite-docker, or any
endpoint as NAME=env:VARIABLE (the connection string read from the environment) or
NAME=CONNECTION_STRING. Each workload runs in its own table ("cf" + a run id), deleted
afterwards, and checks a sample of its results.

Throttling answers (429, 503 ServerBusy, 500 OperationTimedOut) are retried as the SDKs
retry them and counted as throttles, never as errors. --target-rate paces each workload at
that many operations per second, or ramps from R1 to R2 over the run (--target-rate R1:R2),
to find where throttling starts: a closed model, where a worker starts its next operation
only when its last one is done. --arrival-rate R (or R1:R2) is the open model: operations
start at that rate whatever the workers are doing, on workers added up to --max-workers;
an operation that finds them all busy is dropped and counted. Paced and open runs report
each request's service time and its latency from the intended start (wrk2's corrected
latency, YCSB's Intended-), and how many operations started late or were dropped.
--ops runs each workload for about that many requests instead of --duration: as many of its
steps as make that many requests by its warm-up (a point read is one request, a scan one per
page, a read-modify-write two), so that a point read and a table scan get the same number
of requests, not of steps. Each workload's line says how many entities its loading wrote
and how long it took before its run; a workload loading or running says so at least every
30 s.

Sharded runs: --shard I/N (or, in a Kubernetes Indexed Job, JOB_COMPLETION_INDEX with
CONFORM_SHARD_COUNT) makes this process shard I of N of one run, named by --run-id (or
CONFORM_RUN_ID), which every shard must share. Each shard runs every selected workload in
tables of its own, its part of --ops (or for --duration, at its own --target-rate), and
writes its raw results to --out/shard-I-of-N.json; "conform bench merge" adds the shards up.
See deploy/kubernetes/README.md.

Exit status: 0 when every workload ran and checked out; 1 when a workload returned wrong
results or failed too often; 2 for a usage error or a backend that cannot be opened.`, len(bench.Catalog(false))),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.backends, "backend", nil, "backend to benchmark (repeatable or comma-separated): a name, NAME=env:VARIABLE or NAME=CONNECTION_STRING")
	f.StringArrayVar(&o.workloads, "workloads", nil, "workloads to run (repeatable or comma-separated); default: all")
	f.StringVar(&o.out, "out", benchOutDefault, "directory to write bench.md, bench.json and bench.svg (or a shard's shard-I-of-N.json) into")
	f.DurationVar(&o.duration, "duration", 2*time.Second, "how long each workload runs on each backend")
	f.IntVar(&o.workers, "workers", 0, "workers per workload (default: each workload's own, 8 for most)")
	f.BoolVar(&o.large, "large", false, "larger data sets")
	f.StringVar(&o.driver, "driver", provision.DriverREST, "driver for HTTP backends: rest or sdk")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the workers' random choices (0: a fresh one, printed)")
	f.BoolVar(&o.list, "list", false, "list the workloads and exit")
	f.StringVar(&o.shard, "shard", "", "run as shard I/N of a sharded run (default: from JOB_COMPLETION_INDEX and CONFORM_SHARD_COUNT when set)")
	f.StringVar(&o.runID, "run-id", "", "the id every shard of a run shares (default $CONFORM_RUN_ID; a fresh one for a single process)")
	f.IntVar(&o.ops, "ops", 0, "requests per workload, over all shards (instead of --duration): each workload runs as many steps as make about that many requests, by its warm-up (a point read is one request, a table scan one per page)")
	f.StringVar(&o.targetRate, "target-rate", "", "operations per second per shard for each workload, R or a ramp R1:R2 over the run (default: as fast as the backend answers)")
	f.StringVar(&o.arrivalRate, "arrival-rate", "", "open model: start operations at R per second (or a ramp R1:R2) per shard, whatever the workers are doing")
	f.IntVar(&o.repeats, "repeats", 1, fmt.Sprintf("measured runs of each workload on each backend; from %d on, ops/s and the ratios between backends come with 95%% intervals (no ratio is printed without one)", bench.MinRepeats))
	f.StringVar(&o.growthSizes, "growth-sizes", "", "with --workloads growth: the entity counts the table grows through, comma-separated (default 10000,100000,1000000; --large adds 10000000)")
	f.IntVar(&o.growthRequests, "growth-requests", 2000, "with --workloads growth: requests of each operation at each size")
	f.DurationVar(&o.growthBudget, "growth-budget", 10*time.Minute, "with --workloads growth: the most one size may take, loading included; a size past it is stopped and the larger ones are not run")
	f.StringVar(&o.growthData, "growth-data", "", "with --workloads growth and --backend reference: keep the growth table in a data directory made under DIR (as conform serve --data) and measure the reference's restart from it after each size")
	f.IntVar(&o.maxWorkers, "max-workers", bench.DefaultMaxWorkers, "with --arrival-rate: the most workers a workload grows to; arrivals beyond are dropped and counted")
	cmd.AddCommand(benchMergeCmd())
	return cmd
}

// splitList flattens repeated and comma-separated values. A value holding ';' is a
// connection string and is kept whole.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		if strings.Contains(v, ";") {
			out = append(out, strings.TrimSpace(v))
			continue
		}
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func backendLabel(target string) string {
	if n, _, ok := strings.Cut(target, "="); ok {
		return strings.TrimSpace(n)
	}
	return target
}

func runBench(cmd *cobra.Command, o benchOptions) error {
	out := cmd.OutOrStdout()
	patterns, growth := bench.SplitGrowth(splitList(o.workloads))
	var cases []bench.Case
	if !growth || len(patterns) > 0 {
		cases = bench.Select(bench.Catalog(o.large), patterns)
		if len(cases) == 0 {
			return usageErr("--workloads %s selects no workload (see conform bench --list)", strings.Join(o.workloads, ","))
		}
	}
	growthSizes := bench.GrowthSizes(o.large)
	if o.growthSizes != "" {
		var err error
		if growthSizes, err = bench.ParseGrowthSizes(o.growthSizes); err != nil {
			return usageErr("--growth-sizes: %v", err)
		}
	}
	if o.growthRequests < 1 || o.growthBudget <= 0 {
		return usageErr("--growth-requests and --growth-budget must be positive")
	}
	if o.growthData != "" {
		if t := splitList(o.backends); !growth || len(t) != 1 || t[0] != provision.Reference {
			return usageErr("--growth-data measures the reference's restart: it needs --workloads growth and --backend reference alone")
		}
	}
	if o.list {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tGROUP")
		for _, c := range cases {
			fmt.Fprintf(tw, "%s\t%s\n", c.Name(), strings.Join(c.Tags, ","))
		}
		if growth || len(o.workloads) == 0 {
			fmt.Fprintf(tw, "%s/entities=%s\t%s\n", bench.GrowthFamily, joinInts(growthSizes), bench.GrowthGroup+" (only when named)")
		}
		return tw.Flush()
	}
	targets := splitList(o.backends)
	if len(targets) == 0 {
		return usageErr("conform bench needs at least one --backend (e.g. --backend reference-http --backend azurite)")
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[backendLabel(t)] {
			return usageErr("backend %q is given twice", backendLabel(t))
		}
		seen[backendLabel(t)] = true
		if err := validateBenchBackend(t); err != nil {
			return usageErr("%v", err)
		}
	}
	if o.duration <= 0 {
		return usageErr("--duration must be positive")
	}
	if o.ops < 0 {
		return usageErr("--ops must not be negative")
	}
	rate, rateTo, err := bench.ParseRate(o.targetRate)
	if err != nil {
		return usageErr("--target-rate: %v", err)
	}
	open := o.arrivalRate != ""
	if open {
		if o.targetRate != "" {
			return usageErr("--target-rate (closed model) and --arrival-rate (open model) exclude each other; give one")
		}
		if rate, rateTo, err = bench.ParseRate(o.arrivalRate); err != nil {
			return usageErr("--arrival-rate: %v", err)
		}
		if rate <= 0 {
			return usageErr("--arrival-rate must be positive")
		}
	}
	if o.maxWorkers < 1 {
		return usageErr("--max-workers must be positive")
	}
	if o.repeats < 1 || o.repeats > 100 {
		return usageErr("--repeats must be from 1 to 100")
	}
	shard, sharded, err := benchShard(o)
	if err != nil {
		return err
	}
	if sharded {
		if growth {
			return usageErr("a shard does not run the growth family; run it without --shard")
		}
		if o.repeats != 1 {
			return usageErr("a shard runs each workload once; repeat a sharded run by running it again")
		}
		if len(targets) != 1 {
			return usageErr("a shard benchmarks one backend; %d given", len(targets))
		}
		if o.runID == "" {
			o.runID = os.Getenv(bench.EnvRunID)
		}
		if o.runID == "" && shard.Count > 1 {
			return usageErr("the shards of one run need a common --run-id (or %s)", bench.EnvRunID)
		}
		if o.runID == "" {
			o.runID = bench.TableRunID(fmt.Sprint(time.Now().UnixNano()))
		}
		if o.seed == 0 { // every shard derives the same seed from the run id
			o.seed = binary.LittleEndian.Uint64([]byte(bench.TableRunID(o.runID)))
		}
		bench.UseRun(o.runID, shard)
	}
	if o.driver != provision.DriverREST && o.driver != provision.DriverSDK {
		return usageErr("--driver must be %s or %s", provision.DriverREST, provision.DriverSDK)
	}
	if o.seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.seed = binary.LittleEndian.Uint64(b[:])
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	defer context.AfterFunc(ctx, func() {
		fmt.Fprintln(cmd.ErrOrStderr(), "conform bench: stopping... the workload in flight ends and its table is deleted")
	})()

	limit := bench.Limit{Duration: o.duration, Ops: o.ops, Rate: rate, RateTo: rateTo, Open: open, MaxWorkers: o.maxWorkers}
	if o.ops > 0 {
		limit.Duration = 0
		if sharded {
			limit.Ops = bench.ShardOps(o.ops, shard)
		}
	}
	if sharded {
		return runShard(ctx, cmd, o, shard, cases, targets[0], limit)
	}
	measuring := ""
	if limit.Ops == 0 {
		measuring = fmt.Sprintf(" (%v of measuring, and each workload's loading)", time.Duration(len(cases)*len(targets))*limit.Duration)
	}
	selection := fmt.Sprintf("%s × %s, %s each%s", counted(len(cases), "workload"), counted(len(targets), "backend"), describeLimit(limit), measuring)
	switch {
	case growth && len(cases) == 0:
		selection = fmt.Sprintf("the growth family on %s", counted(len(targets), "backend"))
	case growth:
		selection += ", then the growth family"
	}
	fmt.Fprintf(out, "conform bench: %s, seed %d (replay with --seed %d)\n", selection, o.seed, o.seed)
	machine := bench.ThisMachine()
	fmt.Fprintf(out, "machine at the start: %s\n", machine.Words())
	rep := &bench.Report{Generated: time.Now().UTC(), Duration: o.duration, Seed: o.seed, Large: o.large, Repeats: o.repeats, Machine: &machine}
	unavailable, failed := false, false
	for _, t := range targets {
		name := backendLabel(t)
		octx, cancel := context.WithTimeout(ctx, benchOpenTimeout)
		quiet := sayEvery(out, benchProgressEvery, func(since time.Duration) string { return fmt.Sprintf("%s: opening, %s so far", name, since) })
		tgt, err := provision.Open(octx, t, provision.WithDriver(o.driver), provision.WithDirectSender())
		quiet()
		cancel()
		if err != nil {
			unavailable = true
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: %v\n", err)
			rep.Backends = append(rep.Backends, bench.BackendRun{Name: name, Error: err.Error()})
			continue
		}
		info := tgt.Info
		rep.Backends = append(rep.Backends, bench.BackendRun{Name: name, Kind: info.Kind, Version: info.Version, Driver: info.Driver, Endpoint: info.Endpoint})
		env := &bench.Env{Backend: tgt.Backend, Name: name, Large: o.large, Seed: o.seed, Workers: o.workers, ServerInProcess: bench.ServerInProcess(t)}
		fmt.Fprintln(out, describeBackend(name, info))
		for _, c := range cases {
			if ctx.Err() != nil {
				break
			}
			oc := benchOne(ctx, out, env, c, limit, o.repeats)
			rep.Outcomes = append(rep.Outcomes, oc)
			printOutcome(out, oc)
			if oc.Error != "" {
				failed = true
			}
		}
		if growth && ctx.Err() == nil {
			cfg := bench.GrowthConfig{Sizes: growthSizes, Requests: o.growthRequests, Budget: o.growthBudget}
			genv := env
			if o.growthData != "" {
				store, err := openGrowthStore(o.growthData)
				if err != nil {
					return usageErr("--growth-data: %v", err)
				}
				defer store.close()
				copied := *env
				copied.Backend, cfg.Restart = store, store.restart
				genv = &copied
			}
			g := benchGrowth(ctx, out, genv, cfg)
			rep.Growth = append(rep.Growth, g)
			if g.Error != "" {
				failed = true
				fmt.Fprintf(out, "  growth FAILED: %s\n", g.Error)
			}
		}
		if err := tgt.Close(); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: stop %s: %v\n", name, err)
		}
	}
	machine.LoadEnd, _ = bench.LoadAverage()
	if machine.Busy() || machine.LoadEnd > 0 {
		fmt.Fprintf(out, "machine: %s\n", machine.Words())
	}
	if o.repeats < bench.MinRepeats && len(targets) > 1 {
		fmt.Fprintf(out, "no ratio between backends without an interval: that needs --repeats %d or more\n", bench.MinRepeats)
	}
	if err := rep.WriteFiles(o.out); err != nil {
		return &exitError{code: exitInternal, msg: err.Error()}
	}
	fmt.Fprintf(out, "wrote %s/%s, %s and %s\n", o.out, bench.ReportMarkdown, bench.ReportJSON, bench.ReportSVG)
	switch {
	case ctx.Err() != nil:
		return &exitError{code: exitUsage, msg: "interrupted"}
	case failed:
		return &exitError{code: exitFailed, msg: "some workloads failed (see " + bench.ReportMarkdown + ")"}
	case unavailable:
		return &exitError{code: exitUsage, msg: "some backends could not be opened"}
	}
	return nil
}

// validateBenchBackend checks a backend argument of bench as conform run checks its own,
// before anything is started: a built-in name, NAME=CONNECTION_STRING or NAME=env:VARIABLE
// with the variable set and well formed. Bench opens backends with provision.Open, which
// knows neither mutants nor the +sdk suffix (--driver sdk drives every endpoint so).
func validateBenchBackend(target string) error {
	name, _, _ := strings.Cut(target, "=")
	switch {
	case strings.HasPrefix(target, mutant.Prefix):
		return fmt.Errorf("backend %s: conform bench does not run mutants (conform run does)", target)
	case strings.HasSuffix(name, all.SDKSuffix):
		return fmt.Errorf("backend %s: conform bench takes --driver sdk instead of the %s suffix", name, all.SDKSuffix)
	}
	return all.Validate(target)
}

// benchProgressEvery is how often a workload that is loading or running says so: within
// the 30 s a line that `conform bench` promises.
var benchProgressEvery = 25 * time.Second

// sayEvery prints line(time since the call, to the second) to w every interval until the
// returned function is called; that function returns once no line can follow.
func sayEvery(w io.Writer, interval time.Duration, line func(since time.Duration) string) (stop func()) {
	began := time.Now()
	return every(interval, func() { fmt.Fprintln(w, line(time.Since(began).Round(time.Second))) })
}

// every calls fn every interval until the returned function is called; that function
// returns once no call can follow.
func every(interval time.Duration, fn func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// benchOne prepares, runs and cleans up one workload on one backend, and prints to w its
// load phase (entities and time) when loaded and, every benchProgressEvery, what it is
// doing. With limit.Ops, the run takes about limit.Ops requests (bench.Load.StepsFor).
func benchOne(ctx context.Context, w io.Writer, env *bench.Env, c bench.Case, limit bench.Limit, repeats int) bench.Outcome {
	oc := bench.Outcome{Result: bench.Result{Backend: env.Name, Case: c.Name(), Family: c.Family, Params: c.Params, Note: c.Note}}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute+time.Duration(max(1, repeats))*limit.Duration)
	defer cancel()
	progress := &bench.Progress{}
	penv := *env
	penv.Progress = progress
	var phase atomic.Value
	phase.Store("loading")
	began := time.Now()
	defer sayEvery(w, benchProgressEvery, func(since time.Duration) string {
		if phase.Load() == "loading" {
			return fmt.Sprintf("  %-52s ... loading, %s so far, %d entities written", c.Name(), since, progress.Loaded())
		}
		return fmt.Sprintf("  %-52s ... running, %s since the workload began, %d operations done", c.Name(), since, progress.Steps())
	})()
	load, err := bench.Prepare(pctx, &penv, c)
	if err != nil {
		oc.Error = err.Error()
		return oc
	}
	oc.Loading = &bench.LoadPhase{Entities: progress.Loaded(), Elapsed: time.Since(began)}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = load.Close(cctx)
	}()
	phase.Store("running")
	if err := load.Warm(pctx); err != nil {
		oc.Error = err.Error()
		return oc
	}
	oc.Loading.RequestsPerStep = load.RequestsPerStep()
	sized := ""
	if limit.Ops > 0 {
		requests := limit.Ops
		limit.Ops = load.StepsFor(requests)
		sized = fmt.Sprintf("; %d requests are %d steps of %.3g %s each", requests, limit.Ops, load.RequestsPerStep(), map[bool]string{true: "request", false: "requests"}[load.RequestsPerStep() == 1])
	}
	fmt.Fprintf(w, "  %-52s loaded %d entities in %s%s\n", c.Name(), oc.Loading.Entities, oc.Loading.Elapsed.Round(time.Millisecond), sized)
	var (
		runs    []bench.Result
		lastErr error
	)
	for range max(1, repeats) {
		res, err := load.Run(pctx, limit, nil)
		runs = append(runs, res)
		oc.Repeats = append(oc.Repeats, res.OpsPerSec)
		if lastErr = err; err != nil || ctx.Err() != nil {
			break
		}
	}
	oc.Result = bench.CombineRepeats(runs)
	if len(oc.Repeats) < 2 {
		oc.Repeats = nil
	} else if iv, ok := bench.MeanInterval(oc.Repeats); ok {
		oc.Interval = &iv
	}
	if err := lastErr; err != nil {
		oc.Error = err.Error()
		var we *bench.WrongResultError
		if errors.As(err, &we) {
			oc.Error = "wrong result: " + we.Detail
		}
	}
	return oc
}

// benchGrowth runs the growth family on env's backend, a line per size as it goes and
// every benchProgressEvery while it loads or measures. A backend that runs in this process
// has its memory per entity measured.
func benchGrowth(ctx context.Context, w io.Writer, env *bench.Env, cfg bench.GrowthConfig) bench.GrowthResult {
	progress := &bench.Progress{}
	genv := *env
	genv.Progress = progress
	if env.ServerInProcess {
		cfg.Memory = bench.HeapBytes
	}
	fmt.Fprintf(w, "  %s: a table grown to %s entities, %d requests of each operation at each size, at most %s a size\n",
		bench.GrowthFamily, joinInts(cfg.Sizes), cfg.Requests, cfg.Budget)
	defer sayEvery(w, benchProgressEvery, func(since time.Duration) string {
		return fmt.Sprintf("  %s ... %s so far, %d entities written, %d operations done", bench.GrowthFamily, since, progress.Loaded(), progress.Steps())
	})()
	return bench.RunGrowth(ctx, &genv, cfg, func(line string) { fmt.Fprintf(w, "  %s, %s\n", bench.GrowthFamily, line) })
}

// growthStore is the reference kept in a data directory for the growth family's restart
// times: an api.Backend whose store restart replaces.
type growthStore struct {
	api.Backend
	store *persist.Store
	dir   string
}

// openGrowthStore makes a fresh data directory under parent and opens the reference in it.
func openGrowthStore(parent string) (*growthStore, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "growth-")
	if err != nil {
		return nil, err
	}
	s := &growthStore{dir: dir}
	if s.store, err = persist.Open(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.Backend = s.store
	return s, nil
}

// restart closes the store and opens it again from its directory, returning how long the
// opening took: the reference's restart from --data.
func (s *growthStore) restart(context.Context) (time.Duration, error) {
	if err := s.store.Close(); err != nil {
		return 0, err
	}
	began := time.Now()
	store, err := persist.Open(s.dir)
	if err != nil {
		return 0, err
	}
	took := time.Since(began)
	s.store, s.Backend = store, store
	return took, nil
}

// close closes the store and removes its directory.
func (s *growthStore) close() {
	_ = s.store.Close()
	_ = os.RemoveAll(s.dir)
}

// joinInts is "10000,100000".
func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

// printOutcome prints one workload's line, under its backend's (describeBackend).
func printOutcome(w io.Writer, oc bench.Outcome) {
	if oc.Error != "" {
		fmt.Fprintf(w, "  %-52s FAILED: %s\n", oc.Case, oc.Error)
		return
	}
	fmt.Fprintf(w, "  %-52s %8.0f ops/s %9.0f entities/s  p50 %8.1f µs  p99 %9.1f µs  errors %d  throttles %d%s%s\n",
		oc.Case, oc.OpsPerSec, oc.EntitiesPerSec, oc.Latency.P50, oc.Latency.P99, oc.Errors, oc.Throttles, pacedWords(oc.Summary), repeatWords(oc))
}

// repeatWords is what repeated runs add to a workload's line: the mean ops/s with its 95%
// interval over the runs; "" for one run.
func repeatWords(oc bench.Outcome) string {
	if oc.Interval == nil {
		return ""
	}
	return fmt.Sprintf("  (%d runs: mean %.0f ops/s, 95%% interval %.0f to %.0f)", len(oc.Repeats), oc.Interval.Mean, oc.Interval.Low, oc.Interval.High)
}

// pacedWords is what a paced or open run adds to a workload's line: the p99 from the
// intended start and the operations offered, late and dropped; "" for an unpaced run.
func pacedWords(s bench.Summary) string {
	if s.Intended == nil {
		return ""
	}
	return fmt.Sprintf("  intended-start p99 %.1f µs  offered %d late %d dropped %d", s.Intended.P99, s.Offered, s.Late, s.Dropped)
}

// describeBackend says what the backend named name is: its kind (where the name does not
// say it), version, driver and endpoint.
func describeBackend(name string, info driver.Info) string {
	var parts []string
	if info.Kind != "" && info.Kind != name {
		parts = append(parts, info.Kind)
	}
	for _, p := range []string{info.Version, info.Driver + " driver", info.Endpoint} {
		if p != "" && p != " driver" {
			parts = append(parts, p)
		}
	}
	return name + ": " + strings.Join(parts, ", ")
}

// counted is "1 workload" or "n workloads".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func describeLimit(l bench.Limit) string {
	s := l.Duration.String()
	if l.Ops > 0 {
		s = fmt.Sprintf("about %d requests", l.Ops)
	}
	switch {
	case l.Open && l.RateTo > 0:
		s += fmt.Sprintf(", arrivals ramped from %g/s to %g/s on up to %d workers", l.Rate, l.RateTo, l.MaxWorkers)
	case l.Open:
		s += fmt.Sprintf(", arrivals at %g/s on up to %d workers", l.Rate, l.MaxWorkers)
	case l.Rate > 0 && l.RateTo > 0:
		s += fmt.Sprintf(" ramped from %g/s to %g/s", l.Rate, l.RateTo)
	case l.Rate > 0:
		s += fmt.Sprintf(" at %g/s", l.Rate)
	}
	return s
}

// benchShard is the shard this process runs: --shard, else the Indexed Job's environment.
func benchShard(o benchOptions) (bench.Shard, bool, error) {
	if o.shard != "" {
		s, err := bench.ParseShard(o.shard)
		if err != nil {
			return s, false, usageErr("--shard: %v", err)
		}
		return s, true, nil
	}
	s, ok, err := bench.ShardFromEnv(os.Getenv)
	if err != nil {
		return s, false, usageErr("%v", err)
	}
	return s, ok, nil
}

// clockSamples and clockGap: five answers 200 ms apart bound a shard's clock offset to
// about ±0.1 s through the backend's one-second Date header.
const (
	clockSamples = 5
	clockGap     = 200 * time.Millisecond
)

// runShard runs every workload as one shard of a sharded run on target and writes the
// shard's raw results into o.out.
func runShard(ctx context.Context, cmd *cobra.Command, o benchOptions, shard bench.Shard, cases []bench.Case, target string, limit bench.Limit) error {
	out := cmd.OutOrStdout()
	name := backendLabel(target)
	octx, cancel := context.WithTimeout(ctx, benchOpenTimeout)
	quiet := sayEvery(out, benchProgressEvery, func(since time.Duration) string { return fmt.Sprintf("%s: opening, %s so far", name, since) })
	tgt, err := provision.Open(octx, target, provision.WithDriver(o.driver), provision.WithDirectSender())
	quiet()
	cancel()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer func() {
		if err := tgt.Close(); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: stop %s: %v\n", name, err)
		}
	}()
	info := tgt.Info
	res := bench.ShardResults{Run: bench.ShardRun{RunID: o.runID, Shard: shard, Backend: bench.BackendRun{Name: name, Kind: info.Kind, Version: info.Version, Driver: info.Driver, Endpoint: info.Endpoint},
		Seed: o.seed, Ops: o.ops, TargetRate: limit.Rate, TargetRateTo: limit.RateTo, Workers: o.workers, Large: o.large}}
	if limit.Open {
		res.Run.Open, res.Run.MaxWorkers = true, limit.MaxWorkers
	}
	if o.ops == 0 {
		res.Run.Duration = o.duration
	}
	for _, c := range cases {
		res.Run.Workloads = append(res.Run.Workloads, c.Name())
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	res.Clock, err = bench.MeasureClockOffset(cctx, &http.Client{Timeout: 10 * time.Second}, info.Endpoint, clockSamples, clockGap)
	cancel()
	if err != nil {
		return &exitError{code: exitUsage, msg: "clock offset: " + err.Error()}
	}
	fmt.Fprintf(out, "conform bench: shard %s of run %s on %s (tables %s...): %d workloads, %s each, seed %d; clock offset to the backend %v ± %v (%s)\n",
		shard, o.runID, name, bench.TableRunPrefix(), len(cases), describeLimit(limit), o.seed,
		res.Clock.Offset.Round(time.Millisecond), res.Clock.Uncertainty.Round(time.Millisecond), res.Clock.Source)
	env := &bench.Env{Backend: tgt.Backend, Name: name, Large: o.large, Seed: o.seed ^ uint64(shard.Index+1)*0x9e3779b97f4a7c15,
		Workers: o.workers, ServerInProcess: bench.ServerInProcess(target)}
	res.Started = time.Now().UTC()
	failed := false
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		var so bench.ShardOutcome
		if limit.Ops == 0 && limit.Duration == 0 { // this shard's part of --ops is nothing
			so.Outcome = bench.Outcome{Result: bench.Result{Backend: name, Case: c.Name(), Family: c.Family, Params: c.Params, Note: c.Note}}
		} else {
			so.Outcome = benchOne(ctx, out, env, c, limit, 1)
			so.Measures = so.Raw
		}
		res.Outcomes = append(res.Outcomes, so)
		printOutcome(out, so.Outcome)
		failed = failed || so.Error != ""
	}
	res.Finished = time.Now().UTC()
	path, err := res.Write(o.out)
	if err != nil {
		return &exitError{code: exitInternal, msg: "write the shard's results: " + err.Error()}
	}
	fmt.Fprintf(out, "wrote %s\n", path)
	switch {
	case ctx.Err() != nil:
		return &exitError{code: exitUsage, msg: "interrupted"}
	case failed:
		return &exitError{code: exitFailed, msg: "some workloads failed on this shard"}
	}
	return nil
}

func benchMergeCmd() *cobra.Command {
	var outDir string
	cmd := &cobra.Command{
		Use:   "merge DIR_OR_FILE...",
		Short: "Merge the shards of a sharded benchmark run into one report",
		Long: `Read the shard-I-of-N.json files in each DIR (or the files given) and write bench.md,
bench.json and bench.svg into --out: per workload the shards' HdrHistograms merged, counts
summed, throughput over time on the backend's clock, p50/p99/p99.9, and the throttled share
per partition.

It refuses shards of different runs, workloads or settings and a shard given twice, and
names the shards that are missing (exit 2). Exit 1 when a shard's run of a workload failed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stop := sayEvery(cmd.OutOrStdout(), benchProgressEvery, func(since time.Duration) string {
				return fmt.Sprintf("conform bench merge: reading and merging %s, %s so far", counted(len(args), "path"), since)
			})
			defer stop()
			shards, err := bench.ReadShardFiles(args)
			if err != nil {
				return usageErr("%v", err)
			}
			m, err := bench.Merge(shards)
			if err != nil {
				return usageErr("%v", err)
			}
			if err := m.WriteFiles(outDir); err != nil {
				return &exitError{code: exitInternal, msg: err.Error()}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "conform bench merge: run %s on %s, %d shards\n", m.Run.RunID, m.Run.Backend.Name, m.Run.Shard.Count)
			for _, oc := range m.Outcomes {
				fmt.Fprintf(out, "  %-58s %9d requests %10.0f ops/s  p50 %8.1f µs  p99 %9.1f µs  p99.9 %9.1f µs  errors %d  throttles %d%s\n",
					oc.Case, oc.Requests, oc.OpsPerSec, oc.Latency.P50, oc.Latency.P99, oc.Latency.P999, oc.Errors, oc.Throttles, pacedWords(oc.Summary))
			}
			fmt.Fprintf(out, "wrote %s/%s, %s and %s\n", outDir, bench.ReportMarkdown, bench.ReportJSON, bench.ReportSVG)
			if m.Failed() {
				return &exitError{code: exitFailed, msg: "some shards' workloads failed (see " + bench.ReportMarkdown + ")"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&outDir, "out", benchOutDefault, "directory to write bench.md, bench.json and bench.svg into")
	return cmd
}
