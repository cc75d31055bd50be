package persist

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// BenchmarkSnapshotWait takes snapshots of a Store of 200,000 entities (about 50 MB) while
// readers and a writer keep sending requests, and reports how long each snapshot held the
// write lock (lock-ms: the longest any request can wait for it; the target is under 50 ms),
// the longest any request took during the snapshots (max-wait-ms) and, for comparison on a
// loaded machine, during as long without a snapshot (baseline-max-wait-ms), and how long a
// snapshot took (snapshot-ms).
func BenchmarkSnapshotWait(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	s := open(b, dir, WithSync(SyncNone), WithSnapshotEvery(0))
	defer s.abandon()
	c := context.Background()
	if err := s.CreateTable(c, "tab"); err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", 200)
	ops := make([]api.BatchOp, 0, 100)
	for i := 0; i < n; i += 100 {
		ops = ops[:0]
		pk := fmt.Sprintf("p%03d", (i/100)%100)
		for j := i; j < i+100; j++ {
			ops = append(ops, api.BatchOp{Kind: api.BatchInsert, Entity: api.NewEntity(pk, fmt.Sprintf("r%08d", j), map[string]api.Value{
				"pad": api.String(pad), "n": api.Int64(int64(j)),
			})})
		}
		if _, err := s.SubmitBatch(c, "tab", ops); err != nil {
			b.Fatal(err)
		}
	}
	var maxWait atomic.Int64
	var snapTotal, lockMax time.Duration
	var requests atomic.Int64
	b.ResetTimer()
	for i := range 2 * b.N {
		if i == b.N {
			b.ReportMetric(float64(maxWait.Load())/1e6, "max-wait-ms")
			maxWait.Store(0)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; ; k++ {
					select {
					case <-stop:
						return
					default:
					}
					start := time.Now()
					var err error
					if w == 0 {
						_, err = s.InsertEntity(c, "tab", api.NewEntity("new", fmt.Sprintf("%d-%d", i, k), nil))
					} else {
						_, err = s.GetEntity(c, "tab", fmt.Sprintf("p%03d", k%100), fmt.Sprintf("r%08d", (k*100+k%100)%n), nil)
					}
					if err != nil {
						b.Error(err)
						return
					}
					requests.Add(1)
					if d := int64(time.Since(start)); d > maxWait.Load() {
						maxWait.Store(d)
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		if i < b.N {
			start := time.Now()
			if err := s.Snapshot(); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			snapTotal += took
			s.mu.Lock()
			lockMax = max(lockMax, s.snapPause)
			s.mu.Unlock()
		} else {
			time.Sleep(snapTotal / time.Duration(b.N))
		}
		close(stop)
		wg.Wait()
	}
	b.ReportMetric(float64(maxWait.Load())/1e6, "baseline-max-wait-ms")
	b.ReportMetric(float64(lockMax.Microseconds())/1e3, "lock-ms")
	b.ReportMetric(float64(snapTotal.Milliseconds())/float64(b.N), "snapshot-ms")
	b.ReportMetric(float64(requests.Load())/float64(2*b.N), "requests/round")
}
