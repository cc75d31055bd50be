package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tableconform/conform/internal/srcmutate"
)

// defaultDirs are the reference's packages whose behaviour the suite judges: the model (and
// its internal packages) and the OData filter language.
const defaultDirs = "reference,reference/internal/...,reference/odata"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mutation:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func run() error {
	var (
		sample   = flag.Int("sample", 0, "run a random sample of N mutants (0: all)")
		seed     = flag.Uint64("seed", 1, "the sample's seed: the same seed and source give the same sample")
		timeout  = flag.Duration("timeout", 5*time.Minute, "bound on one mutant's suite run; a mutant that exceeds it counts as killed (timed out)")
		out      = flag.String("out", "mutation-report", "directory for mutation.md and mutation.json")
		dirs     = flag.String("dirs", defaultDirs, "comma-separated package directories to mutate (dir/... includes subdirectories)")
		backends = flag.String("backends", "reference", "CONFORM_BACKENDS of the suite runs")
		pkg      = flag.String("pkg", "./suites/all", "the suite's package")
		list     = flag.Bool("list", false, "list the (sampled) mutants and exit without running anything")
		ids      = flag.String("ids", "", "comma-separated mutant numbers to run instead of a sample (to re-check survivors)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", flag.Args())}
	}
	if *sample < 0 {
		return usageError{fmt.Errorf("--sample %d: want 0 (all) or more", *sample)}
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dirList := strings.Split(*dirs, ",")
	all, err := srcmutate.Enumerate(root, dirList)
	if err != nil {
		return err
	}
	picked := srcmutate.Sample(all, *sample, *seed)
	if *ids != "" {
		picked = nil
		for _, f := range strings.Split(*ids, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > len(all) {
				return usageError{fmt.Errorf("--ids: %q is not a mutant number from 1 to %d", f, len(all))}
			}
			picked = append(picked, all[n-1])
		}
	}
	if *list {
		for _, m := range picked {
			fmt.Println(m)
		}
		fmt.Printf("%d of %d mutants\n", len(picked), len(all))
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runner, err := srcmutate.NewRunner(srcmutate.Config{Root: root, Package: *pkg, Run: "^TestConformance$",
		Env: []string{"CONFORM_BACKENDS=" + *backends, "CONFORM_IGNORE_BASELINES=1"}, Timeout: *timeout, Log: os.Stderr})
	if err != nil {
		return err
	}
	defer runner.Close()
	start := time.Now()
	fmt.Fprintf(os.Stderr, "mutation: %d of %d mutants, seed %d, one at a time\n", len(picked), len(all), *seed)
	base, err := runner.Baseline(ctx)
	if err != nil {
		return err
	}
	sum := srcmutate.Summary{Seed: *seed, Sample: *sample, Total: len(all), Dirs: dirList, BaseFailures: base}
	for i, m := range picked {
		if ctx.Err() != nil {
			return errors.New("interrupted; nothing written")
		}
		r := runner.Run(ctx, m)
		sum.Results = append(sum.Results, r)
		switch r.Status {
		case srcmutate.Survived:
			sum.Survived++
		case srcmutate.NotViable:
			sum.NotViable++
		default:
			sum.Killed++
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s: %s (%d specs, %.0f s)\n", i+1, len(picked), m, r.Status, len(r.KilledBy), r.Seconds)
	}
	sum.Seconds = time.Since(start).Seconds()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(sum, "", "  ")
	if err := os.WriteFile(filepath.Join(*out, "mutation.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(*out, "mutation.md"))
	if err != nil {
		return err
	}
	if err := srcmutate.WriteMarkdown(f, sum); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("mutation score: %d killed of %d viable mutants (%.0f%%), %d not viable; written to %s\n",
		sum.Killed, sum.Killed+sum.Survived, 100*sum.Score(), sum.NotViable, *out)
	return nil
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory: run from the module")
		}
		dir = parent
	}
}
