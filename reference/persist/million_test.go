package persist

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/api"
)

// fillMillion writes n entities (in transactions of 100, over 10 partitions) into a new
// Store in dir and leaves them in its log, or in a snapshot when snapshot is set.
func fillMillion(tb testing.TB, dir string, n int, snapshot bool) {
	tb.Helper()
	s := open(tb, dir, WithSync(SyncNone), WithSnapshotEvery(0))
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := s.CreateTable(c, "million"); err != nil {
		tb.Fatal(err)
	}
	ops := make([]api.BatchOp, 0, 100)
	for i := 0; i < n; i += 100 {
		ops = ops[:0]
		pk := fmt.Sprintf("p%02d", (i/100)%10)
		for j := i; j < min(i+100, n); j++ {
			ops = append(ops, api.BatchOp{Kind: api.BatchInsert, Entity: api.NewEntity(pk, fmt.Sprintf("r%08d", j), map[string]api.Value{
				"name": api.String(fmt.Sprintf("entity %d", j)), "n": api.Int64(int64(j)), "at": api.DateTime(time.Unix(int64(j), 0)),
			})})
		}
		if _, err := s.SubmitBatch(c, "million", ops); err != nil {
			tb.Fatal(err)
		}
	}
	if snapshot {
		if err := s.Close(); err != nil {
			tb.Fatal(err)
		}
		return
	}
	s.abandon()
}

// TestRestartWithAMillionEntities measures how long Open takes to restore one million
// entities, from the log alone and from a snapshot. It runs only with
// CONFORM_PERSIST_MILLION=1 (it takes about a minute and a few GiB); the figures are
// logged.
func TestRestartWithAMillionEntities(t *testing.T) {
	if os.Getenv("CONFORM_PERSIST_MILLION") != "1" {
		t.Skip("set CONFORM_PERSIST_MILLION=1 to measure a restart with one million entities")
	}
	const n = 1_000_000
	for _, snapshot := range []bool{false, true} {
		dir := t.TempDir()
		fillMillion(t, dir, n, snapshot)
		start := time.Now()
		s := open(t, dir)
		elapsed := time.Since(start)
		st := s.Stats()
		got := st.SnapshotEntities
		if !snapshot {
			got = (st.LogRecords - 1) * 100
		}
		if got != n {
			t.Errorf("restored %d entities (%+v), want %d", got, st, n)
		}
		from := "the log (10,000 transaction records)"
		if snapshot {
			from = "a snapshot"
		}
		t.Logf("restart with %d entities from %s: %v", n, from, elapsed.Round(time.Millisecond))
		s.abandon()
	}
}

// BenchmarkRestart reports the time to reopen a Store of 100,000 entities.
func BenchmarkRestart(b *testing.B) {
	const n = 100_000
	for _, snapshot := range []bool{false, true} {
		name := "log"
		if snapshot {
			name = "snapshot"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			fillMillion(b, dir, n, snapshot)
			b.ResetTimer()
			for range b.N {
				s := open(b, dir)
				s.abandon()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/entity")
		})
	}
}
