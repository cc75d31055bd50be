package framework

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Waits that the service documents. Storage keeps a deleted table's name for at least 40
// seconds (spec.TableNameReuseDelay): a rule that needs the name again must wait that long
// against a real endpoint, or the real service could never pass it. The reference and the
// local emulators free a name within seconds; against them a short wait keeps runs fast.
const (
	// localNameReuseBound bounds the wait for a deleted name on the reference and on
	// endpoints on this machine.
	localNameReuseBound = 5 * time.Second
	// remoteNameReuseMargin is added to the documented delay on a real endpoint: "at least"
	// 40 seconds.
	remoteNameReuseMargin = 20 * time.Second
	// waitProgressEvery is how often a long wait says that it is still waiting.
	waitProgressEvery = 10 * time.Second
	// NameReusePoll is how often a wait for a deleted name tries again.
	NameReusePoll = 250 * time.Millisecond
)

// IsLocal reports whether a backend runs on this machine: in process, or at a loopback
// endpoint (the reference over HTTP, Azurite, an emulator started here).
func IsLocal(info driver.Info) bool {
	if info.Endpoint == "" {
		return true
	}
	u, err := url.Parse(info.Endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NameReuseBound is how long a spec waits for a deleted table's name to become free again
// on the backend info describes: the documented delay and a margin on a real endpoint, a
// few seconds on a local one.
func NameReuseBound(info driver.Info) time.Duration {
	if IsLocal(info) {
		return localNameReuseBound
	}
	return spec.TableNameReuseDelay + remoteNameReuseMargin
}

// NameReuseBound is the bound for the backend of the running spec (NameReuseBound).
func (f *F) NameReuseBound() time.Duration { return NameReuseBound(f.Info()) }

var (
	progressMu sync.Mutex
	progressFn = func(line string) { ginkgo.GinkgoWriter.Println(line) }
)

// SetProgress sets where a long wait's progress lines go (conform run shows them as notes
// on the terminal); by default they go to the spec's GinkgoWriter.
func SetProgress(fn func(line string)) {
	progressMu.Lock()
	defer progressMu.Unlock()
	progressFn = fn
}

func progress(line string) {
	progressMu.Lock()
	fn := progressFn
	progressMu.Unlock()
	fn(line)
}

// WhileBeingDeleted calls try until it answers anything but 409 TableBeingDeleted, for at
// most bound, every poll; while it waits it says so every `every`, naming what. It returns
// how long it waited and try's last error.
func WhileBeingDeleted(ctx context.Context, what string, bound, poll, every time.Duration, try func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	nextNote := start.Add(every)
	for {
		err := try(ctx)
		e, ok := driver.AsError(err)
		waited := time.Since(start)
		if err == nil || !ok || e.Code != spec.ErrTableBeingDeleted.Code || waited >= bound {
			return waited, err
		}
		if now := time.Now(); !now.Before(nextNote) {
			progress(fmt.Sprintf("%s: still 409 TableBeingDeleted after %s; waiting up to %s (Storage documents at least %s)",
				what, waited.Round(time.Second), bound, spec.TableNameReuseDelay))
			nextNote = now.Add(every)
		}
		t := time.NewTimer(min(poll, bound-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start), err
		case <-t.C:
		}
	}
}

// WaitForDeletedName creates table again while the backend still answers 409
// TableBeingDeleted, as long as NameReuseBound allows, with a progress line every 10 s
// (WhileBeingDeleted).
func (f *F) WaitForDeletedName(ctx context.Context, b interface {
	CreateTable(context.Context, string) error
}, table string) (time.Duration, error) {
	return WhileBeingDeleted(ctx, "re-creating deleted table "+table, f.NameReuseBound(), NameReusePoll, waitProgressEvery,
		func(ctx context.Context) error { return b.CreateTable(ctx, table) })
}
