package query

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// tenRows is one partition of ten entities, r00..r09.
func tenRows() []api.Entity {
	es := make([]api.Entity, 10)
	for i := range es {
		es[i] = api.NewEntity("p", fmt.Sprintf("r%02d", i), map[string]api.Value{"N": api.Int32(int32(i))})
	}
	return es
}

var _ = framework.Describe("Query Entities $top", func(f *framework.F) {
	rows := tenRows()
	firstPage := func(ctx context.Context, top int) (api.Page, error) {
		GinkgoHelper()
		table := tableWith(ctx, f, rows...)
		return f.Backend().QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p'", Top: api.TopOf(top)})
	}

	f.DescribeTable("query.top.limit", "holds at most $top entities and a continuation while matches remain",
		func(ctx context.Context, top int) {
			page, err := firstPage(ctx, top)
			Expect(err).To(SucceedOnBackend(), "$top=%d", top)
			Expect(len(page.Entities)).To(BeNumerically("<=", top), "$top=%d returned %s", top, KeyList(page.Entities))
			if len(page.Entities) < len(rows) {
				Expect(page.Continuation.IsZero()).To(BeFalse(),
					"$top=%d returned %d of %d matching entities and no continuation", top, len(page.Entities), len(rows))
			}
		},
		Entry("for $top=1", 1),
		Entry("for $top=3", 3),
		Entry("for $top one below the matches", 9),
		Entry("for $top equal to the matches", 10),
		Entry("for $top above the matches", 20),
	)

	f.DescribeTable("query.top.fill", "fills the first page of a single-partition query",
		func(ctx context.Context, top int) {
			page, err := firstPage(ctx, top)
			Expect(err).To(SucceedOnBackend(), "$top=%d", top)
			// More than $top is query.top.limit's subject; exactly $top, not fewer, this rule's.
			f.Requires(scenario.RuleTopLimit, fmt.Sprintf("a first page of at most $top=%d", top), func() {
				Expect(len(page.Entities)).To(BeNumerically("<=", top), "$top=%d over %d entities of one partition", top, len(rows))
			})
			Expect(page.Entities).To(HaveLen(top), "$top=%d over %d entities of one partition", top, len(rows))
		},
		Entry("for $top=1", 1),
		Entry("for $top=7", 7),
	)

	f.It("query.top.max", fmt.Sprintf("accepts $top=%d", spec.MaxTop), func(ctx context.Context) {
		table := tableWith(ctx, f, rows...)
		// Accepting $top=1000 means something only where $top limits a page at all.
		scenario.RequirePaging(ctx, f, f.Backend(), table, api.Query{Top: api.TopOf(2)}, len(rows))
		r, err := QueryAll(ctx, f.Backend(), table, api.Query{Top: api.TopOf(spec.MaxTop)}, scenario.MaxPagesFor(len(rows)))
		Expect(err).To(SucceedOnBackend(), "$top=%d", spec.MaxTop)
		Expect(r.Entities()).To(ConsistOfKeys(Keys(rows)...))
	})

	// The 400 is a live answer; its code is open and recorded (EVIDENCE.md 3.3, 11.8).
	f.DescribeTable("query.top.over-max", "refuses $top above 1000 with 400 and records the code",
		func(ctx context.Context, top int) {
			_, err := firstPage(ctx, top)
			Expect(err).To(HaveFailedWithStatus(400), "$top=%d", top)
			f.Choice("refusal of $top above 1000", OutcomeOf(err))
		},
		Entry("for one above", spec.MaxTop+1),
		Entry("for the largest Int32", 1<<31-1),
	)

	// EVIDENCE.md 13, E-top-zero.
	f.It("query.top.zero", "answers $top=0 with an empty page", func(ctx context.Context) {
		page, err := firstPage(ctx, 0)
		Expect(err).To(SucceedOnBackend(), "$top=0")
		Expect(page.Entities).To(BeEmpty(), "$top=0 returned %s", KeyList(page.Entities))
	})

	f.It("query.top.negative", "refuses $top=-1 with 400 InvalidInput", func(ctx context.Context) {
		_, err := firstPage(ctx, -1)
		Expect(err).To(HaveFailedWith(400, spec.ErrInvalidInput.Code), "$top=-1")
	})
})
