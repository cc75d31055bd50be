package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/report"
)

// readEarlierRaw reads the raw result of backend name in an earlier run's raw directory:
// the file of its name or, when the backend named itself otherwise than its argument did
// (mutant:NAME@BASE), the whole-backend result that holds it.
func readEarlierRaw(rawDir, name string) (report.Run, error) {
	run, err := readRaw(filepath.Join(rawDir, sanitizeName(name)+".json"))
	if err == nil {
		return run, nil
	}
	files, _ := filepath.Glob(filepath.Join(rawDir, "*.json"))
	for _, f := range files {
		base := filepath.Base(f)
		if strings.Contains(base, ".part") || strings.HasSuffix(base, ".account.json") || strings.HasSuffix(base, ".corpus.json") {
			continue
		}
		if r, rerr := readRaw(f); rerr == nil && r.Backend.Name == name {
			return r, nil
		}
	}
	return run, err
}

func readRaw(path string) (report.Run, error) {
	var run report.Run
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	return run, err
}

// startRuns runs the suite against each backend, one process each, at most --parallel at
// a time, and collects their raw results.
func startRuns(p runPlan, backends []string, filter, rawDir string, progress *progress, children *backendProcesses) ([]report.Run, []int) {
	self, err := os.Executable()
	runs := make([]report.Run, len(backends))
	codes := make([]int, len(backends))
	if err != nil {
		for i, b := range backends {
			runs[i], codes[i] = report.Run{Backend: driver.Info{Name: framework.BackendName(b)}, StartError: "find conform's own executable: " + err.Error()}, exitUsage
		}
		return runs, codes
	}
	sem := make(chan struct{}, p.o.backendsAtOnce)
	var wg sync.WaitGroup
	runID := framework.RunPrefix()[len(framework.TablePrefix):]
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if children.wasInterrupted() {
				runs[i], codes[i] = report.Run{Backend: driver.Info{Name: framework.BackendName(b)}, Interrupted: true, Filter: filter, Argument: reusableArgument(b)}, exitInterrupted
				return
			}
			runs[i], codes[i] = runBackend(self, b, i, p.o, filter, p.command, rawDir, runID, progress, children)
			// The filter this run was given is its selection (report.SelectionOf): a rerun's
			// or a retry's is narrower than the user's; merged into the earlier run, the
			// whole is judged over the earlier run's.
			runs[i].Filter = filter
			runs[i].Argument = reusableArgument(b)
			runs[i].Interrupted = runs[i].Interrupted || children.wasInterrupted()
		}()
	}
	wg.Wait()
	return runs, codes
}

// childPart is the share of a backend's specs one process runs: its raw result and log are
// named with suffix ("" when one process runs them all); only one part replays the corpus.
type childPart struct {
	suffix string
	corpus bool
}

func runChild(self, backend string, slot int, part childPart, o runOptions, filter, command, rawDir, runID string, p *progress, children *backendProcesses) (report.Run, int) {
	name := framework.BackendName(backend)
	safe := sanitizeName(name) + part.suffix
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return report.Run{StartError: "create " + rawDir + ": " + err.Error()}, exitUsage
	}
	rawPath := filepath.Join(rawDir, safe+".json")
	_ = os.Remove(rawPath)
	_ = os.Remove(corpusPath(rawPath))
	args := []string{"run-backend", "--raw-out", rawPath, "--label-filter", filter, "--profile", backendProfile(backend, o.profile),
		"--spec-timeout", o.specTimeout.String(), "--suite-timeout", o.suiteTimeout.String(), "--command", command}
	if o.baselineDir != "" {
		args = append(args, "--baseline-dir", o.baselineDir)
	}
	if o.updateBaseline {
		args = append(args, "--ignore-baselines")
	}
	if o.keepFailed {
		args = append(args, "--keep-failed")
	}
	if o.record != "" {
		args = append(args, "--record", filepath.Join(o.record, sanitizeName(name)))
	}
	if o.noCorpus || !part.corpus {
		args = append(args, "--no-corpus")
	}
	c := exec.Command(self, args...)
	c.Env = append(os.Environ(), childBackendEnv+"="+backend, "CONFORM_RUN_ID="+runID, fmt.Sprintf("CONFORM_TABLE_SLOT=%d", slot),
		childAnswerFilesEnv+"="+answerFilesPrefix(rawDir, name))
	ownProcessGroup(c)
	if err := os.MkdirAll(rawDir, 0o755); err != nil {
		return report.Run{Backend: driver.Info{Name: name}, StartError: "create " + rawDir + ": " + err.Error()}, exitUsage
	}
	logFile, err := os.Create(filepath.Join(rawDir, safe+".log"))
	if err != nil {
		return report.Run{Backend: driver.Info{Name: name}, StartError: "create log: " + err.Error()}, exitUsage
	}
	defer logFile.Close()
	stdout := newMaskedLines(logFile)
	defer stdout.Flush()
	c.Stdout = stdout
	stderr, err := c.StderrPipe()
	if err != nil {
		return report.Run{StartError: err.Error()}, exitUsage
	}
	if err := c.Start(); err != nil {
		return report.Run{StartError: "start: " + err.Error()}, exitUsage
	}
	defer children.add(c.Process)()
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, eventPrefix); ok {
			var e event
			if json.Unmarshal([]byte(rest), &e) == nil {
				p.event(name, e)
				continue
			}
		}
		fmt.Fprintln(logFile, driver.MaskSecrets(line))
	}
	waitErr := c.Wait()
	code := exitOK
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	} else if waitErr != nil {
		code = exitUsage
	}
	var run report.Run
	data, err := os.ReadFile(rawPath)
	if err == nil {
		err = json.Unmarshal(data, &run)
	}
	if err != nil {
		run.Backend.Name = name
		run.StartError = fmt.Sprintf("the process running %s ended without a result (exit status %d); see %s", name, code,
			filepath.Join(rawDir, safe+".log"))
		return run, exitUsage
	}
	if run.Backend.Name == "" {
		run.Backend.Name = name
	}
	return run, code
}

func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}
