package limits

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// boundary is one entry of a limit's table: the entity to scenario.Write, built when the spec runs,
// and whether the limit lets it through.
type boundary struct {
	what   string
	entity func() api.Entity
	fits   bool
}

// writeEntries crosses boundaries with writes: one Entry per pair, named
// "<boundary> by <write>", whose parameters are (write, boundary).
func writeEntries(writes []scenario.Write, boundaries ...boundary) []any {
	var out []any
	for _, bd := range boundaries {
		for _, w := range writes {
			out = append(out, Entry(fmt.Sprintf("%s by %s", bd.what, w.Name), w, bd))
		}
	}
	return out
}

// checkWrite writes bd's entity with w. An entity that fits must be stored exactly; one that
// does not must be refused with one of refusal and leave the table as it was. With no
// refusal codes any 400 is accepted and its code recorded.
// A write that needs an existing entity finds one with the same keys and no properties, so
// that the result of a merge is exactly what was sent.
func checkWrite(ctx context.Context, f *framework.F, w scenario.Write, bd boundary, refusal ...spec.ErrorCode) {
	GinkgoHelper()
	b, table := f.Backend(), f.NewTable(ctx)
	e := bd.entity()
	seed := api.NewEntity(e.PartitionKey, e.RowKey, nil)
	if w.Existing {
		_, err := b.InsertEntity(ctx, table, seed)
		Expect(err).To(SucceedOnBackend(), "store the entity that %s changes", w.Name)
	}
	_, err := w.Do(ctx, b, table, e)
	if w.Existing {
		w.RequireMatched(f, err)
	}
	if bd.fits {
		Expect(err).To(SucceedOnBackend(), "%s of an entity %s (accounted size %d bytes)", w.Name, bd.what, api.EntitySize(e))
		got, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
		Expect(err).To(SucceedOnBackend(), "Get Entity after %s", w.Name)
		Expect(got).To(MatchEntity(e))
		return
	}
	f.Check(spec.CheckRefusal, func() {
		if len(refusal) > 0 {
			Expect(err).To(HaveFailedAs(refusal...), "%s of an entity %s (accounted size %d bytes)", w.Name, bd.what, api.EntitySize(e))
		} else {
			Expect(err).To(HaveFailedWithStatus(400), "%s of an entity %s", w.Name, bd.what)
		}
	})
	if len(refusal) == 0 {
		f.Choice("refusal code", OutcomeOf(err))
	}
	expectUnchanged(ctx, b, table, seed, w.Existing)
}

// requireMergeKeeps is the precondition of a spec about what a merge with ifMatch (If-Match
// * or none, Insert Or Merge) would make of the stored entity seed: a merge that sends no
// property succeeds, under the rule of its If-Match, and keeps seed's properties, under the
// rule of the merge. Only then is the merged result the spec counts the one it stores.
func requireMergeKeeps(ctx context.Context, f *framework.F, b api.Backend, table string, seed api.Entity, ifMatch string) {
	GinkgoHelper()
	succeeds, keeps := "concurrency.if-match-any", "modify.merge.keeps-omitted"
	if ifMatch == "" {
		succeeds, keeps = "modify.insert-or-merge.merges", "modify.insert-or-merge.merges"
	}
	empty := api.NewEntity(seed.PartitionKey, seed.RowKey, nil)
	f.Requires(succeeds, fmt.Sprintf("a merge with If-Match %q that sends no property succeeds", ifMatch), func() {
		_, err := b.UpdateEntity(ctx, table, empty, api.Merge, ifMatch)
		Expect(err).To(SucceedOnBackend(), "a merge that sends no property")
	})
	f.Requires(keeps, "a merge that sends no property keeps the stored ones", func() {
		page, err := b.QueryEntities(ctx, table, api.Query{})
		Expect(err).To(SucceedOnBackend())
		Expect(page.Entities).To(HaveLen(1), "the table after a merge that sends no property")
		Expect(WrittenOnly(page.Entities[0]).Properties).To(HaveLen(len(seed.Properties)), "the stored properties after a merge that sends none")
	})
}

// expectUnchanged checks that a refused write left the table as it was: the seed entity as
// stored, or no entity at all.
func expectUnchanged(ctx context.Context, b api.Backend, table string, seed api.Entity, existed bool) {
	GinkgoHelper()
	page, err := b.QueryEntities(ctx, table, api.Query{})
	Expect(err).To(SucceedOnBackend(), "Query Entities after the refused write")
	if !existed {
		Expect(page.Entities).To(BeEmpty(), "the refused write stored %s", KeyList(page.Entities))
		return
	}
	Expect(page.Entities).To(ConsistOfEntities(seed), "the refused write changed the stored entity")
}

// props returns n Int32 properties named P000, P001, ... starting at from.
func props(from, n int) map[string]api.Value {
	m := make(map[string]api.Value, n)
	for i := from; i < from+n; i++ {
		m[fmt.Sprintf("P%03d", i)] = api.Int32(int32(i))
	}
	return m
}

// binaryEntity returns an entity of count Edm.Binary properties of size bytes each.
func binaryEntity(count, size int) api.Entity {
	m := make(map[string]api.Value, count)
	for i := range count {
		m[fmt.Sprintf("B%02d", i)] = api.Binary(filled(size, byte(i)))
	}
	return api.NewEntity("p", "r", m)
}

// stringEntity returns an entity of count Edm.String properties, each unit repeated chars
// times.
func stringEntity(count, chars int, unit string) api.Entity {
	m := make(map[string]api.Value, count)
	for i := range count {
		m[fmt.Sprintf("S%02d", i)] = api.String(strings.Repeat(unit, chars))
	}
	return api.NewEntity("p", "r", m)
}

// entityOfSize returns an entity of exactly target bytes by api.EntitySize, made of full 64 KiB
// binary properties and one shorter last one.
func entityOfSize(target int) (api.Entity, error) {
	e := api.NewEntity("p", "r", nil)
	left := target - api.EntitySize(e)
	const nameLen = 3 // "B00"
	overhead := spec.SizePropertyOverhead + 2*nameLen + spec.SizeBinaryOverhead
	for i := 0; left > 0; i++ {
		if left < overhead {
			return api.Entity{}, fmt.Errorf("entity of %d bytes: %d bytes left, less than one property's overhead", target, left)
		}
		n := min(left-overhead, spec.MaxBinaryBytes)
		e.Properties[fmt.Sprintf("B%02d", i)] = api.Binary(filled(n, byte(i)))
		left -= overhead + n
	}
	return e, nil
}

func filled(n int, b byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = b + byte(i%251)
	}
	return out
}
