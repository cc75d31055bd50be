package batch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// Sizes of the concurrency specs: small enough for Azurite on a shared machine.
const (
	isolationRows        = 20
	isolationGenerations = 25
	maxReads             = 2000
	concurrentWriters    = 4
	batchesPerWriter     = 6
	counterRows          = 10
)

// generationOps moves every row of the partition to generation g in one transaction:
// a merge of each row, the insert of marker g and the delete of marker g-1.
func generationOps(g int) []api.BatchOp {
	ops := make([]api.BatchOp, 0, isolationRows+2)
	for i := range isolationRows {
		ops = append(ops, mergeOp(fmt.Sprintf("row%02d", i), "Gen", api.Int32(int32(g))))
	}
	ops = append(ops, insertOp(fmt.Sprintf("marker%03d", g), "Gen", api.Int32(int32(g))))
	return append(ops, deleteOp(fmt.Sprintf("marker%03d", g-1)))
}

// checkGeneration returns what is wrong with one page of the partition: every row and
// the one marker must show the same generation.
func checkGeneration(page []api.Entity) string {
	if len(page) != isolationRows+1 {
		return fmt.Sprintf("%d entities instead of %d rows and one marker: %s", len(page), isolationRows, KeyList(page))
	}
	gen := page[0].Properties["Gen"]
	for _, e := range page {
		if !e.Properties["Gen"].Equal(gen) {
			return fmt.Sprintf("(%q,%q) shows Gen %s while (%q,%q) shows %s", e.PartitionKey, e.RowKey, e.Properties["Gen"], page[0].PartitionKey, page[0].RowKey, gen)
		}
	}
	return ""
}

var _ = framework.Describe("Entity group transaction isolation", func(f *framework.F) {
	f.It("batch.isolation", "never shows a concurrent reader part of a transaction", func(ctx context.Context) {
		b, table := transactionTable(ctx, f)
		initial := make([]api.Entity, 0, isolationRows+1)
		for i := range isolationRows {
			initial = append(initial, entity(fmt.Sprintf("row%02d", i), "Gen", api.Int32(0)))
		}
		seed(ctx, b, table, append(initial, entity("marker000", "Gen", api.Int32(0)))...)

		var done atomic.Bool
		var reads atomic.Int64
		violations := make(chan string, 1)
		firstRead := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() && reads.Load() < maxReads && ctx.Err() == nil {
				page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p'"})
				if reads.Add(1) == 1 {
					close(firstRead)
				}
				if err != nil {
					continue
				}
				if !page.Continuation.IsZero() {
					continue // a partial page proves nothing either way
				}
				if bad := checkGeneration(page.Entities); bad != "" {
					select {
					case violations <- bad:
					default:
					}
					return
				}
			}
		}()
		select { // the writer starts once the reader runs, so that the two overlap
		case <-firstRead:
		case <-ctx.Done():
		}
		var writeErr error
		for g := 1; g <= isolationGenerations && writeErr == nil; g++ {
			_, writeErr = b.SubmitBatch(ctx, table, generationOps(g))
		}
		done.Store(true)
		wg.Wait()
		Expect(writeErr).To(SucceedOnBackend(), "a transaction of the writer")
		select {
		case bad := <-violations:
			Fail("a reader saw part of a transaction: " + bad)
		default:
		}
		Expect(reads.Load()).To(BeNumerically(">", 0), "the reader never ran")
		Expect(checkGeneration(snapshot(ctx, b, table))).To(BeEmpty(), "the final state")
	})

	f.It("batch.concurrent", "applies each of several concurrent conditional transactions wholly or not at all", func(ctx context.Context) {
		b, table := transactionTable(ctx, f)
		rows := make([]api.Entity, counterRows)
		for i := range rows {
			rows[i] = entity(fmt.Sprintf("c%02d", i), "Count", api.Int32(0))
		}
		seed(ctx, b, table, rows...)

		var committed atomic.Int64
		errs := make(chan error, concurrentWriters*batchesPerWriter)
		var wg sync.WaitGroup
		for range concurrentWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range batchesPerWriter {
					page, err := b.QueryEntities(ctx, table, api.Query{})
					if err != nil {
						errs <- err
						return
					}
					ops := make([]api.BatchOp, 0, len(page.Entities))
					for _, e := range page.Entities {
						n := e.Properties["Count"].Int()
						ops = append(ops, withIfMatch(mergeOp(e.RowKey, "Count", api.Int32(int32(n+1))), e.ETag))
					}
					_, err = b.SubmitBatch(ctx, table, ops)
					switch e, ok := driver.AsError(err); {
					case err == nil:
						committed.Add(1)
					case ok && e.Status == 412:
						// another writer won this round
					default:
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).To(SucceedOnBackend(), "a writer's query or transaction")
		}
		n := committed.Load()
		// Of each round's writers, the first to submit holds ETags nothing has changed since its
		// query returned them: that none ever commits says the ETags a query hands out are not
		// the current ones, which is concurrency.current-etag's subject.
		f.Requires(scenario.RuleCurrentETag, "a transaction conditioned on the ETags a query just returned commits", func() {
			Expect(n).To(BeNumerically(">", 0), "no transaction committed")
		})
		for _, e := range snapshot(ctx, b, table) {
			Expect(e.Properties["Count"]).To(Equal(api.Int32(int32(n))),
				"%d transactions committed, each adding 1 to every row, but (%q,%q) counts %s", n, e.PartitionKey, e.RowKey, e.Properties["Count"])
		}
	})
})
