package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/bench"
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
}

// benchOpenTimeout bounds opening one backend, an npm install of Azurite included.
const benchOpenTimeout = 6 * time.Minute

func benchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the load benchmarks against backends and write a comparison",
		Long: `Run the same workloads against each backend for --duration each and write bench.md,
bench.json and bench.svg (throughput and p99 per workload) into --out.

Workloads (--workloads, repeatable or comma-separated): a group (ops, ycsb, guide), a family
(PointGet, YCSB, HotPartition, ...), a case name or a glob over case names
("YCSB/workload=A/*"). Default: every workload. --list prints them.

Backends: reference, reference-http, azurite, azurite-legacy, azurite-docker, or
NAME=CONNECTION_STRING. Each workload runs in its own table ("cf" + a run id), deleted
afterwards, and checks a sample of its results.

Exit status: 0 when every workload ran and checked out; 1 when a workload returned wrong
results or failed too often; 2 for a usage error or a backend that cannot be opened.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBench(cmd, o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.backends, "backend", nil, "backend to benchmark (repeatable or comma-separated): a name or NAME=CONNECTION_STRING")
	f.StringArrayVar(&o.workloads, "workloads", nil, "workloads to run (repeatable or comma-separated); default: all")
	f.StringVar(&o.out, "out", "conform-report", "directory to write bench.md, bench.json and bench.svg into")
	f.DurationVar(&o.duration, "duration", 2*time.Second, "how long each workload runs on each backend")
	f.IntVar(&o.workers, "workers", 0, "workers per workload (default: each workload's own, 8 for most)")
	f.BoolVar(&o.large, "large", false, "larger data sets")
	f.StringVar(&o.driver, "driver", provision.DriverREST, "driver for HTTP backends: rest or sdk")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the workers' random choices (0: a fresh one, printed)")
	f.BoolVar(&o.list, "list", false, "list the workloads and exit")
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
	cases := bench.Select(bench.Catalog(o.large), splitList(o.workloads))
	if len(cases) == 0 {
		return usageErr("--workloads %s selects no workload (see conform bench --list)", strings.Join(o.workloads, ","))
	}
	if o.list {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tGROUP")
		for _, c := range cases {
			fmt.Fprintf(tw, "%s\t%s\n", c.Name(), strings.Join(c.Tags, ","))
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
	}
	if o.duration <= 0 {
		return usageErr("--duration must be positive")
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

	fmt.Fprintf(out, "conform bench: %d workloads × %d backends, %s each, seed %d (replay with --seed %d)\n", len(cases), len(targets), o.duration, o.seed, o.seed)
	rep := &bench.Report{Generated: time.Now().UTC(), Duration: o.duration, Seed: o.seed, Large: o.large}
	unavailable, failed := false, false
	for _, t := range targets {
		name := backendLabel(t)
		octx, cancel := context.WithTimeout(ctx, benchOpenTimeout)
		tgt, err := provision.Open(octx, t, provision.WithDriver(o.driver), provision.WithDirectSender())
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
		for _, c := range cases {
			if ctx.Err() != nil {
				break
			}
			oc := benchOne(ctx, env, c, o.duration)
			rep.Outcomes = append(rep.Outcomes, oc)
			printOutcome(out, oc)
			if oc.Error != "" {
				failed = true
			}
		}
		if err := tgt.Close(); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "conform: stop %s: %v\n", name, err)
		}
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

// benchOne prepares, runs and cleans up one workload on one backend.
func benchOne(ctx context.Context, env *bench.Env, c bench.Case, d time.Duration) bench.Outcome {
	oc := bench.Outcome{Result: bench.Result{Backend: env.Name, Case: c.Name(), Family: c.Family, Params: c.Params, Note: c.Note}}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	load, err := bench.Prepare(pctx, env, c)
	if err != nil {
		oc.Error = err.Error()
		return oc
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = load.Close(cctx)
	}()
	if err := load.Warm(pctx); err != nil {
		oc.Error = err.Error()
		return oc
	}
	res, err := load.Run(pctx, bench.Limit{Duration: d}, nil)
	oc.Result = res
	if err != nil {
		oc.Error = err.Error()
		var we *bench.WrongResultError
		if errors.As(err, &we) {
			oc.Error = "wrong result: " + we.Detail
		}
	}
	return oc
}

func printOutcome(w io.Writer, oc bench.Outcome) {
	if oc.Error != "" {
		fmt.Fprintf(w, "  %-16s %-58s FAILED: %s\n", oc.Backend, oc.Case, oc.Error)
		return
	}
	fmt.Fprintf(w, "  %-16s %-58s %10.0f ops/s %10.0f entities/s  p50 %8.1f µs  p99 %9.1f µs  errors %d\n",
		oc.Backend, oc.Case, oc.OpsPerSec, oc.EntitiesPerSec, oc.Latency.P50, oc.Latency.P99, oc.Errors)
}
