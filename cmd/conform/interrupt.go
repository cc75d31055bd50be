package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// exitInterrupted is the exit status of a run stopped by SIGINT or SIGTERM (128 + SIGINT).
const exitInterrupted = 130

// backendProcesses are the running backend processes of `conform run`, to which an
// interrupt is forwarded: each then stops its current spec, runs the cleanup nodes (which
// delete the run's tables) and writes what it ran, and the report is still written.
type backendProcesses struct {
	mu          sync.Mutex
	procs       map[*os.Process]struct{}
	interrupted bool
	// notice is where the first interrupt is acknowledged, at once: the summary comes
	// only once every backend process has cleaned up.
	notice io.Writer
}

func newBackendProcesses() *backendProcesses {
	return &backendProcesses{procs: map[*os.Process]struct{}{}, notice: os.Stderr}
}

// stoppingNotice acknowledges the first interrupt of a run. A second one is passed on too,
// and Ginkgo then skips the cleanup of the specs in flight.
const stoppingNotice = "conform: stopping... each backend ends its current spec and deletes the run's tables; the report follows (Ctrl-C again to skip the cleanup)"

// add registers a started process and returns the function that removes it.
func (b *backendProcesses) add(p *os.Process) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.procs[p] = struct{}{}
	if b.interrupted {
		_ = p.Signal(os.Interrupt)
	}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.procs, p)
	}
}

// forwardSignals catches SIGINT and SIGTERM until the returned function is called and
// sends each to every registered process. A process started after an interrupt is not
// interrupted: runChild does not start new ones then.
func (b *backendProcesses) forwardSignals() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				b.mu.Lock()
				if !b.interrupted && b.notice != nil {
					fmt.Fprintln(b.notice, stoppingNotice)
				}
				b.interrupted = true
				for p := range b.procs {
					_ = p.Signal(sig)
				}
				b.mu.Unlock()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// wasInterrupted reports whether a signal arrived.
func (b *backendProcesses) wasInterrupted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.interrupted
}
