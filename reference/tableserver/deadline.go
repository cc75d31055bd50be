package tableserver

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// deadlineContext bounds a request's backend work as context.WithDeadline does, but it
// arms no timer and registers nothing with its parent until Done is first called: a
// backend that only polls Err (the in-memory reference does) then costs a clock read per
// poll instead of a timer and a cancellation registration per request. Its Err is that of
// a context.WithDeadline: the parent's error, DeadlineExceeded once the deadline has
// passed, or Canceled once cancel was called, whichever came first, and then always that.
type deadlineContext struct {
	parent   context.Context
	deadline time.Time

	mu          sync.Mutex
	err         error           // the first error reported; never changes once set
	armed       context.Context // the context.WithDeadline made by the first Done
	cancelArmed context.CancelFunc
	settled     atomic.Bool // set, under mu, once Err's answer can no longer change: from then on Err needs no lock
}

// withDeadline returns a context bounded by deadline; its cancel must be called once the
// work is done.
func withDeadline(parent context.Context, deadline time.Time) *deadlineContext {
	return &deadlineContext{parent: parent, deadline: deadline}
}

func (c *deadlineContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *deadlineContext) Value(key any) any { return c.parent.Value(key) }

func (c *deadlineContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed == nil {
		c.settled.Store(true)
		c.armed, c.cancelArmed = context.WithDeadline(c.parent, c.deadline)
		if c.err == context.Canceled {
			c.cancelArmed()
		}
	}
	return c.armed.Done()
}

func (c *deadlineContext) Err() error {
	if !c.settled.Load() && c.parent.Err() == nil && time.Now().Before(c.deadline) {
		return nil // as the locked reading below would answer, had it run first
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled.Store(true)
	switch {
	case c.err != nil:
	case c.armed != nil:
		c.err = c.armed.Err()
	case c.parent.Err() != nil:
		c.err = c.parent.Err()
	case !time.Now().Before(c.deadline):
		c.err = context.DeadlineExceeded
	}
	return c.err
}

func (c *deadlineContext) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.settled.Store(true)
	if c.err == nil {
		if c.armed != nil {
			c.err = c.armed.Err()
		}
		if c.err == nil {
			c.err = context.Canceled
		}
	}
	if c.cancelArmed != nil {
		c.cancelArmed()
	}
}

func (c *deadlineContext) String() string { return "tableserver.withDeadline" }

// detachedContext is a request's context without its cancellation, as
// context.WithoutCancel makes it, held in the request's exchange so that it needs no
// allocation of its own. It is never done, so that a context derived from it registers
// nothing with the request's.
type detachedContext struct{ values context.Context }

func (c *detachedContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *detachedContext) Done() <-chan struct{}       { return nil }
func (c *detachedContext) Err() error                  { return nil }
func (c *detachedContext) Value(key any) any           { return c.values.Value(key) }
func (c *detachedContext) String() string              { return "tableserver.detached" }

// context bounds backend work by the request's timeout parameter, at most 30 s (TMO): a
// larger value, however large, means 30 s. The caller cancels it once the work is done.
func (x *exchange) context() (*deadlineContext, error) {
	d := spec.MaxServerTimeout
	if v := x.query.Get("timeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, spec.ErrInvalidQueryParameter.Newf("The timeout query parameter must be a positive integer of seconds.")
		}
		if int64(n) < int64(d/time.Second) { // compared in seconds: n seconds may overflow a Duration
			d = time.Duration(n) * time.Second
		}
	}
	// The work is not tied to the connection: a client that shuts its sending side after
	// its request (legal in HTTP/1.1; net/http then cancels the request's context) still
	// gets its answer, and the work is bounded by the timeout alone.
	if x.detached.values == nil {
		x.detached.values = x.r.Context()
	}
	if x.deadlineUsed {
		return withDeadline(&x.detached, time.Now().Add(d)), nil
	}
	x.deadlineUsed = true
	x.deadline = deadlineContext{parent: &x.detached, deadline: time.Now().Add(d)}
	return &x.deadline, nil
}
