package srcmutate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Status is what became of one mutant.
type Status string

// The statuses. Killed and TimedOut count as killed; NotViable mutants are discarded.
const (
	Killed    Status = "killed"     // at least one spec failed that passes on the unmutated source
	Survived  Status = "survived"   // every spec passed
	TimedOut  Status = "timed-out"  // the suite did not finish within the per-mutant timeout
	Crashed   Status = "crashed"    // the suite process failed without a report (a panic outside a spec)
	NotViable Status = "not-viable" // the mutant does not compile
)

// Result is one mutant's outcome.
type Result struct {
	Mutant  Mutant  `json:"mutant"`
	Status  Status  `json:"status"`
	Seconds float64 `json:"seconds"`
	// KilledBy lists the specs that failed, as "rule id: spec text".
	KilledBy []string `json:"killedBy,omitempty"`
	// Detail is the build error of a non-viable mutant or the tail of a crashed run's output.
	Detail string `json:"detail,omitempty"`
}

// Config says how to run the suite against mutants.
type Config struct {
	Root    string        // the module root
	Package string        // the suite's package, e.g. "./suites/all"
	Run     string        // the -run pattern of the suite's test
	Env     []string      // extra environment, e.g. CONFORM_BACKENDS=reference
	Timeout time.Duration // per mutant
	Log     io.Writer     // progress, one line per mutant; may be nil
}

// Summary is a whole mutation run.
type Summary struct {
	Seed      uint64   `json:"seed"`
	Sample    int      `json:"sample"`
	Total     int      `json:"totalMutants"` // mutants enumerated before sampling
	Dirs      []string `json:"dirs"`
	Killed    int      `json:"killed"`   // killed, timed out or crashed
	Survived  int      `json:"survived"` // survived
	NotViable int      `json:"notViable"`
	Results   []Result `json:"results"`
	// BaseFailures are specs that failed on the unmutated source; they kill nothing.
	BaseFailures []string `json:"baseFailures,omitempty"`
	Seconds      float64  `json:"seconds"`
}

// Score is killed / (killed + survived): the share of viable mutants the suite caught.
func (s Summary) Score() float64 {
	if s.Killed+s.Survived == 0 {
		return 0
	}
	return float64(s.Killed) / float64(s.Killed+s.Survived)
}

// KillsPerSpec counts, for each spec that killed at least one mutant, how many it killed.
func (s Summary) KillsPerSpec() map[string]int {
	out := map[string]int{}
	for _, r := range s.Results {
		for _, k := range r.KilledBy {
			out[k]++
		}
	}
	return out
}

// KillsPerRule counts, for each rule with a spec that killed a mutant, how many mutants its
// specs killed (a mutant counts once per rule).
func (s Summary) KillsPerRule() map[string]int {
	out := map[string]int{}
	for _, r := range s.Results {
		seen := map[string]bool{}
		for _, k := range r.KilledBy {
			rule, _, _ := strings.Cut(k, ": ")
			if !seen[rule] {
				seen[rule] = true
				out[rule]++
			}
		}
	}
	return out
}

// Runner runs the suite against mutants one at a time.
type Runner struct {
	cfg  Config
	tmp  string
	base map[string]bool
}

// NewRunner prepares a runner; Close removes its temporary files.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	tmp, err := os.MkdirTemp("", "srcmutate-")
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, tmp: tmp}, nil
}

// Close removes the runner's temporary directory.
func (r *Runner) Close() error { return os.RemoveAll(r.tmp) }

func (r *Runner) logf(format string, args ...any) {
	if r.cfg.Log != nil {
		fmt.Fprintf(r.cfg.Log, format+"\n", args...)
	}
}

// Baseline runs the suite on the unmutated source. It fails when the suite cannot run;
// specs that fail there are remembered and never count as kills.
func (r *Runner) Baseline(ctx context.Context) ([]string, error) {
	start := time.Now()
	failed, _, err := r.suite(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("the suite does not run on the unmutated source: %w", err)
	}
	r.base = map[string]bool{}
	for _, f := range failed {
		r.base[f] = true
	}
	r.logf("unmutated source: %d specs failed, %s", len(failed), time.Since(start).Round(time.Second))
	return failed, nil
}

// Run applies one mutant through an overlay, checks that it compiles, and runs the suite.
func (r *Runner) Run(ctx context.Context, m Mutant) (res Result) {
	start := time.Now()
	res.Mutant = m
	defer func() { res.Seconds = time.Since(start).Seconds() }()
	overlay, err := r.writeOverlay(m)
	if err != nil {
		res.Status, res.Detail = Crashed, err.Error()
		return res
	}
	if out, err := r.goCmd(ctx, nil, "build", "-overlay="+overlay, "./"+path.Dir(m.File)).CombinedOutput(); err != nil {
		res.Status, res.Detail = NotViable, tail(string(out), 600)
		return res
	}
	failed, timedOut, err := r.suite(ctx, overlay)
	switch {
	case timedOut:
		res.Status = TimedOut
	case err != nil:
		res.Status, res.Detail = Crashed, tail(err.Error(), 2000)
	default:
		for _, f := range failed {
			if !r.base[f] {
				res.KilledBy = append(res.KilledBy, f)
			}
		}
		res.Status = Survived
		if len(res.KilledBy) > 0 {
			res.Status = Killed
		}
	}
	return res
}

// writeOverlay writes the mutated file into the runner's directory and an overlay file
// that substitutes it for the original; the source tree is not touched.
func (r *Runner) writeOverlay(m Mutant) (string, error) {
	orig := filepath.Join(r.cfg.Root, filepath.FromSlash(m.File))
	src, err := os.ReadFile(orig)
	if err != nil {
		return "", err
	}
	mutated, err := Apply(src, m)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(r.tmp, fmt.Sprintf("m%d", m.ID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	file := filepath.Join(dir, filepath.Base(orig))
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(orig)
	if err != nil {
		return "", err
	}
	data, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: file}})
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o644)
}

func (r *Runner) goCmd(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = r.cfg.Root
	cmd.Env = append(append(os.Environ(), r.cfg.Env...), env...)
	setProcessGroup(cmd)
	return cmd
}

// suite runs the suite's test once (with the overlay, if any) and returns the specs that
// failed, read from Ginkgo's JSON report.
func (r *Runner) suite(ctx context.Context, overlay string) (failed []string, timedOut bool, err error) {
	reportFile := filepath.Join(r.tmp, fmt.Sprintf("report-%d.json", time.Now().UnixNano()))
	defer os.Remove(reportFile)
	args := []string{"test", "-count=1", "-timeout=" + r.cfg.Timeout.String()}
	if overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	args = append(args, r.cfg.Package, "-run", r.cfg.Run, "-args", "-ginkgo.json-report="+reportFile, "-ginkgo.no-color")
	// The go command's own deadline covers the build too; the test's -timeout covers the run.
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout+3*time.Minute)
	defer cancel()
	cmd := r.goCmd(ctx, nil, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	if ctx.Err() != nil || strings.Contains(out.String(), "panic: test timed out after") {
		return nil, true, nil
	}
	data, readErr := os.ReadFile(reportFile)
	if readErr != nil {
		if runErr == nil {
			runErr = errors.New("no report written")
		}
		return nil, false, fmt.Errorf("%v: %s", runErr, out.String())
	}
	failed, err = FailedSpecs(data)
	if err != nil {
		return nil, false, err
	}
	if runErr != nil && len(failed) == 0 {
		return nil, false, fmt.Errorf("%v with no failed spec: %s", runErr, out.String())
	}
	return failed, false, nil
}

// FailedSpecs reads a Ginkgo JSON report and names its failed specs as "rule id: spec
// text" (the rule from conform's rule report entry, or the first label without a colon).
func FailedSpecs(data []byte) ([]string, error) {
	var reports []struct {
		SpecReports []struct {
			LeafNodeType             string
			LeafNodeText             string
			ContainerHierarchyTexts  []string
			ContainerHierarchyLabels [][]string
			LeafNodeLabels           []string
			State                    string
			ReportEntries            []struct {
				Name  string
				Value struct{ AsJSON string }
			}
		}
	}
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("read Ginkgo report: %w", err)
	}
	var out []string
	for _, rep := range reports {
		for _, s := range rep.SpecReports {
			if s.LeafNodeType != "It" {
				continue
			}
			switch s.State {
			case "failed", "panicked", "timedout", "aborted", "interrupted":
			default:
				continue
			}
			rule := ""
			for _, e := range s.ReportEntries {
				var v struct{ ID string }
				if e.Name == "conform.rule" && json.Unmarshal([]byte(e.Value.AsJSON), &v) == nil && v.ID != "" {
					rule = v.ID
				}
			}
			if rule == "" {
				for _, labels := range append(s.ContainerHierarchyLabels, s.LeafNodeLabels) {
					for _, l := range labels {
						if rule == "" && !strings.Contains(l, ":") {
							rule = l
						}
					}
				}
			}
			texts := s.ContainerHierarchyTexts
			if len(texts) > 0 && strings.HasPrefix(texts[0], "[backend ") {
				texts = texts[1:]
			}
			out = append(out, rule+": "+strings.Join(append(append([]string{}, texts...), s.LeafNodeText), " "))
		}
	}
	sort.Strings(out)
	return out, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
