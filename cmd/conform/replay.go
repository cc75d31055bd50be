package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/all"
	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/replay"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

func init() { extraCommands = append(extraCommands, replayCmd) }

type replayOptions struct {
	backend string
	profile string
	strict  bool
	out     string
	convert string
}

// replayExitStatus is the exit statuses of `conform replay`: conform run's table
// (verdict.ExitStatuses), read for a replay.
var replayExitStatus = "Exit status (as conform run's):\n" + verdict.ExitStatusText("  ") + `

For a replay, an unexpected outcome (1) is an exchange whose answer disagrees with the
recorded one, and it is inconclusive (3) when it stopped before its last recording or
compared no exchange at all.`

func replayCmd() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay --backend X PATH...",
		Short: "Replay recorded Table API traffic against a backend and compare the answers",
		Long: `Replay recordings (the Azure SDK test proxy's JSON, vcrpy or go-vcr cassettes; files or
directories) against one backend and write replay.json and replay.md into --out. Each
recording gets fresh tables; requests are signed for the backend; ETags and continuation
tokens are mapped to the backend's own.

With --convert DIR the recordings are not replayed but written to DIR in the test proxy's
format, with credentials sanitised and the headers replay does not use left out.

` + replayExitStatus,
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "", "backend to replay against: reference, reference-http, reference-cosmos, azurite, mutant:NAME, NAME=env:VARIABLE or NAME=CONNECTION_STRING")
	f.StringVar(&o.profile, "profile", "", "storage (default: Azure Storage recordings) or cosmos (Cosmos DB for Table recordings)")
	f.BoolVar(&o.strict, "strict", false, "compare strictly: entity order under every profile (tables stay a set) and the first line of every error message")
	f.StringVar(&o.out, "out", "conform-replay", "directory to write the replay report into")
	f.StringVar(&o.convert, "convert", "", "write the recordings in the test proxy's format into this directory instead of replaying them")
	return cmd
}

func runReplay(cmd *cobra.Command, o replayOptions, args []string) error {
	if len(args) == 0 {
		return usageErr("replay needs at least one recording file or directory")
	}
	sources, err := replay.Collect(args)
	if err != nil {
		return usageErr("%v", err)
	}
	if o.convert != "" {
		return convertRecordings(cmd, sources, o.convert)
	}
	switch o.profile {
	case "", replay.ProfileStorage, replay.ProfileCosmos:
	default:
		return usageErr("--profile must be storage or cosmos, not %q", o.profile)
	}
	if o.backend == "" {
		return usageErr("replay needs --backend")
	}
	ctx, cancel := context.WithTimeout(context.Background(), framework.OpenTimeout)
	target, closeTarget, err := openReplayTarget(ctx, o.backend)
	cancel()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	defer closeTarget()
	r := &replay.Replayer{Target: target, Profile: o.profile, TablePrefix: framework.RunPrefix(), Strict: o.strict}
	rep := r.Run(context.Background(), sources, cmd.ErrOrStderr())
	if err := writeReplayReport(o.out, rep); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), rep.Totals.Sentence())
	for _, d := range rep.Disagreements() {
		fmt.Fprintln(cmd.OutOrStdout(), "  disagree: "+d)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Report: %s\n", filepath.Join(o.out, "replay.md"))
	switch code := verdict.ReplayExit(verdict.Replay{Agree: rep.Totals.Agree, Disagree: rep.Totals.Disagree, Stopped: rep.Totals.Stopped}); code {
	case exitOK:
		return nil
	case exitInconclusive:
		msg := "inconclusive: no exchange was compared"
		if rep.Totals.Stopped != "" {
			msg = "inconclusive: the replay " + rep.Totals.Stopped
		}
		return &exitError{code: code, msg: msg}
	default:
		return &exitError{code: code}
	}
}

func writeReplayReport(dir string, rep replay.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErr("create %s: %v", dir, err)
	}
	jf, err := os.Create(filepath.Join(dir, "replay.json"))
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(jf); err != nil {
		jf.Close()
		return err
	}
	if err := jf.Close(); err != nil {
		return err
	}
	mf, err := os.Create(filepath.Join(dir, "replay.md"))
	if err != nil {
		return err
	}
	if err := rep.WriteMarkdown(mf); err != nil {
		mf.Close()
		return err
	}
	return mf.Close()
}

// convertRecordings writes each readable source into dir in the test proxy's format.
func convertRecordings(cmd *cobra.Command, sources []replay.Source, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageErr("create %s: %v", dir, err)
	}
	for _, s := range sources {
		rec, err := replay.Parse(s.Name, s.Data)
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: skipped, %s\n", s.Name, err)
			continue
		}
		data, err := replay.WriteTestProxy(replay.Trim(rec))
		if err != nil {
			return err
		}
		out := filepath.Join(dir, rec.Name+".json")
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s -> %s (%s, %d exchanges)\n", s.Name, out, rec.Format, len(rec.Entries))
	}
	return nil
}

// httpAccount is a backend reached over HTTP with an account key.
type httpAccount interface {
	ConnectionString() wire.ConnectionString
}

// openReplayTarget opens a backend for replay: it must be reached over HTTP with an account
// key. The in-process reference and mutants are served over loopback HTTP for the purpose.
func openReplayTarget(ctx context.Context, name string) (replay.Target, func(), error) {
	if name == provision.Reference {
		name = provision.ReferenceHTTP
	}
	if _, _, isMutant, err := mutant.ParseTarget(name); isMutant {
		if err != nil {
			return replay.Target{}, nil, err
		}
		t, err := all.Open(ctx, name)
		if err != nil {
			return replay.Target{}, nil, err
		}
		tgt, stop, err := serveOverHTTP(ctx, t.Backend)
		if err != nil {
			_ = t.Close()
			return replay.Target{}, nil, err
		}
		tgt.Name = t.Info.Name
		return tgt, func() { stop(); _ = t.Close() }, nil
	}
	t, err := provision.Open(ctx, name, provision.WithProgress(func(line string) { fmt.Fprintln(os.Stderr, "conform: "+line) }))
	if err != nil {
		return replay.Target{}, nil, err
	}
	acct, ok := t.Backend.(httpAccount)
	if !ok || acct.ConnectionString().AccountKey == nil {
		_ = t.Close()
		return replay.Target{}, nil, fmt.Errorf("backend %s is not reached over HTTP with an account key, so recorded traffic cannot be replayed against it", name)
	}
	cs := acct.ConnectionString()
	return replay.Target{Name: t.Info.Name, Endpoint: cs.TableEndpoint, Account: cs.AccountName, Key: cs.AccountKey},
		func() { _ = t.Close() }, nil
}

// serveOverHTTP serves b with the reference's HTTP server on a free loopback port, as the
// development account.
func serveOverHTTP(ctx context.Context, b api.Backend) (replay.Target, func(), error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return replay.Target{}, nil, err
	}
	srv := tableserver.New(b).HTTPServer(l.Addr().String())
	go func() { _ = srv.Serve(tableserver.Listener(l)) }()
	cs, err := wire.ParseConnectionString("DefaultEndpointsProtocol=http;AccountName=" + tableserver.DevAccountName +
		";AccountKey=" + tableserver.DevAccountKey + ";TableEndpoint=http://" + l.Addr().String() + "/" + tableserver.DevAccountName + ";")
	if err != nil {
		_ = srv.Close()
		return replay.Target{}, nil, err
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return replay.Target{Endpoint: cs.TableEndpoint, Account: cs.AccountName, Key: cs.AccountKey, Client: &http.Client{Timeout: 30 * time.Second}}, stop, nil
}

// corpusPath is where a backend process writes its agreement with the corpus, beside its
// raw result.
func corpusPath(rawPath string) string { return strings.TrimSuffix(rawPath, ".json") + ".corpus.json" }

// replayCorpus replays the embedded corpus of recorded real traffic against an opened
// backend: over its own HTTP endpoint, or, for the in-process reference and mutants, through
// the reference's HTTP server on loopback.
func replayCorpus(t *framework.Target, profile string) report.CorpusAgreement {
	if profile == "" {
		profile = replay.ProfileStorage
	}
	a := report.CorpusAgreement{Backend: t.Info.Name, Profile: profile}
	if t.Info.Driver == provision.DriverSDK {
		a.Error = "driven through the SDK; recordings are replayed over HTTP only"
		return a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var target replay.Target
	if acct, ok := t.Backend.(httpAccount); ok && acct.ConnectionString().AccountKey != nil {
		cs := acct.ConnectionString()
		target = replay.Target{Name: t.Info.Name, Endpoint: cs.TableEndpoint, Account: cs.AccountName, Key: cs.AccountKey}
	} else {
		served, stop, err := serveOverHTTP(ctx, t.Backend)
		if err != nil {
			a.Error = err.Error()
			return a
		}
		defer stop()
		target, target.Name = served, t.Info.Name
	}
	sources, err := replay.CollectFS(fixtures.Recordings(), "fixtures/recordings")
	if err != nil {
		a.Error = err.Error()
		return a
	}
	r := &replay.Replayer{Target: target, Profile: profile, TablePrefix: framework.RunPrefix()}
	rep := r.Run(ctx, sources, nil)
	a.Recordings = rep.Totals.Files - rep.Totals.FilesSkipped
	a.Agree, a.Disagree, a.Skipped = rep.Totals.Agree, rep.Totals.Disagree, rep.Totals.Skipped
	a.Disagreements = rep.Disagreements()
	return a
}

// recordable says why a backend's traffic cannot be recorded: the in-process reference (and
// a mutant over it) is not reached over HTTP.
func recordable(backend string) error {
	name := framework.BackendName(backend)
	base := name
	if _, b, ok, err := mutant.ParseTarget(backend); ok {
		if err != nil {
			return err
		}
		base = b
	}
	if base == provision.Reference {
		return fmt.Errorf("backend %s runs in process and %v; record %s instead", name, replay.ErrNotHTTP, provision.ReferenceHTTP)
	}
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("backend %q has no name", backend)
	}
	return nil
}
