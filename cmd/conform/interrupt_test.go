//go:build unix

package main

import (
	"bytes"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Issue 34 item 9: the first Ctrl-C is acknowledged at once, not when the summary comes;
// a second one is not acknowledged again.
func TestInterruptIsAcknowledgedAtOnce(t *testing.T) {
	var notice syncBuffer
	b := newBackendProcesses()
	b.notice = &notice
	stop := b.forwardSignals()
	defer stop()
	for range 2 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !b.wasInterrupted() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(100 * time.Millisecond) // the second signal's turn of the loop
	got := notice.String()
	if strings.Count(got, "stopping...") != 1 || !strings.Contains(got, "Ctrl-C again") {
		t.Fatalf("after two interrupts the terminal shows %q, want the stopping line once", got)
	}
}
