package modification

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// write is one kind of write of entity ("p","r") that returns the new ETag.
type write struct {
	mode    api.UpdateMode
	ifMatch string
}

func (w write) do(ctx context.Context, b api.Backend, table string, e api.Entity) (string, error) {
	return b.UpdateEntity(ctx, table, e, w.mode, w.ifMatch)
}

// require performs w on e, stored before it when existing, as a step of a spec whose subject
// is the ETag or Timestamp the write gives: its success is a precondition under the rule
// whose subject it is.
func (w write) require(ctx context.Context, f *framework.F, b api.Backend, table string, e api.Entity, existing bool) string {
	GinkgoHelper()
	var etag string
	f.Requires(updateRule(w.mode, w.ifMatch, existing), fmt.Sprintf("the %s of %s with If-Match %q succeeds", w.mode, e, w.ifMatch), func() {
		var err error
		etag, err = w.do(ctx, b, table, e)
		Expect(err).To(SucceedOnBackend())
	})
	return etag
}

var (
	replaceAny    = write{api.Replace, api.IfMatchAny}
	mergeAny      = write{api.Merge, api.IfMatchAny}
	insertReplace = write{api.Replace, ""}
	insertMerge   = write{api.Merge, ""}
)

var _ = framework.Describe("Entity ETag and Timestamp", func(f *framework.F) {
	f.DescribeTable("modify.etag.changes", "change the ETag on every write",
		func(ctx context.Context, w write, e api.Entity) {
			b, table := f.Backend(), f.NewTable(ctx)
			before := mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
			etag := w.require(ctx, f, b, table, e, true)
			Expect(etag).NotTo(Equal(before.ETag), "the write returned the ETag the entity had before it")
			Expect(mustGet(ctx, b, table, "p", "r").ETag).NotTo(Equal(before.ETag), "a read after the write shows the ETag from before it")
		},
		Entry("for a replace", replaceAny, entity("p", "r", "V", api.Int32(2))),
		Entry("for a replace that sends the same properties", replaceAny, entity("p", "r", "V", api.Int32(1))),
		Entry("for a merge", mergeAny, entity("p", "r", "W", api.Int32(2))),
		Entry("for a merge that sends no property", mergeAny, entity("p", "r")),
		Entry("for an insert-or-replace", insertReplace, entity("p", "r", "V", api.Int32(3))),
		Entry("for an insert-or-merge", insertMerge, entity("p", "r", "V", api.Int32(4))),
	)

	f.It("modify.etag.changes", "never repeat an earlier ETag over a run of writes", func(ctx context.Context) {
		b, table := f.Backend(), f.NewTable(ctx)
		seen := map[string]int{mustInsert(ctx, b, table, entity("p", "r", "N", api.Int32(0))).ETag: 0}
		writes := []write{replaceAny, mergeAny, insertReplace, insertMerge, replaceAny, mergeAny, insertMerge, insertReplace}
		for i, w := range writes {
			etag := w.require(ctx, f, b, table, entity("p", "r", "N", api.Int32(int32(i+1))), true)
			if at, dup := seen[etag]; dup {
				Fail(fmt.Sprintf("write %d returned ETag %s, the ETag write %d returned", i+1, etag, at))
			}
			seen[etag] = i + 1
		}
	})

	f.DescribeTable("modify.etag.returned-current", "return the ETag that a following read shows",
		func(ctx context.Context, existing bool, w *write) {
			b, table := f.Backend(), f.NewTable(ctx)
			var etag string
			e := entity("p", "r", "V", api.Int32(2))
			switch {
			case w == nil:
				got, err := b.InsertEntity(ctx, table, e)
				Expect(err).To(SucceedOnBackend())
				etag = got.ETag
			default:
				if existing {
					mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
				}
				etag = w.require(ctx, f, b, table, e, existing)
			}
			Expect(etag).NotTo(BeEmpty(), "the write returned no ETag")
			Expect(scenario.ReadStable(ctx, f, b, table, "p", "r").ETag).To(Equal(etag), "the ETag the write returned is not the one a read shows")
		},
		Entry("for an insert", false, nil),
		Entry("for a replace", true, &replaceAny),
		Entry("for a merge", true, &mergeAny),
		Entry("for an insert-or-replace that creates", false, &insertReplace),
		Entry("for an insert-or-replace that replaces", true, &insertReplace),
		Entry("for an insert-or-merge that creates", false, &insertMerge),
		Entry("for an insert-or-merge that merges", true, &insertMerge),
	)

	f.DescribeTable("modify.timestamp.advances", "move the Timestamp forward on every write",
		func(ctx context.Context, w write) {
			b, table := f.Backend(), f.NewTable(ctx)
			mustInsert(ctx, b, table, entity("p", "r", "V", api.Int32(1)))
			before := mustGet(ctx, b, table, "p", "r").Timestamp
			w.require(ctx, f, b, table, entity("p", "r", "V", api.Int32(2)), true)
			after := mustGet(ctx, b, table, "p", "r").Timestamp
			Expect(after.After(before)).To(BeTrue(), "the Timestamp went from %s to %s", api.FormatDateTime7(before), api.FormatDateTime7(after))
		},
		Entry("for a replace", replaceAny),
		Entry("for a merge", mergeAny),
		Entry("for an insert-or-replace", insertReplace),
		Entry("for an insert-or-merge", insertMerge),
	)
})
