package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

func TestAnswerWatchCountsSpecsInARowWithoutAnswer(t *testing.T) {
	var w answerWatch
	for range stoppedAnsweringAfter - 1 {
		if w.spec(verdict.Error) {
			t.Fatal("probed before stoppedAnsweringAfter specs in a row got no answer")
		}
	}
	w.spec(verdict.Pass) // an answer starts the count again
	w.spec(verdict.Skipped)
	for i := range stoppedAnsweringAfter {
		if probe := w.spec(verdict.Error); probe != (i == stoppedAnsweringAfter-1) {
			t.Fatalf("after %d unanswered specs in a row: probe %v", i+1, probe)
		}
	}
	if !w.stoppedAt().IsZero() {
		t.Fatal("stopped before a probe said so")
	}
	at := time.Now()
	w.stop(at)
	for range 2 * stoppedAnsweringAfter {
		if w.spec(verdict.Error) {
			t.Fatal("probed again after the backend was found stopped")
		}
	}
	if !w.stoppedAt().Equal(at) {
		t.Fatalf("stoppedAt %v, want %v", w.stoppedAt(), at)
	}
}

// killable serves the reference until it has served killAfter requests, then closes its
// listener and every connection, as a killed server does: every later connection is
// refused.
type killable struct {
	ts        *httptest.Server
	served    atomic.Int64
	killAfter int64
	killOnce  sync.Once
	killedAt  atomic.Int64
}

func startKillable(t *testing.T, killAfter int64) *killable {
	k := &killable{killAfter: killAfter}
	inner := tableserver.New(reference.New(reference.WithDeleteHold(0)))
	k.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k.served.Add(1) > k.killAfter {
			k.killOnce.Do(func() {
				k.killedAt.Store(time.Now().UnixNano())
				go func() { _ = k.ts.Listener.Close(); k.ts.CloseClientConnections() }()
			})
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					_ = c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(k.ts.Close)
	return k
}

// TestABackendKilledMidRunStopsItsRun kills the backend after a share of its specs ran
// (issue 31, item 5): the run stops after a few specs without an answer, says when the
// backend stopped answering, exits 3, and its report keeps the specs that passed before
// the kill, with an inconclusive verdict, never "not run"; it names at most a few
// transport errors, one line each.
func TestABackendKilledMidRunStopsItsRun(t *testing.T) {
	k := startKillable(t, 400)
	out := t.TempDir()
	cmd := exec.Command(conformBin, "run", "--backend", "killed="+devConn(k.ts.URL), "--out", out, "--no-corpus",
		"--label-filter", "area:query || service.cors.actual-headers")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CONFORM_RETRY_DELAY=5ms")
	start := time.Now()
	output, err := runBounded(cmd, 3*time.Minute)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("conform run against a backend killed mid-run: %v\n%s", err, lastLines(output, 30))
	}
	if at := k.killedAt.Load(); at != 0 {
		t.Logf("exit %d after %v, %v after the kill", ee.ExitCode(), time.Since(start).Round(time.Millisecond), time.Since(time.Unix(0, at)).Round(time.Millisecond))
	} else {
		t.Fatalf("the backend was never killed (%d requests): the test tested nothing", k.served.Load())
	}
	t.Logf("the run's last lines:\n%s", lastLines(output, 16))
	if ee.ExitCode() != exitInconclusive {
		t.Errorf("exit %d, want %d (inconclusive)\n%s", ee.ExitCode(), exitInconclusive, lastLines(output, 30))
	}
	if !strings.Contains(output, "killed stopped answering at ") {
		t.Errorf("the run does not say the backend stopped answering:\n%s", lastLines(output, 30))
	}
	if n := strings.Count(output, "] ERROR "); n > stoppedAnsweringAfter*2 {
		t.Errorf("%d ERROR blocks: the run went on after the backend stopped answering", n)
	}
	for _, l := range strings.Split(output, "\n") {
		if len(l) > 600 {
			t.Errorf("a line of %d characters: %.200s...", len(l), l)
		}
	}
	r, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	b := r.Backends[0]
	if b.StartError != "" || b.VerdictKind == verdict.KindNotRun {
		t.Fatalf("the backend is %q (%s): it started, and what ran must be judged", b.Verdict, b.StartError)
	}
	if b.Counts.Passed == 0 || b.StoppedAnswering == "" || b.VerdictKind != verdict.Inconclusive || !strings.Contains(b.Verdict, "stopped answering at "+b.StoppedAnswering) {
		t.Errorf("report: %d passed, stopped answering %q, verdict %s %q; want the passes before the kill kept and an inconclusive verdict saying when it stopped",
			b.Counts.Passed, b.StoppedAnswering, b.VerdictKind, b.Verdict)
	}
	// One backend, one time it stopped answering, whichever of its processes found it.
	for _, m := range regexp.MustCompile(`stopped answering at [0-9:]+ \(([^)]+)\)`).FindAllStringSubmatch(output, -1) {
		if m[1] != b.StoppedAnswering {
			t.Errorf("the run says %q, the report %s", m[0], b.StoppedAnswering)
		}
	}
	t.Logf("report: %d passed, %d errors; %s", b.Counts.Passed, b.Counts.Errors, b.Verdict)
}

// every500 answers 500 InternalError to every nth request, before the server sees it.
type every500 struct {
	inner  http.Handler
	n      int64
	count  atomic.Int64
	faults atomic.Int64
}

func (e *every500) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e.count.Add(1)%e.n == 0 {
		e.faults.Add(1)
		w.Header().Set("x-ms-error-code", "InternalError")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"odata.error":{"code":"InternalError","message":{"lang":"en-US","value":"The server encountered an internal error."}}}`))
		return
	}
	e.inner.ServeHTTP(w, r)
}

// TestRunBehindAProxyAnswering500NowAndThenIsNeverAFailure puts a proxy that answers 500
// InternalError to one request in 50 in front of the reference (issue 31, item 6): the
// SDKs retry a 500, and so does conform, so the run exits 0 or 3, never 1, and no rule
// fails or is blocked.
func TestRunBehindAProxyAnswering500NowAndThenIsNeverAFailure(t *testing.T) {
	proxy := &every500{inner: tableserver.New(reference.New(reference.WithDeleteHold(0))), n: 50}
	ts := httptest.NewServer(proxy)
	defer ts.Close()
	out := t.TempDir()
	output, code := runConformWithShortRetries(t, 3*time.Minute, "run", "--backend", "flaky500="+devConn(ts.URL), "--out", out, "--no-corpus",
		"--label-filter", "area:query || area:batch")
	t.Logf("%d of %d requests answered 500; exit %d", proxy.faults.Load(), proxy.count.Load(), code)
	if proxy.faults.Load() == 0 {
		t.Fatal("no 500 was answered: the test tested nothing")
	}
	if code != exitOK && code != exitInconclusive {
		t.Errorf("exit %d, want %d or %d: a 500 now and then is retried, never a rule's failure\n%s", code, exitOK, exitInconclusive, lastLines(output, 40))
	}
	r, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rules {
		for _, s := range row.Cells[0].Specs {
			if s.Outcome == verdict.Fail || s.Outcome == verdict.Blocked {
				t.Errorf("%s %s: %s: %.300s", s.Outcome, row.ID, s.Text, s.Failure)
			}
		}
	}
}

// Progress says once that a backend stopped answering, whichever of its processes finds it,
// and prints no more ERROR blocks for it after that: the errors of a backend gone are that.
func TestProgressSaysOnceThatABackendStoppedAnswering(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf)
	p.start("x", 2)
	p.event("x", event{Kind: "total", Total: 50})
	p.event("x", event{Kind: "total", Total: 50})
	p.event("x", event{Kind: "spec", Outcome: string(verdict.Error), Rule: "a.rule", Text: "a spec", Failure: "EOF"})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for range 2 {
		p.event("x", event{Kind: "stopped", Text: at.Format(time.RFC3339Nano), Failure: "connection refused"})
		p.event("x", event{Kind: "tables-left", Text: "cfabc", Rule: "x=env:X"})
	}
	for range 10 {
		p.event("x", event{Kind: "spec", Outcome: string(verdict.Error), Rule: "a.rule", Text: "a spec", Failure: "EOF"})
	}
	p.done("x", exitInconclusive, false)
	out := buf.String()
	for what, n := range map[string]int{"x stopped answering at ": 1, "(stopped answering)": 1, "2026-01-02T03:04:05Z": 1, "] ERROR ": 1,
		"`conform clean --backend x=env:X --prefix cfabc`": 1} {
		if got := strings.Count(out, what); got != n {
			t.Errorf("%q %d times, want %d:\n%s", what, got, n, out)
		}
	}
}

// The parts of a backend's run merge into what ran when one found the backend no longer
// answering and another could not even start: the backend did start, and it is not "not
// run" (issue 31: 1,000 passes dropped).
func TestPartsOfABackendThatStoppedAnsweringMergeIntoWhatRan(t *testing.T) {
	stopped := report.Run{Backend: driver.Info{Name: "x"}, StoppedAnswering: time.Now()}
	failedStart := report.Run{Backend: driver.Info{Name: "x"}, StartError: "connection refused"}
	merged, _ := mergeParts([]report.Run{stopped, failedStart}, []int{exitInconclusive, exitUsage}, false)
	if merged.StartError != "" || merged.StoppedAnswering.IsZero() {
		t.Fatalf("merged: start error %q, stopped answering %v", merged.StartError, merged.StoppedAnswering)
	}
	if merged, _ := mergeParts([]report.Run{{}, failedStart}, []int{exitOK, exitUsage}, false); merged.StartError == "" {
		t.Error("a part that could not start, with none stopped for no answer, is still the backend's start error")
	}
}

// The summary lists a few specs without an answer, a line each, then how many more.
func TestSummaryNamesAFewSpecsWithoutAnswer(t *testing.T) {
	b := report.Backend{Info: driver.Info{Name: "x"}, Verdict: "inconclusive", Counts: report.Counts{Errors: 170}}
	for i := range 20 {
		b.Errors = append(b.Errors, fmt.Sprintf("rule%d: %s", i, strings.Repeat("connection refused ", 20)))
	}
	var buf bytes.Buffer
	printSummary(&buf, report.Report{Backends: []report.Backend{b}}, "out")
	out := buf.String()
	if n := strings.Count(out, "no answer: "); n != summaryErrorsShown {
		t.Errorf("%d specs without an answer listed, want %d:\n%s", n, summaryErrorsShown, out)
	}
	if !strings.Contains(out, fmt.Sprintf("... and %d more specs without an answer", 170-summaryErrorsShown)) {
		t.Errorf("the summary does not say how many more:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 300 {
			t.Errorf("a line of %d characters", len(l))
		}
	}
}

// comingBack gets no answer to its first Query Tables, then answers: a backend back after
// a restart.
type comingBack struct {
	api.Backend
	probes atomic.Int32
}

func (c *comingBack) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	if c.probes.Add(1) == 1 {
		return api.TablePage{}, &driver.TransportError{Op: "query tables", Err: errors.New("connection refused")}
	}
	return c.Backend.QueryTables(ctx, q)
}

// A run stopped for a backend that stopped answering deletes its tables once the backend
// answers again, and only its own.
func TestTablesAreDeletedWhenTheBackendAnswersAgain(t *testing.T) {
	t.Setenv("CONFORM_TABLE_SLOT", "7")
	ctx := context.Background()
	ref := reference.New(reference.WithDeleteHold(0))
	mine, other := framework.RunTableName(7, 1), framework.RunTableName(8, 1)
	for _, n := range []string{mine, other} {
		if err := ref.CreateTable(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	b := &comingBack{Backend: ref}
	cleanAfterStop(b, "x")
	page, err := ref.QueryTables(ctx, api.TableQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if b.probes.Load() < 2 || len(page.Tables) != 1 || page.Tables[0] != other {
		t.Fatalf("after %d probes the tables are %v, want only %s (another process's)", b.probes.Load(), page.Tables, other)
	}
}
