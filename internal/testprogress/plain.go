package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// quietWriter passes output on and remembers when it last did.
type quietWriter struct {
	mu   *sync.Mutex
	w    io.Writer
	last *time.Time
}

func (q quietWriter) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	*q.last = time.Now()
	return q.w.Write(b)
}

// runPlain runs a command that is not go test (go vet, go build) with its output passed
// through, and says on standard error "... <what>, <elapsed>" whenever quietLimit passes
// without a line. It returns the command's exit status.
func runPlain(what string, args []string) int {
	var mu sync.Mutex
	started := time.Now()
	last := started
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = quietWriter{&mu, os.Stdout, &last}
	cmd.Stderr = quietWriter{&mu, os.Stderr, &last}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		return 2
	}
	signal.Ignore(syscall.SIGINT)
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				mu.Lock()
				if now.Sub(last) >= quietLimit {
					last = now
					fmt.Fprintf(os.Stderr, "... %s: still %s\n", since(now, started), what)
				}
				mu.Unlock()
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		return 2
	}
	return 0
}
