package parallel

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"sort"
	"strings"
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
	// raceRounds is how many times the race specs start their writers together. An update
	// that reads, checks and writes without a lock loses a write in a round only when two
	// writers' reads fall before either write; with this many rounds the specs catch such a
	// backend in at least 99 of 100 runs (TestRaceRulesCatchUnlockedReadModifyWrite in
	// suites/all measures it).
	raceRounds = 40
	pageSize   = 7
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

// raceRoundsOf runs rounds of n writers. In each round every writer first prepares its
// write (prepare(i) reads what the write depends on); once all have prepared, all of them
// are released at once to send it, so that the writes contend as closely as the clients
// can make them. It returns the first error of a round, which ends the race.
func raceRoundsOf(ctx context.Context, rounds, n int, prepare func(i int) (func() error, error)) error {
	for range rounds {
		writes := make([]func() error, n)
		if err := fanOut(n, func(i int) (err error) {
			writes[i], err = prepare(i)
			return err
		}); err != nil {
			return err
		}
		// The writers wait for the start running, not parked: a parked goroutine is woken
		// one at a time, after the first ones released may have finished.
		var start atomic.Bool
		var ready, done sync.WaitGroup
		ready.Add(n)
		errs := make([]error, n)
		for i := range n {
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				for !start.Load() {
					if ctx.Err() != nil {
						errs[i] = ctx.Err()
						return
					}
					runtime.Gosched()
				}
				errs[i] = writes[i]()
			}()
		}
		ready.Wait()
		start.Store(true)
		done.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// raceAttempts says how many times a race spec raced, for the report.
func raceAttempts(rounds, writers int) string {
	return fmt.Sprintf("%d rounds of %d concurrent writers (%d writes)", rounds, writers, rounds*writers)
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
	// The inserts ran concurrently: that each acknowledged one is stored is the subject of
	// parallel.insert.durable, read back by key so that no query is relied on.
	framework.Requires("parallel.insert.durable", fmt.Sprintf("the %d partitions loaded concurrently are stored", partitions), func() {
		err := fanOut(partitions, func(p int) error {
			for r := range perPartition {
				if _, err := b.GetEntity(ctx, table, partitionKey(p), rowKey(r), nil); err != nil {
					return fmt.Errorf("read back (%q, %q): %w", partitionKey(p), rowKey(r), err)
				}
			}
			return nil
		})
		Expect(err).To(SucceedOnBackend(), "setting up: read back the loaded entities")
	})
}

// queryAll follows a query to its end (bounded).
func queryAll(ctx context.Context, b api.Backend, table string, q api.Query) ([]api.Entity, error) {
	return ReadQuery(ctx, b, table, q, fmt.Sprintf("query %q", q.Filter))
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
			f.Requires("query.table-scan", "a serial query without a filter returns every partition's entities", func() {
				Expect(serial).To(HaveLen(partitions*perPartition), "entities of the serial query")
			})
			union, err := parallelUnion(ctx, b, table, "", 0)
			Expect(err).To(SucceedOnBackend())
			Expect(StateDiff(serial, union)).To(BeEmpty(), "parallel results against serial ones")
			Expect(union).To(HaveLen(len(serial)), "entities of the parallel queries")
		})

		f.It("parallel.query.equivalent", "returns in parallel what one serial filtered query returns", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			load(ctx, b, table)
			for _, c := range []struct{ rule, filter string }{{"query.compare.boolean", "Even eq true"}, {"query.compare.int32", "R ge 10"}} {
				f.Requires(c.rule, "the comparison "+c.filter+" alone selects entities", func() {
					alone, err := queryAll(ctx, b, table, api.Query{Filter: c.filter})
					Expect(err).To(SucceedOnBackend())
					Expect(alone).NotTo(BeEmpty(), "entities of the filter %q", c.filter)
				})
			}
			serial, err := queryAll(ctx, b, table, api.Query{Filter: "Even eq true and R ge 10"})
			Expect(err).To(SucceedOnBackend())
			Expect(serial).NotTo(BeEmpty(), "entities of the serial filtered query")
			f.Requires("query.table-scan", "the serial filtered query reaches every partition", func() {
				reached := map[string]bool{}
				for _, e := range serial {
					reached[e.PartitionKey] = true
				}
				Expect(reached).To(HaveLen(partitions), "partitions of the serial filtered query")
			})
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
			// One partition paged alone: its filter on every page is pagination.options-resent's
			// subject, each of its entities once pagination.exactly-once's.
			alone, err := QueryAll(ctx, b, table, api.Query{Filter: fmt.Sprintf("PartitionKey eq '%s'", partitionKey(0)), Top: api.TopOf(pageSize)}, MaxScanPages)
			Expect(err).To(SucceedOnBackend())
			f.Requires("pagination.options-resent", fmt.Sprintf("every continued page of partition %s alone holds only its entities", partitionKey(0)), func() {
				for _, p := range alone.Pages[1:] {
					for _, e := range p.Entities {
						Expect(e.PartitionKey).To(Equal(partitionKey(0)), "pages of %v", alone.PageSizes())
					}
				}
			})
			var want []api.Key
			for r := range perPartition {
				want = append(want, scenario.Key(partitionKey(0), rowKey(r)))
			}
			scenario.ExpectPagedKeys(f, alone, want, "partition %s paged alone; pages of %v", partitionKey(0), alone.PageSizes())
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

		f.It("parallel.merge.counter", fmt.Sprintf("converges to the acknowledged increments of %d rounds of %d writers racing on one ETag, retrying on 412", raceRounds, racers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			// Each writer adds one to the Int64 it reads back.
			scenario.RequireRoundTrip(ctx, f, b, table, api.Int64(0))
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(0), "Other": api.String("kept")}))
			Expect(err).To(SucceedOnBackend())
			var acked, conflicts atomic.Int64
			// Each round, every writer reads the counter, and all of them send their
			// increment, conditioned on the ETag they read, at once: a backend that checks
			// If-Match apart from the write it guards lets more than one through.
			err = raceRoundsOf(ctx, raceRounds, racers, func(int) (func() error, error) {
				cur, err := b.GetEntity(ctx, table, "p", "counter", nil)
				if err != nil {
					return nil, err
				}
				return func() error {
					next := api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(cur.Properties["N"].Int() + 1)})
					_, err := b.UpdateEntity(ctx, table, next, api.Merge, cur.ETag)
					if e, ok := driver.AsError(err); ok && e.Status == 412 {
						conflicts.Add(1)
						return nil
					}
					if err == nil {
						acked.Add(1)
					}
					return err
				}, nil
			})
			f.Choice("race attempts", raceAttempts(raceRounds, racers))
			Expect(err).To(SucceedOnBackend())
			AddReportEntry("conflicts", conflicts.Load(), ReportEntryVisibilityFailureOrVerbose)
			Expect(acked.Load()).To(BeNumerically(">=", raceRounds), "acknowledged increments: at least one writer of every round wins")
			Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "counter", map[string]api.Value{"N": api.Int64(acked.Load()), "Other": api.String("kept")})))
		})

		f.It("parallel.merge.disjoint", fmt.Sprintf("keeps the properties that %d rounds of %d concurrent merges set", raceRounds, workers), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			// Each round reads back the Boolean and the Int32 values it compares.
			scenario.RequireRoundTrip(ctx, f, b, table, api.Bool(true), api.Int32(0))
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "wide", map[string]api.Value{"Base": api.Bool(true)}))
			Expect(err).To(SucceedOnBackend())
			// The writers merge with If-Match * and by Insert Or Merge: that each succeeds on
			// its own is a precondition (the rounds overwrite what these two set).
			f.Requires("concurrency.if-match-any", "a merge of the entity with If-Match * succeeds", func() {
				_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "wide", map[string]api.Value{"W0": api.Int32(-1)}), api.Merge, api.IfMatchAny)
				Expect(err).To(SucceedOnBackend())
			})
			f.Requires("modify.insert-or-merge.merges", "an Insert Or Merge of the entity succeeds", func() {
				_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "wide", map[string]api.Value{"W1": api.Int32(-1)}), api.Merge, "")
				Expect(err).To(SucceedOnBackend())
			})
			want := map[string]api.Value{"Base": api.Bool(true)}
			var lost string
			for round := range raceRounds {
				// Every writer sets its own property to the round's number, all at once; a
				// merge that writes back a whole entity read before another merge's write
				// loses that write.
				err = raceRoundsOf(ctx, 1, workers, func(w int) (func() error, error) {
					e := api.NewEntity("p", "wide", map[string]api.Value{fmt.Sprintf("W%d", w): api.Int32(int32(round))})
					ifMatch := api.IfMatchAny
					if (round+w)%2 == 1 {
						ifMatch = "" // insert-or-merge
					}
					return func() error {
						_, err := b.UpdateEntity(ctx, table, e, api.Merge, ifMatch)
						return err
					}, nil
				})
				if err != nil {
					break
				}
				for w := range workers {
					want[fmt.Sprintf("W%d", w)] = api.Int32(int32(round))
				}
				got, readErr := b.GetEntity(ctx, table, "p", "wide", nil)
				Expect(readErr).To(SucceedOnBackend(), "reading the entity back after round %d", round+1)
				if diff := EntityDiff(api.NewEntity("p", "wide", maps.Clone(want)), got); len(diff) > 0 {
					lost = fmt.Sprintf("after round %d of %d: %s", round+1, raceRounds, strings.Join(diff, "; "))
					break
				}
			}
			f.Choice("race attempts", raceAttempts(raceRounds, workers))
			Expect(err).To(SucceedOnBackend())
			Expect(lost).To(BeEmpty(), "the merges of one round, each acknowledged, are not all kept")
			Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "wide", want)))
		})

		f.It("parallel.etag.distinct", fmt.Sprintf("returns a different ETag to each of %d concurrent writes", workers*5), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", nil))
			Expect(err).To(SucceedOnBackend())
			// The writers replace with If-Match *: that one such replace succeeds alone is a
			// precondition.
			f.Requires("concurrency.if-match-any", "a replace of the entity with If-Match * succeeds", func() {
				_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", nil), api.Replace, api.IfMatchAny)
				Expect(err).To(SucceedOnBackend())
			})
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
