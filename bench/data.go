package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Property names of the synthetic records.
const (
	propData     = "Data"     // Edm.String, the payload, derived from the keys
	propSeq      = "Seq"      // Edm.Int64, the record number
	propBase     = "Base"     // Edm.Boolean, set by the load; a Replace removes it
	propTouched  = "Touched"  // Edm.Boolean, set by Merge and Upsert
	propReplaced = "Replaced" // Edm.Boolean, set by Replace
)

// loaders is how many transactions a load keeps in flight.
const loaders = 4

// dataset is a synthetic data set: records numbered 0..records-1 dealt round-robin to
// partitions, each with a payload of a given size. Record i lives in partition i%partitions
// at row i/partitions, so that a partition's rows are contiguous in key order.
type dataset struct {
	records    int
	partitions int
	payload    int
}

func (d dataset) pk(p int) string   { return fmt.Sprintf("p%04d", p) }
func (d dataset) rk(row int) string { return fmt.Sprintf("r%08d", row) }

func (d dataset) rowsIn(p int) int {
	n := d.records / d.partitions
	if p < d.records%d.partitions {
		n++
	}
	return n
}

func (d dataset) key(i int) (string, string) { return d.pk(i % d.partitions), d.rk(i / d.partitions) }

func (d dataset) index(pk, rk string) (int, bool) {
	var p, r int
	if _, err := fmt.Sscanf(pk, "p%04d", &p); err != nil {
		return 0, false
	}
	if _, err := fmt.Sscanf(rk, "r%08d", &r); err != nil {
		return 0, false
	}
	return r*d.partitions + p, true
}

func (d dataset) entity(i int) api.Entity {
	pk, rk := d.key(i)
	return api.NewEntity(pk, rk, map[string]api.Value{
		propData: api.String(payload(pk, rk, d.payload)),
		propSeq:  api.Int64(int64(i)),
		propBase: api.Bool(true),
	})
}

// payload returns size bytes derived from the keys: the keys first, then filler, so that
// an entity with another's payload is caught.
func payload(pk, rk string, size int) string {
	var b strings.Builder
	b.Grow(size)
	b.WriteString(pk)
	b.WriteByte('/')
	b.WriteString(rk)
	b.WriteByte(':')
	for b.Len() < size {
		b.WriteByte(byte('a' + b.Len()%26))
	}
	return b.String()[:size]
}

// load inserts the data set with entity group transactions, loaders at a time.
func (d dataset) load(ctx context.Context, b api.Backend, table string) error {
	return loadPartitions(ctx, b, table, d.partitions, func(p int) []api.Entity {
		rows := d.rowsIn(p)
		es := make([]api.Entity, rows)
		for r := 0; r < rows; r++ {
			es[r] = d.entity(r*d.partitions + p)
		}
		return es
	})
}

// loadPartitions inserts the entities that part returns for each of n partitions (each of
// one PartitionKey), in transactions of at most spec.MaxBatchOperations, loaders at a time.
func loadPartitions(ctx context.Context, b api.Backend, table string, n int, part func(p int) []api.Entity) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	errc := make(chan error, loaders)
	var wg sync.WaitGroup
	for range loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range jobs {
				if err := insertBatches(ctx, b, table, part(p)); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for p := 0; p < n; p++ {
		select {
		case jobs <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	if len(errs) == 0 && ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// insertBatches inserts es, all of one partition, in transactions of at most
// spec.MaxBatchOperations operations.
func insertBatches(ctx context.Context, b api.Backend, table string, es []api.Entity) error {
	for start := 0; start < len(es); start += spec.MaxBatchOperations {
		chunk := es[start:min(start+spec.MaxBatchOperations, len(es))]
		ops := make([]api.BatchOp, len(chunk))
		for i, e := range chunk {
			ops[i] = api.BatchOp{Kind: api.BatchInsert, Entity: e}
		}
		if _, err := b.SubmitBatch(ctx, table, ops); err != nil {
			return fmt.Errorf("insert %d entities of partition %q: %w", len(chunk), chunk[0].PartitionKey, err)
		}
	}
	return nil
}

// checkRecord checks that got is record i as loaded: its keys always, its payload and
// sequence number when deep.
func (d dataset) checkRecord(got api.Entity, i int, deep bool) error {
	pk, rk := d.key(i)
	if got.PartitionKey != pk || got.RowKey != rk {
		return wrong("asked for (%s, %s), got (%s, %s)", pk, rk, got.PartitionKey, got.RowKey)
	}
	if !deep {
		return nil
	}
	if v, ok := got.Properties[propSeq]; !ok || v.Type != api.EdmInt64 || v.Int() != int64(i) {
		return wrong("(%s, %s): %s is %v, want Int64 %d", pk, rk, propSeq, got.Properties[propSeq], i)
	}
	if v := got.Properties[propData]; v.Str != payload(pk, rk, d.payload) {
		return wrong("(%s, %s): %s differs from what was written (%d bytes, want %d)", pk, rk, propData, len(v.Str), d.payload)
	}
	return nil
}

// checkPage checks that es are records of partition p with rows from row on, in key order
// and complete: es[k] must be row+k.
func (d dataset) checkRun(es []api.Entity, p, row int, deep bool) error {
	for k, e := range es {
		if err := d.checkRecord(e, (row+k)*d.partitions+p, deep && k%sampleEvery == 0); err != nil {
			return err
		}
	}
	return nil
}

// checkKeyOrder checks that es are in strictly increasing key order, after prev (nil: no
// predecessor).
func checkKeyOrder(es []api.Entity, prev *api.Key) error {
	for i := range es {
		k := es[i].Key()
		if prev != nil && !prev.Less(k) {
			return wrong("results out of key order: (%s, %s) after (%s, %s)", k.PartitionKey, k.RowKey, prev.PartitionKey, prev.RowKey)
		}
		prev = &k
	}
	return nil
}

// scanAll follows continuations of q until the last page and returns every entity. A
// backend that keeps returning continuations fails after maxPages pages.
func scanAll(ctx context.Context, b api.Backend, table string, q api.Query, maxPages int) ([]api.Entity, int, error) {
	var all []api.Entity
	for pages := 1; ; pages++ {
		page, err := b.QueryEntities(ctx, table, q)
		if err != nil {
			return all, pages, err
		}
		all = append(all, page.Entities...)
		if page.Continuation.IsZero() {
			return all, pages, nil
		}
		if pages >= maxPages {
			return all, pages, wrong("query %q still continues after %d pages (%d entities)", q.Filter, pages, len(all))
		}
		q.Continuation = page.Continuation
	}
}

func sizeName(n int) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// statusOf returns the HTTP status of a service error, 0 for any other error.
func statusOf(err error) int {
	var se *spec.Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
