package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/explore"
	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver/rest"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/replay"
	"github.com/tableconform/conform/suites/verdict"
)

func init() { extraCommands = append(extraCommands, exploreCmd) }

type exploreOptions struct {
	backend        string
	against        string
	seed           uint64
	duration       time.Duration
	ops            int
	out            string
	maxDifferences int
	shrinkTime     time.Duration
	maxOps         int
	tables         int
	noLimits       bool
	noBaseline     bool
}

func exploreCmd() *cobra.Command {
	var o exploreOptions
	cmd := &cobra.Command{
		Use:   "explore --backend X [--against Y] [--seed S] [--duration D | --ops N]",
		Short: "Find differences no rule names yet: random operation sequences against two backends, shrunk",
		Long: `Explore runs random but valid-looking sequences of Table operations (tables, entities of
every EDM type with edge keys and values, upserts, merges, replaces and deletes with ETags or
*, batches, some of them failing, queries with random filters, $top, $select and paging)
against --backend and --against (the reference in process by default), each in its own
tables, and compares every answer and what the tables hold afterwards. The first sequence
that shows a difference of a new kind is shrunk to a minimal one and written into --out:
a script of its steps with both answers, a Go test, and a test-proxy recording of the
--against backend's answers that conform replay can replay against any endpoint (a real
account tells which side is right). Each difference is matched against the catalogue, and
one that the explored backend's baseline lists is reported as known.

The same --seed against the same backends runs the same sequences. A progress line comes
every 30 s. explore.md and explore.json list the distinct differences.

Exit status: 0 when sequences ran to the bound and showed no new difference, 1 when one
showed a difference no baseline lists, 3 (inconclusive) when interrupted or when no
sequence got an answer to every call, 2 for a usage error or a backend that cannot be
opened.`,
		RunE: func(cmd *cobra.Command, _ []string) error { return runExplore(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "backend to explore: reference, reference-http, azurite, mutant:NAME, NAME=env:VARIABLE or NAME=CONNECTION_STRING")
	f.StringVar(&o.against, "against", provision.Reference, "backend to compare with")
	f.Uint64Var(&o.seed, "seed", 0, "seed of the run (default: from the clock; the report says which)")
	f.DurationVar(&o.duration, "duration", 0, "stop after this long (default 1m when --ops is not given)")
	f.IntVar(&o.ops, "ops", 0, "stop after this many operations")
	f.StringVar(&o.out, "out", "conform-explore", "directory to write the report and reproductions into")
	f.IntVar(&o.maxDifferences, "max-differences", 20, "stop after this many distinct differences (0: no limit)")
	f.DurationVar(&o.shrinkTime, "shrink-time", 20*time.Second, "the most time spent shrinking one difference")
	f.IntVar(&o.maxOps, "sequence-ops", gen.DefaultConfig.MaxOps, "the most operations of one sequence")
	f.IntVar(&o.tables, "tables", gen.DefaultConfig.Tables, "tables each sequence works on")
	f.BoolVar(&o.noLimits, "no-limits", false, "draw no values at the documented size limits")
	f.BoolVar(&o.noBaseline, "no-baseline", false, "report the differences the explored backend's baseline lists as new")
	return cmd
}

func runExplore(cmd *cobra.Command, o exploreOptions) error {
	switch {
	case o.backend == "":
		return usageErr("explore needs --backend")
	case o.duration < 0 || o.ops < 0 || o.maxDifferences < 0 || o.shrinkTime < 0:
		return usageErr("--duration, --ops, --max-differences and --shrink-time cannot be negative")
	case o.maxOps < 1 || o.tables < 1 || o.tables > 9:
		return usageErr("--sequence-ops must be at least 1 and --tables between 1 and 9")
	}
	if o.duration == 0 && o.ops == 0 {
		o.duration = time.Minute
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.OpenTimeout)
	explored, err := all.Open(ctx, o.backend)
	if err != nil {
		cancel()
		return &exitError{code: exitUsage, msg: fmt.Sprintf("open %s: %v", o.backend, err)}
	}
	defer func() { _ = explored.Close() }()
	against, err := all.Open(ctx, o.against)
	cancel()
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("open %s: %v", o.against, err)}
	}
	defer func() { _ = against.Close() }()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return usageErr("create %s: %v", o.out, err)
	}
	opts := explore.Options{
		Seed: o.seed, Duration: o.duration, Ops: o.ops, MaxDifferences: o.maxDifferences, ShrinkTime: o.shrinkTime,
		Config:   gen.Config{Tables: o.tables, MaxOps: o.maxOps, NoLimits: o.noLimits},
		Progress: cmd.ErrOrStderr(),
	}
	if !o.noBaseline {
		info := explored.Info
		b, file, _, err := fixtures.FindBaseline("", info.Name, info.Kind, info.Version)
		if err == nil && len(b.Expected) > 0 {
			opts.Baseline = &b
			fmt.Fprintf(cmd.ErrOrStderr(), "explore: %s's known divergences are those of %s\n", info.Name, file)
		}
	}
	x := &explore.Explorer{Explored: explored.Backend, Against: against.Backend,
		ExploredName: explored.Info.Name, AgainstName: against.Info.Name, Options: opts}
	fmt.Fprintf(cmd.ErrOrStderr(), "explore: %s against %s, seed %d\n", x.ExploredName, x.AgainstName, o.seed)
	runCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	res := x.Run(runCtx)
	stop()
	if len(res.Differences) > 0 {
		if err := res.WriteFiles(o.out); err != nil {
			return err
		}
		if err := recordDifferences(cmd, against, &res, o.out); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "explore: no recording written: %v\n", err)
		}
	}
	if err := writeExploreReport(o.out, res); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), res.Sentence())
	for i, d := range res.Differences {
		mark := "new"
		if d.Known {
			mark = "known"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "  %d (%s): %s; %s\n", i+1, mark, d.Summary, d.Coverage)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Report: %s\n", filepath.Join(o.out, "explore.md"))
	code := verdict.ExploreExit(verdict.Explore{Sequences: res.Sequences, Inconclusive: res.Inconclusive, New: res.New(), Interrupted: res.Stopped == "interrupted"})
	switch code {
	case exitOK:
		return nil
	case exitInconclusive:
		return &exitError{code: code, msg: "inconclusive: " + res.Stopped + "; no sequence got an answer to every call, or the run was interrupted"}
	}
	return &exitError{code: code}
}

// recordDifferences runs each difference's minimal sequence again against the --against
// backend, served over loopback HTTP by the reference's server, and keeps the traffic as a
// test-proxy recording that conform replay replays against the explored backend (or a real
// account).
func recordDifferences(cmd *cobra.Command, against *framework.Target, res *explore.Result, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tgt, stopServer, err := serveOverHTTP(ctx, against.Backend)
	if err != nil {
		return err
	}
	defer stopServer()
	rec, err := replay.NewRecorder(dir, rest.NewTransport())
	if err != nil {
		return err
	}
	conn := "DefaultEndpointsProtocol=http;AccountName=" + tgt.Account + ";AccountKey=" + base64.StdEncoding.EncodeToString(tgt.Key) + ";TableEndpoint=" + tgt.Endpoint + ";"
	b, err := rest.New(conn, rest.WithHTTPClient(&http.Client{Transport: rec, Timeout: 30 * time.Second}))
	if err != nil {
		return err
	}
	for i := range res.Differences {
		d := &res.Differences[i]
		name := fmt.Sprintf("difference-%d", i+1)
		rec.Begin(name)
		// Tables of their own for each difference: a deleted table's name stays taken a while.
		_, runErr := explore.RunOne(ctx, b, fmt.Sprintf("cfexp%03d", (i+1)%1000), res.Config.Tables, d.Ops)
		if err := rec.Flush(); err != nil {
			return err
		}
		if runErr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "explore: recording %s: %v\n", name, runErr)
		}
		d.Files = append(d.Files, name+".json")
	}
	return nil
}

func writeExploreReport(dir string, res explore.Result) error {
	jf, err := os.Create(filepath.Join(dir, "explore.json"))
	if err != nil {
		return err
	}
	if err := res.WriteJSON(jf); err != nil {
		jf.Close()
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	mf, err := os.Create(filepath.Join(dir, "explore.md"))
	if err != nil {
		return err
	}
	if err := res.WriteMarkdown(mf); err != nil {
		mf.Close()
		return err
	}
	return mf.Close()
}
