package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"
)

// The SDK ceiling's client runs in a process of its own, so that the server under test and
// the aztables client do not share a Go runtime (scheduler, garbage collector, allocator):
// the process the benchmark measures holds the server alone. The child is the benchmark's
// own test binary, started with SDKLoadEnv set to the JSON of an SDKLoadSpec; TestMain hands
// it to RunSDKLoadChild before parsing any flag.

// SDKLoadEnv is the environment variable that makes a test binary of this package an SDK
// load client.
const SDKLoadEnv = "CONFORM_BENCH_SDKLOAD"

// SDKLoadSpec is what a load client does: one ceiling operation against one endpoint, for a
// number of operations (Ops) or for a while (Duration), after Warmup untimed operations.
// Canned says the endpoint stores nothing (the do-nothing server): no table is created and
// nothing is read back.
type SDKLoadSpec struct {
	Endpoint string        `json:"endpoint"`
	Canned   bool          `json:"canned"`
	Op       CeilingOp     `json:"op"`
	Ops      int           `json:"ops,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Warmup   int           `json:"warmup,omitempty"`
}

// SDKLoadResult is what a load client measured: the summary of its timed phase, its own
// CPU time, and the bytes of the answers' bodies it read.
type SDKLoadResult struct {
	Summary     Summary       `json:"summary"`
	ClientCPU   time.Duration `json:"client_cpu_ns"`
	AnswerBytes int64         `json:"answer_bytes"`
	Answers     int64         `json:"answers"`
	Error       string        `json:"error,omitempty"`
}

// The child's protocol on its standard streams: it writes "ready" once its table is loaded
// and its warm-up has run, waits for a line on its standard input, runs the phase, then writes the JSON of an
// SDKLoadResult on one line and deletes its table.
const sdkLoadReady = "ready"

// RunSDKLoadChild is the load client's main: it reads its SDKLoadSpec from SDKLoadEnv and
// returns the process's exit status.
func RunSDKLoadChild(stdin io.Reader, stdout io.Writer) int {
	var spec SDKLoadSpec
	if err := json.Unmarshal([]byte(os.Getenv(SDKLoadEnv)), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "sdk load: bad %s: %v\n", SDKLoadEnv, err)
		return 2
	}
	res := runSDKLoad(spec, stdin, stdout)
	line, _ := json.Marshal(res)
	fmt.Fprintf(stdout, "%s\n", line)
	if res.Error != "" {
		return 1
	}
	return 0
}

func runSDKLoad(spec SDKLoadSpec, stdin io.Reader, stdout io.Writer) SDKLoadResult {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeoutLoad(spec))
	defer cancel()
	counter := &countingTransport{inner: NewCeilingTransport()}
	c, err := NewCeiling(ctx, spec.Endpoint, spec.Canned, &http.Client{Transport: counter})
	if err != nil {
		return SDKLoadResult{Error: err.Error()}
	}
	defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
	if spec.Warmup > 0 {
		if _, err := c.Run(ctx, spec.Op, Limit{Ops: spec.Warmup}, nil); err != nil {
			return SDKLoadResult{Error: "warm-up: " + err.Error()}
		}
	}
	fmt.Fprintln(stdout, sdkLoadReady)
	if _, err := bufio.NewReader(stdin).ReadString('\n'); err != nil {
		return SDKLoadResult{Error: "no go-ahead: " + err.Error()}
	}
	phase := &phaseTimer{counter: counter}
	s, err := c.Run(ctx, spec.Op, Limit{Ops: spec.Ops, Duration: spec.Duration}, phase)
	res := SDKLoadResult{Summary: s, ClientCPU: phase.cpu, AnswerBytes: phase.bytes, Answers: phase.answers}
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

// phaseTimer takes the client's CPU time and the answer counts of the timed phase alone,
// without the loading before it and the read-backs after it.
type phaseTimer struct {
	counter          *countingTransport
	running          bool
	cpu0, cpu        time.Duration
	bytes0, answers0 int64
	bytes, answers   int64
}

func (p *phaseTimer) StartTimer() {
	p.running = true
	p.cpu0, p.bytes0, p.answers0 = processCPU(), p.counter.bytes.Load(), p.counter.answers.Load()
}

func (p *phaseTimer) StopTimer() {
	if p.running {
		p.running = false
		p.cpu += processCPU() - p.cpu0
		p.bytes += p.counter.bytes.Load() - p.bytes0
		p.answers += p.counter.answers.Load() - p.answers0
	}
}

func (p *phaseTimer) ResetTimer() {}

// runTimeoutLoad bounds a load client's whole life: loading, warm-up, the phase and
// read-backs. A phase bounded by operations gets a millisecond per operation on top (the
// slowest backend the ceiling drives answers in well under that with 16 workers).
func runTimeoutLoad(spec SDKLoadSpec) time.Duration {
	return 2*time.Minute + 2*spec.Duration + time.Duration(spec.Ops+spec.Warmup)*time.Millisecond
}

// countingTransport counts the answers and the bytes of their bodies as the server declared
// them (Content-Length).
type countingTransport struct {
	inner   http.RoundTripper
	bytes   atomic.Int64
	answers atomic.Int64
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.RoundTrip(req)
	if err == nil {
		c.answers.Add(1)
		if resp.ContentLength > 0 {
			c.bytes.Add(resp.ContentLength)
		}
	}
	return resp, err
}

// SDKLoad is a running load client, loaded and waiting for Go.
type SDKLoad struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr strings.Builder
}

// StartSDKLoad starts a load client (this test binary again) for spec and waits until it
// has loaded its table.
func StartSDKLoad(ctx context.Context, spec SDKLoadSpec) (*SDKLoad, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sdk load: find this binary: %w", err)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	l := &SDKLoad{cmd: exec.CommandContext(ctx, self, "-test.run=^$", "-test.bench=^$")}
	l.cmd.Env = append(os.Environ(), SDKLoadEnv+"="+string(raw))
	l.cmd.Stderr = &l.stderr
	if l.stdin, err = l.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := l.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	l.out = bufio.NewReader(stdout)
	if err := l.cmd.Start(); err != nil {
		return nil, fmt.Errorf("sdk load: start: %w", err)
	}
	line, err := l.out.ReadString('\n')
	if strings.TrimSpace(line) != sdkLoadReady {
		l.abort()
		if res, perr := parseSDKLoadResult(line); perr == nil && res.Error != "" {
			return nil, fmt.Errorf("sdk load: %s", res.Error)
		}
		return nil, fmt.Errorf("sdk load: the client did not get ready (%v): %q %s", err, line, l.stderr.String())
	}
	return l, nil
}

// Go runs the loaded phase and returns what the client measured.
func (l *SDKLoad) Go() (SDKLoadResult, error) {
	if _, err := io.WriteString(l.stdin, "go\n"); err != nil {
		l.abort()
		return SDKLoadResult{}, fmt.Errorf("sdk load: %w", err)
	}
	line, err := l.out.ReadString('\n')
	res, perr := parseSDKLoadResult(line)
	_ = l.stdin.Close()
	werr := l.cmd.Wait()
	switch {
	case perr != nil:
		return res, fmt.Errorf("sdk load: no result (%v, %v): %s", err, werr, l.stderr.String())
	case res.Error != "":
		return res, errors.New("sdk load: " + res.Error)
	}
	return res, nil
}

func (l *SDKLoad) abort() {
	_ = l.stdin.Close()
	_ = l.cmd.Process.Kill()
	_ = l.cmd.Wait()
}

func parseSDKLoadResult(line string) (SDKLoadResult, error) {
	var res SDKLoadResult
	err := json.Unmarshal([]byte(strings.TrimSpace(line)), &res)
	return res, err
}
