package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SummaryPrefix starts a line a test logs for the closing summary.
const SummaryPrefix = "conform summary: "

// quietLimit is the longest time without a line of progress, short of the 30 s promised.
const quietLimit = 25 * time.Second

// testEvent is the part of cmd/test2json's event that testprogress reads.
type testEvent struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Output  string
}

// watcher follows the events of one go test run.
type watcher struct {
	mu       sync.Mutex
	started  time.Time
	lastLine time.Time
	running  map[string]time.Time // package -> when its first event came
	passed   int
	output   map[string][]string // package+test -> its output lines so far
	skips    []string
	summary  []string
	seen     map[string]bool
}

func newWatcher(now time.Time) *watcher {
	return &watcher{started: now, lastLine: now, running: map[string]time.Time{}, output: map[string][]string{}, seen: map[string]bool{}}
}

// observe takes one event; it returns whether gotestsum prints a line for it (a package
// that ended), which counts as progress.
func (w *watcher) observe(e testEvent, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.Package == "" {
		return
	}
	if _, ok := w.running[e.Package]; !ok && e.Test == "" && (e.Action == "start" || e.Action == "run") {
		w.running[e.Package] = now
	}
	if e.Test != "" {
		if _, ok := w.running[e.Package]; !ok {
			w.running[e.Package] = now
		}
	}
	key := e.Package + " " + e.Test
	switch e.Action {
	case "output":
		if i := strings.Index(e.Output, SummaryPrefix); i >= 0 {
			line := strings.TrimSpace(e.Output[i+len(SummaryPrefix):])
			if !w.seen[line] {
				w.seen[line] = true
				w.summary = append(w.summary, line)
			}
		}
		if e.Test != "" {
			w.output[key] = append(w.output[key], e.Output)
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			delete(w.running, e.Package)
			w.lastLine = now // gotestsum prints the package's line
			return
		}
		if e.Action == "pass" {
			w.passed++
		}
		if e.Action == "skip" {
			w.skips = append(w.skips, fmt.Sprintf("%s %s: %s", shortPackage(e.Package), e.Test, skipReason(w.output[key])))
		}
		delete(w.output, key)
	}
}

// heartbeat returns a line of progress when the last one is quietLimit old, else "".
func (w *watcher) heartbeat(now time.Time) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Sub(w.lastLine) < quietLimit {
		return ""
	}
	w.lastLine = now
	pkgs := make([]string, 0, len(w.running))
	for p := range w.running {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return w.running[pkgs[i]].Before(w.running[pkgs[j]]) })
	var parts []string
	for _, p := range pkgs {
		parts = append(parts, fmt.Sprintf("%s (%s)", shortPackage(p), since(now, w.running[p])))
	}
	what := "building"
	if len(parts) > 0 {
		what = "running " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("... %s: %s; %d tests passed so far", since(now, w.started), what, w.passed)
}

// closing returns the lines printed after the run: the skips, then the summaries.
func (w *watcher) closing() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	if len(w.skips) > 0 {
		out = append(out, fmt.Sprintf("Skipped (%d):", len(w.skips)))
		for _, s := range w.skips {
			out = append(out, "  "+s)
		}
	}
	if len(w.summary) > 0 {
		out = append(out, "Conformance runs:")
		for _, s := range w.summary {
			out = append(out, "  "+s)
		}
	}
	return out
}

// skipReason is the message a skipped test gave: its last line that is not go test's own.
func skipReason(lines []string) string {
	reason := "no reason given"
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") {
			continue
		}
		// "file_test.go:12: message": the message.
		if i := strings.Index(t, ".go:"); i >= 0 {
			if j := strings.Index(t[i+4:], ": "); j >= 0 {
				t = t[i+4+j+2:]
			}
		}
		reason = t
	}
	return reason
}

func shortPackage(p string) string {
	const module = "github.com/tableconform/conform/"
	return strings.TrimPrefix(p, module)
}

func since(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() }

// relay copies the events of r to out unchanged and hands each to w.
func relay(r io.Reader, out io.Writer, w *watcher, now func() time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if _, err := out.Write(append(line, '\n')); err != nil {
			return err
		}
		var e testEvent
		if json.Unmarshal(line, &e) == nil {
			w.observe(e, now())
		}
	}
	return sc.Err()
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "testprogress: usage: testprogress go test -json [flags] [packages]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	// Ctrl-C reaches go test through the terminal's process group; testprogress waits for it.
	signal.Ignore(syscall.SIGINT)
	w := newWatcher(time.Now())
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if line := w.heartbeat(now); line != "" {
					fmt.Fprintln(os.Stderr, line)
				}
			}
		}
	}()
	relayErr := relay(stdout, os.Stdout, w, time.Now)
	waitErr := cmd.Wait()
	close(stop)
	for _, l := range w.closing() {
		fmt.Fprintln(os.Stderr, l)
	}
	if relayErr != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", relayErr)
	}
	if ee, ok := waitErr.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	} else if waitErr != nil || relayErr != nil {
		os.Exit(2)
	}
}
