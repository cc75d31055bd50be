package parallel

import (
	"context"
	"fmt"
	"sort"
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

// Sizes: workers goroutines of at most opsPerWorker operations each.
const (
	workers      = 8
	opsPerWorker = 50
	partitions   = 8
	perPartition = 40
	racers       = 8
	increments   = 6
	maxAttempts  = 200
	pageSize     = 7
)

// fanOut runs work(i) for i in 0..n-1 on n goroutines and returns the first error.
func fanOut(n int, work func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = work(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func partitionKey(i int) string { return fmt.Sprintf("part%02d", i) }
func rowKey(i int) string       { return fmt.Sprintf("row%03d", i) }

// load stores partitions × perPartition entities, one partition per goroutine.
func load(ctx context.Context, b api.Backend, table string) {
	GinkgoHelper()
	err := fanOut(partitions, func(p int) error {
		for r := range perPartition {
			e := api.NewEntity(partitionKey(p), rowKey(r), map[string]api.Value{"P": api.Int32(int32(p)), "R": api.Int32(int32(r)), "Even": api.Bool(r%2 == 0)})
			if _, err := b.InsertEntity(ctx, table, e); err != nil {
				return fmt.Errorf("insert %s: %w", e, err)
			}
		}
		return nil
	})
	framework.Requires("modify.insert.stores", fmt.Sprintf("load %d partitions", partitions), func() {
		Expect(err).To(SucceedOnBackend(), "setting up: load %d partitions", partitions)
	})
}

// queryAll follows a query to its end (bounded).
func queryAll(ctx context.Context, b api.Backend, table string, q api.Query) ([]api.Entity, error) {
	var all []api.Entity
	for range MaxScanPages {
		p, err := b.QueryEntities(ctx, table, q)
		if err != nil {
			return all, err
		}
		all = append(all, p.Entities...)
		if p.Continuation.IsZero() {
			return all, nil
		}
		q.Continuation = p.Continuation
	}
	return all, fmt.Errorf("query %q still had a continuation after %d pages", q.Filter, MaxScanPages)
}

// parallelUnion runs one query per partition at once, with the extra filter, and returns
// the union sorted by key.
func parallelUnion(ctx context.Context, b api.Backend, table, extra string, top int) ([]api.Entity, error) {
	results := make([][]api.Entity, partitions)
	err := fanOut(partitions, func(p int) error {
		filter := fmt.Sprintf("PartitionKey eq '%s'", partitionKey(p))
		if extra != "" {
			filter += " and " + extra
		}
		var err error
		results[p], err = queryAll(ctx, b, table, api.Query{Filter: filter, Top: api.OptionalTop(top)})
		return err
	})
	var union []api.Entity
	for _, r := range results {
		union = append(union, r...)
	}
	sort.Slice(union, func(i, j int) bool { return union[i].Key().Less(union[j].Key()) })
	return union, err
}

var _ = framework.Describe("Asynchronous and parallel operations", func(f *framework.F) {
	Context("with queries over many partitions", func() {
		f.It("parallel.query.equivalent", "returns in parallel what one serial query returns", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			load(ctx, b, table)
			serial, err := queryAll(ctx, b, table, api.Query{})
			Expect(err).To(SucceedOnBackend())
			Expect(serial).To(HaveLen(partitions*perPartition), "entities of the serial query")
			union, err := parallelUnion(ctx, b, table, "", 0)
			Expect(err).To(SucceedOnBackend())
			Expect(StateDiff(serial, union)).To(BeEmpty(), "parallel results against serial ones")
			Expect(union).To(HaveLen(len(serial)), "entities of the parallel queries")
		})

		f.It("parallel.query.equivalent", "returns in parallel what one serial filtered query returns", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			load(ctx, b, table)
			serial, err := queryAll(ctx, b, table, api.Query{Filter: "Even eq true and R ge 10"})
			Expect(err).To(SucceedOnBackend())
			Expect(serial).NotTo(BeEmpty(), "entities of the serial filtered query")
			union, err := parallelUnion(ctx, b, table, "Even eq true and R ge 10", 0)
			Expect(err).To(SucceedOnBackend())
			Expect(StateDiff(serial, union)).To(BeEmpty(), "parallel results against serial ones")
			Expect(union).To(HaveLen(len(serial)), "entities of the parallel queries")
		})

		f.It("parallel.query.paged", "returns every partition whole when the queries page concurrently", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			load(ctx, b, table)
			// The subject is concurrent paging: a backend that never pages blocks the spec.
			scenario.RequirePaging(ctx, f, b, table, api.Query{Top: api.TopOf(pageSize)}, partitions*perPartition)
			union, err := parallelUnion(ctx, b, table, "", pageSize)
			Expect(err).To(SucceedOnBackend())
			Expect(union).To(HaveLen(partitions*perPartition), "the paged queries returned %d entities", len(union))
			for i := 1; i < len(union); i++ {
				Expect(union[i].Key()).NotTo(Equal(union[i-1].Key()), "entity (%q,%q) came back twice", union[i].PartitionKey, union[i].RowKey)
			}
		})
	})

	Context("with concurrent writers", func() {
		f.It("parallel.insert.durable", fmt.Sprintf("stores every insert acknowledged to %d writers", workers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			acked := make([][]api.Entity, workers)
			err := fanOut(workers, func(w int) error {
				for i := range opsPerWorker {
					// Writers share partitions so that they contend.
					e := api.NewEntity(partitionKey(i%2), fmt.Sprintf("w%d-%03d", w, i), map[string]api.Value{"W": api.Int32(int32(w)), "I": api.Int32(int32(i))})
					if _, err := b.InsertEntity(ctx, table, e); err != nil {
						return err
					}
					acked[w] = append(acked[w], e)
				}
				return nil
			})
			Expect(err).To(SucceedOnBackend())
			var want []api.Entity
			for _, a := range acked {
				want = append(want, a...)
			}
			Expect(table).To(HoldExactly(ctx, b, want...))
		})

		for _, mode := range []api.UpdateMode{api.Replace, api.Merge} {
			f.It("parallel.upsert.durable", fmt.Sprintf("keeps the last acknowledged insert-or-%s of every entity", mode), func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				const keysPerWorker = 5
				last := make([]map[string]api.Entity, workers)
				err := fanOut(workers, func(w int) error {
					last[w] = map[string]api.Entity{}
					for i := range opsPerWorker {
						rk := fmt.Sprintf("w%d-k%d", w, i%keysPerWorker)
						e := api.NewEntity("shared", rk, map[string]api.Value{"Seq": api.Int32(int32(i))})
						if _, err := b.UpdateEntity(ctx, table, e, mode, ""); err != nil {
							return err
						}
						last[w][rk] = e
					}
					return nil
				})
				Expect(err).To(SucceedOnBackend())
				var want []api.Entity
				for _, m := range last {
					for _, e := range m {
						want = append(want, e)
					}
				}
				Expect(table).To(HoldExactly(ctx, b, want...))
			})
		}
	})

	Context("with concurrent writes of one entity", func() {
		f.It("parallel.insert.once", fmt.Sprintf("lets exactly one of %d concurrent inserts succeed", racers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			errs := make([]error, racers)
			_ = fanOut(racers, func(i int) error {
				_, errs[i] = b.InsertEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"By": api.Int32(int32(i))}))
				return nil
			})
			winner := -1
			for i, err := range errs {
				if err == nil {
					Expect(winner).To(Equal(-1), "inserts %d and %d both succeeded", winner, i)
					winner = i
					continue
				}
				Expect(err).To(HaveFailedWith(409, "EntityAlreadyExists"), "a losing insert")
			}
			Expect(winner).NotTo(Equal(-1), "no insert succeeded")
			Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "r", map[string]api.Value{"By": api.Int32(int32(winner))})))
		})

		f.It("parallel.delete.once", fmt.Sprintf("lets exactly one of %d concurrent deletes succeed", racers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", nil))
			Expect(err).To(SucceedOnBackend())
			errs := make([]error, racers)
			_ = fanOut(racers, func(i int) error {
				errs[i] = b.DeleteEntity(ctx, table, "p", "r", api.IfMatchAny)
				return nil
			})
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
					continue
				}
				Expect(err).To(HaveFailedWith(404), "a losing delete")
			}
			Expect(won).To(Equal(1), "%d of %d deletes succeeded", won, racers)
		})

		f.It("parallel.merge.counter", fmt.Sprintf("converges to %d increments from %d writers retrying on 412", racers*increments, racers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(0), "Other": api.String("kept")}))
			Expect(err).To(SucceedOnBackend())
			var acked, conflicts atomic.Int64
			err = fanOut(racers, func(int) error {
				for range increments {
					done := false
					for attempt := 0; !done; attempt++ {
						if attempt == maxAttempts {
							return fmt.Errorf("an increment still conflicted after %d attempts", maxAttempts)
						}
						cur, err := b.GetEntity(ctx, table, "p", "counter", nil)
						if err != nil {
							return err
						}
						next := api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(cur.Properties["N"].Int() + 1)})
						_, err = b.UpdateEntity(ctx, table, next, api.Merge, cur.ETag)
						if e, ok := driver.AsError(err); ok && e.Status == 412 {
							conflicts.Add(1)
							continue
						}
						if err != nil {
							return err
						}
						acked.Add(1)
						done = true
					}
				}
				return nil
			})
			Expect(err).To(SucceedOnBackend())
			AddReportEntry("conflicts", conflicts.Load(), ReportEntryVisibilityFailureOrVerbose)
			Expect(acked.Load()).To(BeEquivalentTo(racers*increments), "acknowledged increments")
			Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(acked.Load()), "Other": api.String("kept")})))
		})

		f.It("parallel.merge.disjoint", fmt.Sprintf("keeps the properties that %d concurrent merges set", workers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "wide", map[string]api.Value{"Base": api.Bool(true)}))
			Expect(err).To(SucceedOnBackend())
			const rounds = 5
			err = fanOut(workers, func(w int) error {
				for i := range rounds {
					e := api.NewEntity("p", "wide", map[string]api.Value{fmt.Sprintf("W%d", w): api.Int32(int32(i))})
					mode := api.IfMatchAny
					if i%2 == 1 {
						mode = "" // insert-or-merge
					}
					if _, err := b.UpdateEntity(ctx, table, e, api.Merge, mode); err != nil {
						return err
					}
				}
				return nil
			})
			Expect(err).To(SucceedOnBackend())
			want := map[string]api.Value{"Base": api.Bool(true)}
			for w := range workers {
				want[fmt.Sprintf("W%d", w)] = api.Int32(rounds - 1)
			}
			Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "wide", want)))
		})

		f.It("parallel.etag.distinct", fmt.Sprintf("returns a different ETag to each of %d concurrent writes", workers*5), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", nil))
			Expect(err).To(SucceedOnBackend())
			var mu sync.Mutex
			seen := map[string]string{}
			var dup string
			err = fanOut(workers, func(w int) error {
				for i := range 5 {
					etag, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"W": api.Int32(int32(w)), "I": api.Int32(int32(i))}), api.Replace, api.IfMatchAny)
					if err != nil {
						return err
					}
					mu.Lock()
					who := fmt.Sprintf("write %d of writer %d", i, w)
					if prev, ok := seen[etag]; ok && dup == "" {
						dup = fmt.Sprintf("%s and %s both returned ETag %s", prev, who, etag)
					}
					seen[etag] = who
					mu.Unlock()
				}
				return nil
			})
			Expect(err).To(SucceedOnBackend())
			Expect(dup).To(BeEmpty(), "two writes got the same ETag")
		})
	})
})
