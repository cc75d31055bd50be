package reference

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/internal/store"
	"github.com/tableconform/conform/reference/spec"
)

// testEpoch is the fake clock's start.
var testEpoch = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)

// fakeClock is a settable clock for deterministic Timestamps.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: testEpoch} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var bg = context.Background()

// withStoreConfig tunes the storage of the Service's tables (store.Config).
func withStoreConfig(c store.Config) Option {
	return func(s *Service) { s.storeConfig = c }
}

// newTestService returns a Service with a stalled fake clock and no delete hold, and a
// table "Tbl".
func newTestService(t testing.TB, opts ...Option) (*Service, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	s := New(append([]Option{WithClock(clock.Now), WithDeleteHold(0)}, opts...)...)
	if err := s.CreateTable(bg, "Tbl"); err != nil {
		t.Fatal(err)
	}
	return s, clock
}

// wantError fails unless err is a *spec.Error with the given status and code.
func wantError(t testing.TB, err error, status int, code string) *spec.Error {
	t.Helper()
	var se *spec.Error
	if !errors.As(err, &se) {
		t.Fatalf("got error %v, want %d %s", err, status, code)
	}
	if se.Status != status || se.Code != code {
		t.Fatalf("got %d %s (%s), want %d %s", se.Status, se.Code, se.Message, status, code)
	}
	return se
}

// wantIndexed fails unless err is the failure of batch operation index.
func wantIndexed(t testing.TB, err error, status int, code string, index int) {
	t.Helper()
	se := wantError(t, err, status, code)
	if !se.Indexed || se.FailedIndex != index {
		t.Fatalf("got %v (indexed %v, index %d), want operation %d", se, se.Indexed, se.FailedIndex, index)
	}
}

func mustInsert(t testing.TB, s *Service, e api.Entity) api.Entity {
	t.Helper()
	got, err := s.InsertEntity(bg, "Tbl", e)
	if err != nil {
		t.Fatalf("insert %v: %v", e, err)
	}
	return got
}

func mustGet(t testing.TB, s *Service, pk, rk string) api.Entity {
	t.Helper()
	got, err := s.GetEntity(bg, "Tbl", pk, rk, nil)
	if err != nil {
		t.Fatalf("get (%q, %q): %v", pk, rk, err)
	}
	return got
}

// sameProperties reports whether two property maps hold the same values.
func sameProperties(a, b map[string]api.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

func ent(pk, rk string, kv ...any) api.Entity {
	e := api.NewEntity(pk, rk, nil)
	for i := 0; i+1 < len(kv); i += 2 {
		e.Properties[kv[i].(string)] = kv[i+1].(api.Value)
	}
	return e
}

func contextWithCancel() (context.Context, context.CancelFunc) { return context.WithCancel(bg) }

func isServiceError(err error) bool {
	var se *spec.Error
	return errors.As(err, &se)
}
