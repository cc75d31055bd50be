package tableserver

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// withDeadline behaves as context.WithDeadline: its deadline, its values, the error of
// whichever of deadline, cancel and parent came first (and then always that one), and a
// Done that closes at the deadline.
func TestWithDeadlineBehavesAsContextWithDeadline(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	t.Run("deadline and values", func(t *testing.T) {
		d := time.Now().Add(time.Hour)
		ctx := withDeadline(parent, d)
		cancel := ctx.cancel
		defer cancel()
		if got, ok := ctx.Deadline(); !ok || !got.Equal(d) {
			t.Errorf("Deadline = %v, %v", got, ok)
		}
		if ctx.Value(ctxKey{}) != "v" {
			t.Error("the parent's value is lost")
		}
		if ctx.Err() != nil {
			t.Errorf("Err before the deadline = %v", ctx.Err())
		}
		early, cancelEarly := context.WithDeadline(parent, time.Now().Add(time.Minute))
		defer cancelEarly()
		inner := withDeadline(early, d)
		cancelInner := inner.cancel
		defer cancelInner()
		if got, _ := inner.Deadline(); !got.Before(d) {
			t.Errorf("an earlier parent deadline is not reported: %v", got)
		}
	})
	t.Run("deadline passes without Done", func(t *testing.T) {
		ctx := withDeadline(parent, time.Now().Add(20*time.Millisecond))
		cancel := ctx.cancel
		time.Sleep(30 * time.Millisecond)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v", ctx.Err())
		}
		cancel()
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Err after cancel = %v, want it unchanged", ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Error("Done did not close for a passed deadline")
		}
	})
	t.Run("Done closes at the deadline", func(t *testing.T) {
		ctx := withDeadline(parent, time.Now().Add(20*time.Millisecond))
		cancel := ctx.cancel
		defer cancel()
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("Done did not close")
		}
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v", ctx.Err())
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx := withDeadline(parent, time.Now().Add(time.Hour))
		cancel := ctx.cancel
		cancel()
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err = %v", ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Error("Done did not close after cancel")
		}
		armed := withDeadline(parent, time.Now().Add(time.Hour))
		cancelArmed := armed.cancel
		done := armed.Done()
		cancelArmed()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Error("an armed Done did not close on cancel")
		}
	})
	t.Run("parent canceled", func(t *testing.T) {
		p, cancelParent := context.WithCancel(parent)
		ctx := withDeadline(p, time.Now().Add(time.Hour))
		cancel := ctx.cancel
		defer cancel()
		done := ctx.Done()
		cancelParent()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Error("Done did not close with the parent")
		}
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Err = %v", ctx.Err())
		}
		p2, cancelParent2 := context.WithCancel(parent)
		ctx2 := withDeadline(p2, time.Now().Add(time.Hour))
		cancel2 := ctx2.cancel
		defer cancel2()
		cancelParent2()
		if !errors.Is(ctx2.Err(), context.Canceled) {
			t.Errorf("Err with a canceled parent, Done never called = %v", ctx2.Err())
		}
	})
	t.Run("AfterFunc", func(t *testing.T) {
		ctx := withDeadline(parent, time.Now().Add(time.Hour))
		cancel := ctx.cancel
		ran := make(chan struct{})
		context.AfterFunc(ctx, func() { close(ran) })
		cancel()
		select {
		case <-ran:
		case <-time.After(time.Second):
			t.Error("AfterFunc did not run")
		}
	})
}

// A detachedContext keeps the request's values and none of its cancellation: work bounded
// by a deadline under it outlives a request whose client went away, as under
// context.WithoutCancel.
func TestDetachedContextIgnoresTheRequestsCancellation(t *testing.T) {
	request, cancelRequest := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	detached := &detachedContext{values: request}
	ctx := withDeadline(detached, time.Now().Add(time.Hour))
	defer ctx.cancel()
	done := ctx.Done() // armed before the request is cancelled
	cancelRequest()
	if err := ctx.Err(); err != nil {
		t.Errorf("Err after the request's cancellation = %v", err)
	}
	select {
	case <-done:
		t.Error("Done closed with the request's cancellation")
	case <-time.After(20 * time.Millisecond):
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Error("the request's value is lost")
	}
	if _, ok := detached.Deadline(); ok {
		t.Error("a detached context has a deadline")
	}
}
