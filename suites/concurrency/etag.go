package concurrency

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// op is a conditional write of entity ("p","r") with an If-Match value.
type op struct {
	name string
	do   func(ctx context.Context, b api.Backend, table, ifMatch string) error
}

var (
	replaceOp = op{"replace", func(ctx context.Context, b api.Backend, table, ifMatch string) error {
		_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"By": api.String("replace")}), api.Replace, ifMatch)
		return err
	}}
	mergeOp = op{"merge", func(ctx context.Context, b api.Backend, table, ifMatch string) error {
		_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"By": api.String("merge")}), api.Merge, ifMatch)
		return err
	}}
	deleteOp = op{"delete", func(ctx context.Context, b api.Backend, table, ifMatch string) error {
		return b.DeleteEntity(ctx, table, "p", "r", ifMatch)
	}}
)

// original is the entity every spec starts from.
func original() api.Entity {
	return api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(1), "Note": api.String("first")})
}

// insertOriginal stores original() and returns its ETag.
func insertOriginal(ctx context.Context, b api.Backend, table string) string {
	GinkgoHelper()
	var etag string
	framework.Requires("modify.insert.stores", "insert the spec's entity", func() {
		got, err := b.InsertEntity(ctx, table, original())
		Expect(err).To(SucceedOnBackend(), "setting up: insert %s", original())
		etag = got.ETag
	})
	return etag
}

// staleBy names a write that makes an earlier ETag stale.
type staleBy struct {
	name string
	// rule covers the write itself: the spec relies on it (a precondition).
	rule  string
	write func(ctx context.Context, b api.Backend, table string) (api.Entity, error)
}

var staleWrites = []staleBy{
	{"after a replace", "modify.replace.removes-omitted", func(ctx context.Context, b api.Backend, table string) (api.Entity, error) {
		e := api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(2)})
		_, err := b.UpdateEntity(ctx, table, e, api.Replace, api.IfMatchAny)
		return e, err
	}},
	{"after a merge", "modify.merge.keeps-omitted", func(ctx context.Context, b api.Backend, table string) (api.Entity, error) {
		_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(2)}), api.Merge, api.IfMatchAny)
		return original().With("Version", api.Int32(2)), err
	}},
	{"after an insert-or-merge that changes nothing", "modify.insert-or-merge.merges", func(ctx context.Context, b api.Backend, table string) (api.Entity, error) {
		_, err := b.UpdateEntity(ctx, table, api.NewEntity("p", "r", nil), api.Merge, "")
		return original(), err
	}},
}

var _ = framework.Describe("Optimistic concurrency", func(f *framework.F) {
	for _, o := range []op{replaceOp, mergeOp, deleteOp} {
		rule := "concurrency.stale-etag." + o.name
		for _, s := range staleWrites {
			f.It(rule, fmt.Sprintf("refuses a %s with an ETag made stale %s with 412 UpdateConditionNotSatisfied and changes nothing", o.name, s.name), func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				stale := insertOriginal(ctx, b, table)
				var current api.Entity
				f.Requires(s.rule, "the write that makes the ETag stale "+s.name, func() {
					var err error
					current, err = s.write(ctx, b, table)
					Expect(err).To(SucceedOnBackend(), "setting up: the write that makes the ETag stale")
					Expect(table).To(HoldExactly(ctx, b, current), "setting up: the write that makes the ETag stale")
				})
				// Two reads before the refused write: when they disagree, the backend's reads
				// give a fresh ETag (entities.reads.stable's subject), and the ETag cannot show
				// whether the refused write changed anything; the entity still does.
				before, err := b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
				currentETag, err := b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
				Expect(o.do(ctx, b, table, stale)).To(HaveFailedWith(412, "UpdateConditionNotSatisfied"),
					"a %s with If-Match %s, the ETag from before the write", o.name, stale)
				Expect(table).To(HoldExactly(ctx, b, current))
				got, err := b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
				if before.ETag == currentETag.ETag {
					Expect(got.ETag).To(Equal(currentETag.ETag), "the refused %s changed the ETag (two reads before it agreed on it)", o.name)
				}
			})
		}
	}

	// ETag sources: every operation that hands out an ETag hands out one that matches.
	sources := []struct {
		name string
		etag func(ctx context.Context, b api.Backend, table string) string
	}{
		{"returned by the insert", func(ctx context.Context, b api.Backend, table string) string {
			return insertOriginal(ctx, b, table)
		}},
		{"read by Get Entity", func(ctx context.Context, b api.Backend, table string) string {
			insertOriginal(ctx, b, table)
			got, err := b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(SucceedOnBackend())
			return got.ETag
		}},
		{"read by a query", func(ctx context.Context, b api.Backend, table string) string {
			insertOriginal(ctx, b, table)
			page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p' and RowKey eq 'r'"})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(HaveLen(1), "the point query returned %s", KeyList(page.Entities))
			return page.Entities[0].ETag
		}},
		{"returned by the previous merge", func(ctx context.Context, b api.Backend, table string) string {
			insertOriginal(ctx, b, table)
			etag, err := scenario.UpdateAny(ctx, b, table, api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(2)}), api.Merge)
			Expect(err).To(SucceedOnBackend())
			return etag
		}},
	}
	for _, o := range []op{replaceOp, mergeOp, deleteOp} {
		for _, s := range sources {
			f.It("concurrency.current-etag", fmt.Sprintf("accepts a %s whose If-Match is the current ETag %s", o.name, s.name), func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				etag := s.etag(ctx, b, table)
				Expect(etag).NotTo(BeEmpty(), "no ETag came back")
				Expect(o.do(ctx, b, table, etag)).To(SucceedOnBackend(), "a %s with If-Match %s", o.name, etag)
				if o.name == "delete" {
					Expect(table).To(LackEntity(ctx, b, "p", "r"))
				} else {
					Expect(table).To(HoldProperty(ctx, b, "p", "r", "By", api.String(o.name)), "the %s was acknowledged", o.name)
				}
			})
		}
	}

	for _, o := range []op{replaceOp, mergeOp, deleteOp} {
		f.It("concurrency.if-match-any", fmt.Sprintf("accepts a %s with If-Match * after the entity changed twice", o.name), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			insertOriginal(ctx, b, table)
			for v := int32(2); v <= 3; v++ {
				_, err := b.UpdateEntity(ctx, table, original().With("Version", api.Int32(v)), api.Replace, api.IfMatchAny)
				Expect(err).To(SucceedOnBackend())
			}
			Expect(o.do(ctx, b, table, api.IfMatchAny)).To(SucceedOnBackend())
			if o.name == "delete" {
				Expect(table).To(LackEntity(ctx, b, "p", "r"))
			}
		})
	}

	Context("without If-Match", func() {
		for _, mode := range []api.UpdateMode{api.Replace, api.Merge} {
			f.It("concurrency.no-if-match.upsert", fmt.Sprintf("applies a %s whatever ETag the entity has", mode), func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				insertOriginal(ctx, b, table)
				_, err := scenario.UpdateAny(ctx, b, table, original().With("Version", api.Int32(2)), api.Replace)
				Expect(err).To(SucceedOnBackend())
				_, err = b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(3)}), mode, "")
				Expect(err).To(SucceedOnBackend(), "an unconditional %s was refused", mode)
				got, err := b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(HaveProperty("Version", api.Int32(3)), "after an unconditional %s", mode)
				// Which other properties the write keeps is the subject of the mode's own rule.
				want, modeRule := api.NewEntity("p", "r", map[string]api.Value{"Version": api.Int32(3)}), "modify.replace.removes-omitted"
				if mode == api.Merge {
					want, modeRule = original().With("Version", api.Int32(3)), "modify.merge.keeps-omitted"
				}
				f.Requires(modeRule, fmt.Sprintf("the unconditional %s keeps the properties a %s keeps", mode, mode), func() {
					Expect(table).To(HoldExactly(ctx, b, want))
				})
			})
		}
	})

	Context("when the entity was deleted and inserted again", func() {
		for _, o := range []op{replaceOp, mergeOp, deleteOp} {
			f.It("concurrency.etag.recreated", fmt.Sprintf("refuses a %s with the old entity's ETag with 412", o.name), func(ctx context.Context) {
				b, table := f.Backend(), f.NewTable(ctx)
				old := insertOriginal(ctx, b, table)
				Expect(scenario.DeleteAny(ctx, b, table, "p", "r")).To(SucceedOnBackend())
				_, err := b.InsertEntity(ctx, table, original())
				Expect(err).To(SucceedOnBackend())
				err = o.do(ctx, b, table, old)
				Expect(err).To(HaveFailedWith(412))
				requireStaleCode(f, o, err)
				Expect(table).To(HoldExactly(ctx, b, original()))
			})
		}
	})
})

// race runs n copies of write at once and returns their errors.
func race(n int, write func() error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = write()
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// racers is the number of concurrent writers in a race.
const racers = 6

var _ = framework.Describe("Managing concurrency", func(f *framework.F) {
	for _, o := range []op{replaceOp, mergeOp, deleteOp} {
		f.It("concurrency.single-winner", fmt.Sprintf("lets exactly one of %d concurrent %ss with the same ETag succeed", racers, o.name), func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			etag := insertOriginal(ctx, b, table)
			errs := race(racers, func() error { return o.do(ctx, b, table, etag) })
			won := 0
			for _, err := range errs {
				if err == nil {
					won++
					continue
				}
				if o.name == "delete" {
					// A loser may find the entity already gone: 404 is as right as 412.
					Expect(err).To(HaveFailedWithStatusIn([]int{404, 412}), "a losing delete")
					continue
				}
				Expect(err).To(HaveFailedWith(412), "a losing %s", o.name)
				requireStaleCode(f, o, err)
			}
			Expect(won).To(Equal(1), "%d of %d concurrent %ss with If-Match %s succeeded", won, racers, o.name, etag)
		})
	}

	f.It("concurrency.single-winner", "lets exactly one of a concurrent replace and merge with the same ETag succeed", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		etag := insertOriginal(ctx, b, table)
		writers := []op{replaceOp, mergeOp, replaceOp, mergeOp}
		errs := make([]error, len(writers))
		var wg sync.WaitGroup
		for i, o := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = o.do(ctx, b, table, etag)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				Expect(err).To(HaveFailedWith(412), "a losing write")
				requireStaleCode(f, replaceOp, err)
			}
		}
		Expect(won).To(Equal(1), "%d of %d concurrent writes with If-Match %s succeeded", won, len(writers), etag)
	})
})

// requireStaleCode is the precondition of a spec whose subject is a write refused with 412
// for another reason than a stale ETag alone: the refusal of o carries the code
// UpdateConditionNotSatisfied, the subject of o's stale-ETag rule.
func requireStaleCode(f *framework.F, o op, err error) {
	GinkgoHelper()
	f.Requires("concurrency.stale-etag."+o.name, "the refused "+o.name+" reports UpdateConditionNotSatisfied", func() {
		Expect(err).To(HaveFailedWith(412, "UpdateConditionNotSatisfied"), "the refused %s", o.name)
	})
}
