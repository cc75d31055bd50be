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

// quietLimit is the longest time without a line of progress, short of the 30 s promised
// by the margin a step's start needs on a busy machine (`go run` links the filter before
// it can say anything: 27 s between lines at load 25 with 25 s here).
const quietLimit = 20 * time.Second

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
	skips    map[string][]string // package -> its skipped tests, one line each
	summary  map[string][]string // package -> the summary lines its tests logged
	seen     map[string]bool
}

func newWatcher(now time.Time) *watcher {
	return &watcher{started: now, lastLine: now, running: map[string]time.Time{}, output: map[string][]string{},
		skips: map[string][]string{}, summary: map[string][]string{}, seen: map[string]bool{}}
}

// observe takes one event. For the event that ends a package it returns the lines to
// print before the package's own line: its skipped tests, then the summaries its tests
// logged.
func (w *watcher) observe(e testEvent, now time.Time) (before []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e.Package == "" {
		return nil
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
				w.summary[e.Package] = append(w.summary[e.Package], line)
			}
		}
		if e.Test != "" {
			w.output[key] = append(w.output[key], e.Output)
		}
	case "pass", "fail", "skip":
		if e.Test == "" {
			delete(w.running, e.Package)
			w.lastLine = now // the package's line
			for _, l := range w.skips[e.Package] {
				before = append(before, "SKIP "+l)
			}
			for _, l := range w.summary[e.Package] {
				before = append(before, "conformance run: "+l)
			}
			delete(w.skips, e.Package)
			delete(w.summary, e.Package)
			return before
		}
		if e.Action == "pass" {
			w.passed++
		}
		if e.Action == "skip" {
			w.skips[e.Package] = append(w.skips[e.Package], fmt.Sprintf("%s %s: %s", shortPackage(e.Package), e.Test, skipReason(w.output[key])))
		}
		delete(w.output, key)
	}
	return nil
}

// heartbeat returns a line of progress, and the package it is told as output of (the one
// running longest), when the last line is quietLimit old; else "".
func (w *watcher) heartbeat(now time.Time) (line, pkg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now.Sub(w.lastLine) < quietLimit {
		return "", ""
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
	what, pkg := "building", ""
	if len(parts) > 0 {
		what, pkg = "running "+strings.Join(parts, ", "), pkgs[0]
	}
	return fmt.Sprintf("... %s: %s; %d tests passed so far", since(now, w.started), what, w.passed), pkg
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

// module is conform's module path.
const module = "github.com/tableconform/conform"

func shortPackage(p string) string { return strings.TrimPrefix(p, module+"/") }

func since(now, t time.Time) string { return now.Sub(t).Round(time.Second).String() }

// retried reads the specs the tests list as passed only when retried (CONFORM_RETRY_LOG,
// suites/framework), with a line that says what they are; nothing when there are none.
func retried(path string) []string {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := nonEmpty(strings.Split(string(data), "\n"))
	if len(lines) == 0 {
		return nil
	}
	return append([]string{fmt.Sprintf("%d specs passed only when retried (never on the reference):", len(lines))}, lines...)
}

func nonEmpty(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// output is the standard output of testprogress: the test events, and the lines it adds as
// events of their own, one writer at a time.
type output struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (o *output) write(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}

// say adds a line as an output event of package pkg that no test owns: gotestsum's
// standard-quiet format prints such lines as they are. Without a package (nothing runs
// yet), the line is the module's.
func (o *output) say(pkg, line string, now time.Time) {
	if pkg == "" {
		pkg = module
	}
	data, _ := json.Marshal(testEvent{Time: now, Action: "output", Package: pkg, Output: line + "\n"})
	o.write(append(data, '\n'))
}

// relay copies the events of r to out unchanged and hands each to w; before the event that
// ends a package, it adds the lines w returns for it.
func relay(r io.Reader, out *output, w *watcher, now func() time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e testEvent
		if json.Unmarshal(line, &e) == nil {
			for _, l := range w.observe(e, now()) {
				out.say(e.Package, l, now())
			}
		}
		out.write(append(line, '\n'))
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return out.err
}

func main() {
	if len(os.Args) > 3 && os.Args[1] == "-plain" {
		os.Exit(runPlain(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "testprogress: usage: testprogress go test -json [flags] [packages]\n       testprogress -plain WHAT COMMAND [ARGS]")
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
	out := &output{w: os.Stdout}
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if line, pkg := w.heartbeat(now); line != "" {
					out.say(pkg, line, now)
				}
			}
		}
	}()
	relayErr := relay(stdout, out, w, time.Now)
	waitErr := cmd.Wait()
	close(stop)
	for _, l := range retried(os.Getenv("CONFORM_RETRY_LOG")) {
		out.say("", l, time.Now())
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
