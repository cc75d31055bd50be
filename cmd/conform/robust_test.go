package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tableconform/conform/reference"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/tableserver"
	"github.com/tableconform/conform/suites/driver/rest"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/scenario"
	"github.com/tableconform/conform/suites/verdict"
)

// serveProcess is a running `conform serve`.
type serveProcess struct {
	cmd  *exec.Cmd
	conn string // its development-account connection string
	base string // http://host:port
	out  *lockedBuffer
	done chan struct{}
}

// storedByKey reads every entity of table, page after page, by its key.
func storedByKey(ctx context.Context, b api.Backend, table string) (map[api.Key]api.Entity, error) {
	all, err := scenario.AllEntities(ctx, b, table, api.Query{})
	stored := make(map[api.Key]api.Entity, len(all))
	for _, e := range all {
		stored[e.Key()] = e
	}
	return stored, err
}

// lockedBuffer collects a process's output for later inspection.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServeProcess starts `conform serve` on a free loopback port and waits (at most 60 s)
// for its connection string. The process is killed when the test ends if it still runs.
func startServeProcess(t *testing.T, extra ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(conformBin, append([]string{"serve", "--addr", "127.0.0.1:0"}, extra...)...)
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			_, _ = p.out.Write([]byte(sc.Text() + "\n"))
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	deadline := time.After(60 * time.Second)
	for p.conn == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("conform serve ended before printing its connection string:\n%s", p.out)
			}
			if strings.HasPrefix(l, "DefaultEndpointsProtocol=") {
				p.conn = l
			}
		case <-deadline:
			t.Fatal("conform serve printed no connection string")
		}
	}
	m := regexp.MustCompile(`TableEndpoint=(http://[^/;]+)`).FindStringSubmatch(p.conn)
	if m == nil {
		t.Fatalf("no endpoint in %q", p.conn)
	}
	p.base = m[1]
	return p
}

// stop sends sig and waits (at most 20 s) for the process to end.
func (p *serveProcess) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("conform serve did not end on %v", sig)
	}
}

// entityState is what the writer knows of one entity: the last value acknowledged (with
// its ETag) and the value of a write that was sent but never acknowledged, if any.
type entityState struct {
	acked      bool
	value      int64
	etag       string
	inflight   bool
	inflightTo int64
}

// persistWriter writes to `conform serve --data` from several goroutines and records
// what was acknowledged: single inserts, conditional updates of them, and transactions
// of five inserts in their own partition.
type persistWriter struct {
	b     *rest.Backend
	mu    sync.Mutex
	ents  map[api.Key]*entityState
	batch map[string]bool // partition -> acknowledged
	acks  int
}

func (w *persistWriter) run(ctx context.Context, id int) {
	for n := 0; ctx.Err() == nil; n++ {
		if n%4 == 3 {
			pk := fmt.Sprintf("batch-%d-%d", id, n)
			ops := make([]api.BatchOp, 5)
			for i := range ops {
				ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: api.NewEntity(pk, fmt.Sprint(i), map[string]api.Value{"v": api.Int64(int64(n))})}
			}
			w.mu.Lock()
			w.batch[pk] = false
			w.mu.Unlock()
			if _, err := w.b.SubmitBatch(ctx, "durable", ops); err != nil {
				return
			}
			w.mu.Lock()
			w.batch[pk] = true
			w.acks++
			w.mu.Unlock()
			continue
		}
		k := api.Key{PartitionKey: fmt.Sprintf("w%d", id), RowKey: fmt.Sprint(n)}
		st := &entityState{inflight: true, inflightTo: int64(n)}
		w.mu.Lock()
		w.ents[k] = st
		w.mu.Unlock()
		e, err := w.b.InsertEntity(ctx, "durable", api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"v": api.Int64(int64(n))}))
		if err != nil {
			return
		}
		w.mu.Lock()
		*st = entityState{acked: true, value: int64(n), etag: e.ETag}
		w.acks++
		st.inflight, st.inflightTo = true, int64(-n)
		w.mu.Unlock()
		etag, err := w.b.UpdateEntity(ctx, "durable", api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"v": api.Int64(int64(-n))}), api.Replace, e.ETag)
		if err != nil {
			return
		}
		w.mu.Lock()
		*st = entityState{acked: true, value: int64(-n), etag: etag}
		w.acks++
		w.mu.Unlock()
	}
}

// TestServeDataKeepsEveryAcknowledgedWriteThroughSIGKILL starts `conform serve --data`,
// writes from four clients, kills the server with SIGKILL in the middle of the load,
// restarts it on the same directory and checks that every acknowledged write is there
// with the ETag it was acknowledged with, and that no transaction is half applied.
func TestServeDataKeepsEveryAcknowledgedWriteThroughSIGKILL(t *testing.T) {
	dir := t.TempDir()
	srv := startServeProcess(t, "--data", dir)
	b, err := rest.New(srv.conn, rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTable(c, "durable"); err != nil {
		t.Fatal(err)
	}
	w := &persistWriter{b: b, ents: map[api.Key]*entityState{}, batch: map[string]bool{}}
	wctx, stopWriters := context.WithCancel(c)
	var wg sync.WaitGroup
	for id := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(wctx, id) }()
	}
	// Kill once the load is well under way, with the writers still writing.
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		w.mu.Lock()
		acks := w.acks
		w.mu.Unlock()
		if acks >= 300 || time.Since(start) > 20*time.Second {
			break
		}
	}
	srv.stop(t, syscall.SIGKILL)
	stopWriters()
	wg.Wait()
	if w.acks < 50 {
		t.Fatalf("only %d writes were acknowledged before the kill", w.acks)
	}

	again := startServeProcess(t, "--data", dir)
	b2, err := rest.New(again.conn, rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := storedByKey(c, b2, "durable")
	if err != nil {
		t.Fatalf("query after restart: %v\n%s", err, again.out)
	}
	lost, checked := 0, 0
	for k, st := range w.ents {
		e, ok := stored[k]
		switch {
		case !ok && st.acked:
			lost++
			t.Errorf("acknowledged write of %v is lost", k)
		case !ok:
		case st.acked && !st.inflight:
			checked++
			if e.ETag != st.etag || !e.Properties["v"].Equal(api.Int64(st.value)) {
				t.Errorf("%v: %s %v after restart, acknowledged %s %d", k, e.ETag, e.Properties["v"], st.etag, st.value)
			}
		default:
			v := e.Properties["v"]
			if !(st.acked && v.Equal(api.Int64(st.value))) && !v.Equal(api.Int64(st.inflightTo)) {
				t.Errorf("%v: value %v is neither the acknowledged %d nor the one in flight %d", k, v, st.value, st.inflightTo)
			}
		}
	}
	halves := 0
	for pk, acked := range w.batch {
		n := 0
		for i := range 5 {
			if _, ok := stored[api.Key{PartitionKey: pk, RowKey: fmt.Sprint(i)}]; ok {
				n++
			}
		}
		if n != 0 && n != 5 {
			halves++
			t.Errorf("transaction %s is half applied: %d of 5 entities", pk, n)
		}
		if acked && n != 5 {
			t.Errorf("acknowledged transaction %s is lost", pk)
		}
	}
	t.Logf("%d acknowledged writes before SIGKILL; %d entities and %d transactions checked after restart", w.acks, checked, len(w.batch))
	// The restarted server goes on working, and a clean stop keeps what it wrote.
	if _, err := b2.InsertEntity(c, "durable", api.NewEntity("after", "restart", nil)); err != nil {
		t.Fatal(err)
	}
	again.stop(t, os.Interrupt)
	third := startServeProcess(t, "--data", dir)
	b3, _ := rest.New(third.conn, rest.WithTimeout(10*time.Second))
	if _, err := b3.GetEntity(c, "durable", "after", "restart", nil); err != nil {
		t.Errorf("after a clean stop: %v", err)
	}
	// A second server on the same directory is refused while the first runs.
	cmd := exec.Command(conformBin, "serve", "--addr", "127.0.0.1:0", "--data", dir)
	out, err := runBounded(cmd, 30*time.Second)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(out, "in use") {
		t.Errorf("a second serve on the same directory: %v\n%s", err, out)
	}
}

// runBounded runs cmd and returns its combined output; it kills cmd after d.
func runBounded(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("%v did not end within %v", cmd.Args, d)
	}
}

// devConn is a development-account connection string for an endpoint base URL.
func devConn(base string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + tableserver.DevAccountName + ";AccountKey=" + tableserver.DevAccountKey +
		";TableEndpoint=" + base + "/" + tableserver.DevAccountName + ";"
}

// rawServer accepts connections on loopback and hands each to handle, until the test ends.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); handle(c) }()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestRunEndsAgainstMisbehavingBackends points `conform run` at endpoints that hang, drop
// connections or answer garbage: each run must end, within its bound, with exit status 2
// (the backend cannot be reached) or with a report whose specs failed, never hang.
func TestRunEndsAgainstMisbehavingBackends(t *testing.T) {
	// Cleanups run last-registered first: stop is closed (and the hanging handlers
	// return) before the servers wait for them.
	stop := make(chan struct{})
	hang := func(c net.Conn) {
		select {
		case <-stop:
		case <-time.After(2 * time.Minute):
		}
	}
	ref := httptest.NewServer(tableserver.New(reference.New()))
	t.Cleanup(ref.Close)
	// probeThenHang answers Query Tables (the probe) and then hangs on every other request.
	probeThenHang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/Tables") && r.Method == http.MethodGet {
			ref.Config.Handler.ServeHTTP(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(probeThenHang.Close)
	backends := []struct {
		name, base string
		limit      time.Duration
		anyFailure bool // a report with failed specs (exit 1), or one that is inconclusive (exit 3), is as good as exit 2
	}{
		{"hangs", rawServer(t, hang), 60 * time.Second, false},
		{"drops", rawServer(t, func(net.Conn) {}), 30 * time.Second, false},
		{"garbage", rawServer(t, func(c net.Conn) { _, _ = c.Write([]byte("\x00\xffNOT HTTP AT ALL\r\n\r\n")) }), 30 * time.Second, false},
		{"bad-body", rawServer(t, func(c net.Conn) {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, _ = bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{\"value\":"))
		}), 30 * time.Second, false},
		{"probe-then-hang", probeThenHang.URL, 3 * time.Minute, true},
	}
	t.Cleanup(func() { close(stop) })
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "probe-then-hang" && testing.Short() {
				t.Skip("every spec waits for its timeout: a minute or more; make test-all runs it")
			}
			out := t.TempDir()
			cmd := exec.Command(conformBin, "run", "--backend", b.name+"="+devConn(b.base), "--out", out,
				"--spec-timeout", "3s", "--label-filter", "modify.delete.missing || modify.etag.changes")
			cmd.Dir = t.TempDir()
			start := time.Now()
			output, err := runBounded(cmd, b.limit)
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("conform run against a backend that %s: %v (after %v)\n%s", b.name, err, time.Since(start), output)
			}
			code := ee.ExitCode()
			t.Logf("%s: exit %d after %v", b.name, code, time.Since(start).Round(time.Millisecond))
			switch {
			case code == exitUsage:
				if !strings.Contains(output, b.name) {
					t.Errorf("the error does not name the backend:\n%s", output)
				}
			case b.anyFailure && (code == exitFailed || code == exitInconclusive):
				r, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Backends) != 1 || r.Backends[0].Counts.Failed+r.Backends[0].Counts.Errors == 0 {
					t.Errorf("exit %d but the report shows no failed spec: %+v", code, r.Backends)
				}
				// Timeouts alone are no answer: inconclusive, never a rule failure.
				if code == exitInconclusive && (r.Backends[0].VerdictKind != verdict.Inconclusive || r.Backends[0].Counts.Failed != 0) {
					t.Errorf("exit 3 but the verdict is %q", r.Backends[0].Verdict)
				}
			default:
				t.Errorf("exit %d, want %d (or %d with failed specs)\n%s", code, exitUsage, exitFailed, output)
			}
		})
	}
}

// tablesWithRunPrefix lists the tables of b whose names start with prefix.
func tablesWithRunPrefix(t *testing.T, b api.Backend, prefix string) []string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := tablesWithPrefix(c, b, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// backendProcessesOf lists the pids of running `conform run-backend` processes of the run
// with this id (from /proc; empty where there is none).
func backendProcessesOf(runID string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(cmdline, []byte("run-backend")) && bytes.Contains(environ, []byte("CONFORM_RUN_ID="+runID+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestInterruptedRunDeletesItsTables interrupts `conform run` while specs hold tables on
// a `conform serve`, with SIGINT sent to it alone and to its whole process group (a
// Ctrl-C at a terminal): the interrupt reaches the backend process exactly once, its
// cleanup deletes every table of the run, the run ends with 130 and writes its report,
// and no backend process is left behind.
func TestInterruptedRunDeletesItsTables(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc to find the backend processes")
	}
	for i, group := range []bool{false, true} {
		name := "to conform run alone"
		if group {
			name = "to the process group"
		}
		t.Run(name, func(t *testing.T) { interruptRun(t, fmt.Sprintf("sigint%02d", i+1), group) })
	}
}

func interruptRun(t *testing.T, runID string, group bool) {
	srv := startServeProcess(t)
	b, err := rest.New(srv.conn, rest.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	prefix := framework.TablePrefix + runID
	out := t.TempDir()
	cmd := exec.Command(conformBin, "run", "--backend", "served="+srv.conn, "--out", out)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CONFORM_RUN_ID="+runID)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var output lockedBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		for _, pid := range backendProcessesOf(runID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	// Wait until the run holds tables (patterns specs keep theirs for a while).
	seen := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && !seen; time.Sleep(10 * time.Millisecond) {
		seen = len(tablesWithRunPrefix(t, b, prefix)) > 0
	}
	if !seen {
		t.Fatalf("the run never created a table with prefix %s\n%s", prefix, output.String())
	}
	target := cmd.Process.Pid
	if group {
		target = -target
	}
	if err := syscall.Kill(target, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("conform run did not end within 90 s of SIGINT\n%s", output.String())
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit %v, want %d\n%s", waitErr, exitInterrupted, output.String())
	}
	if left := tablesWithRunPrefix(t, b, prefix); len(left) != 0 {
		t.Errorf("tables of the interrupted run are left: %v", left)
	}
	if pids := backendProcessesOf(runID); len(pids) != 0 {
		t.Errorf("backend processes still run after the interrupt: %v", pids)
	}
	if _, err := os.Stat(filepath.Join(out, report.FileJSON)); err != nil {
		t.Errorf("no report after the interrupt: %v", err)
	}
	// Every format says the run was interrupted.
	for _, f := range []string{report.FileJSON, report.FileMarkdown, report.FileHTML, report.FileJUnit} {
		if data, err := os.ReadFile(filepath.Join(out, f)); err != nil || !bytes.Contains(data, []byte("interrupted")) {
			t.Errorf("%s does not say the run was interrupted (%v)", f, err)
		}
	}
}

// statusRecorder keeps the status of an answer.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// secretWatcher serves the reference for an account with a distinctive key and remembers
// every credential that worked: the sig of each SAS and the signature of each Shared Key
// request that was answered 2xx. When breakSAS is set it tampers with every SAS
// signature before the server checks it, so that the SAS specs fail and their failures
// (messages, call histories) reach the report.
type secretWatcher struct {
	inner    http.Handler
	breakSAS bool
	mu       sync.Mutex
	secrets  map[string]bool
}

func (s *secretWatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sig := q.Get("sig")
	if sig != "" && s.breakSAS {
		q.Set("sig", "AAAA"+sig[4:])
		r.URL.RawQuery = q.Encode()
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.inner.ServeHTTP(rec, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sig != "" {
		s.secrets[sig] = true
	}
	if auth := r.Header.Get("Authorization"); rec.status < 300 && auth != "" {
		if _, v, ok := strings.Cut(auth, ":"); ok && len(v) > 8 {
			s.secrets[v] = true
		}
	}
}

// findSecrets returns, for each secret found, where: in output or in a file under dir.
func findSecrets(dir, output string, secrets []string) []string {
	var found []string
	look := func(where string, data []byte) {
		for _, s := range secrets {
			for _, form := range []string{s, url.QueryEscape(s)} {
				if bytes.Contains(data, []byte(form)) {
					found = append(found, fmt.Sprintf("%.12s... in %s", s, where))
				}
			}
		}
	}
	look("the output", []byte(output))
	if dir != "" {
		_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				data, _ := os.ReadFile(p)
				look(p, data)
			}
			return nil
		})
	}
	return found
}

// sigValues lists the values of every sig= parameter in data that are not redacted.
func sigValues(data string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?i)sig(?:=|%3D)([^&\s"'<>;,)]+)`).FindAllStringSubmatch(data, -1) {
		if v := m[1]; !strings.EqualFold(v, "REDACTED") && !strings.EqualFold(v, "x") && v != "%3CREDACTED%3E" {
			out = append(out, v)
		}
	}
	return out
}

// TestRunTouchesOnlyItsOwnTablesAndLeaksNoSecret runs the whole suite against an endpoint
// that already holds a table outside conform's prefix and one with conform's prefix but
// of another run, each with data: both must be unchanged afterwards (same entities, same
// ETags) and the run's own tables gone. The endpoint's account has a distinctive key and
// its SAS signatures are broken on the way in, so that failures reach the report: neither
// the key nor any signature that worked may appear in conform's output or in any file it
// wrote. conform clean and conform serve's errors are held to the same.
func TestRunTouchesOnlyItsOwnTablesAndLeaksNoSecret(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole suite against a server in this (race-instrumented) process: minutes; make test-all runs it")
	}
	key := []byte("distinctive-secret-key-0123456789-abcdefghij")
	key64 := base64.StdEncoding.EncodeToString(key)
	const account = "secretacct"
	ref := reference.New(reference.WithDeleteHold(0))
	c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, table := range []string{"keepme", "cfneighbour"} {
		if err := ref.CreateTable(c, table); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			if _, err := ref.InsertEntity(c, table, api.NewEntity(fmt.Sprint(i%3), fmt.Sprint(i), map[string]api.Value{"v": api.Int32(int32(i))})); err != nil {
				t.Fatal(err)
			}
		}
	}
	snapshot := func() string {
		var b strings.Builder
		for _, table := range []string{"keepme", "cfneighbour"} {
			p, err := ref.QueryEntities(c, table, api.Query{})
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for _, e := range p.Entities {
				fmt.Fprintf(&b, "%s %s %s\n", table, e.ETag, e)
			}
		}
		return b.String()
	}
	before := snapshot()
	watcher := &secretWatcher{inner: tableserver.New(ref, tableserver.WithAccount(account, key, ref)), breakSAS: true, secrets: map[string]bool{}}
	ts := httptest.NewServer(watcher)
	defer ts.Close()
	conn := "DefaultEndpointsProtocol=http;AccountName=" + account + ";AccountKey=" + key64 + ";TableEndpoint=" + ts.URL + "/" + account + ";"

	const runID = "owntabl1"
	out := t.TempDir()
	cmd := exec.Command(conformBin, "run", "--backend", "secret="+conn, "--out", out)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CONFORM_RUN_ID="+runID)
	// Eight processes (the default for an endpoint) against a server in this process, which
	// runs under the race detector in make test-all: minutes on two cores.
	output, err := runBounded(cmd, 8*time.Minute)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("conform run: %v, want exit %d (the broken SAS specs fail)\n%.3000s", err, exitFailed, output)
	}
	r, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	counts := r.Backends[0].Counts
	t.Logf("run: %+v", counts)
	if counts.Passed < 500 || counts.Failed == 0 {
		t.Errorf("expected most of the suite to pass and the SAS specs to fail: %+v", counts)
	}

	if after := snapshot(); after != before {
		t.Errorf("tables outside the run's prefix changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	page, err := ref.QueryTables(c, api.TableQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range page.Tables {
		if name != "keepme" && name != "cfneighbour" {
			t.Errorf("table %s is left after the run", name)
		}
	}

	// The secrets of the run, then of clean and of serve's refusals.
	watcher.mu.Lock()
	secrets := []string{key64, string(key)}
	for s := range watcher.secrets {
		secrets = append(secrets, s)
	}
	watcher.mu.Unlock()
	if len(secrets) < 10 {
		t.Fatalf("only %d credentials were seen: the run did not authenticate", len(secrets))
	}
	for _, f := range findSecrets(out, output, secrets) {
		t.Errorf("secret leaked: %s", f)
	}
	all := output
	_ = filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(p)
			all += string(data)
		}
		return nil
	})
	if sigs := sigValues(all); len(sigs) > 0 {
		t.Errorf("sig= values in the output or the report: %.5q", sigs)
	}

	others := [][]string{
		{"clean", "--backend", "secret=" + conn, "--prefix", "cfzz"},
		{"clean", "--backend", "down=DefaultEndpointsProtocol=http;AccountName=" + account + ";AccountKey=" + key64 + ";TableEndpoint=http://127.0.0.1:9/" + account},
		{"clean", "--backend", "garbled=AccountName=" + account + ";AccountKey=" + key64 + "!!;TableEndpoint=::nonsense"},
		{"serve", "--account", account + ":" + key64, "--addr", "127.0.0.1:99999"},
		{"serve", "--account", account + ":" + key64 + "!!notbase64"},
		{"serve", "--account", account + ":" + key64, "--addr", "127.0.0.1:0", "--data", "/proc/self/not-a-dir"},
	}
	for _, args := range others {
		cmd := exec.Command(conformBin, args...)
		cmd.Dir = t.TempDir()
		output, err := runBounded(cmd, time.Minute)
		if err != nil && !errors.As(err, &ee) {
			t.Errorf("conform %s %s: %v", args[0], args[1], err)
		}
		for _, f := range findSecrets("", output, secrets) {
			t.Errorf("conform %s %s: secret leaked: %s\n%s", args[0], args[1], f, output)
		}
		if sigs := sigValues(output); len(sigs) > 0 {
			t.Errorf("conform %s %s: sig= values: %q", args[0], args[1], sigs)
		}
	}
}
