package ordering

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Sort data in Table storage", func(f *framework.F) {
	f.It("ordering.key-order", "returns the entities of a partition sorted by RowKey whatever the insertion order", func(ctx context.Context) {
		// Zero-padded decimal RowKeys: their ordinal order is their numeric order, which the
		// spec computes without trusting any string comparison.
		const seed = 7
		r := rand.New(rand.NewPCG(seed, seed))
		nums := r.Perm(1000)[:60]
		inserted := make([]api.Key, len(nums))
		for i, n := range nums {
			inserted[i] = scenario.Key("p", fmt.Sprintf("%04d", n))
		}
		sort.Ints(nums)
		want := make([]api.Key, len(nums))
		for i, n := range nums {
			want[i] = scenario.Key("p", fmt.Sprintf("%04d", n))
		}
		table := loadKeys(ctx, f, inserted)
		got := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{}, len(want)).Entities()
		expectKeys(f, got, want, "entities inserted in the order %v (seed %d)", inserted, seed)
	})

	f.It("ordering.key-order", "returns entities inserted in descending order ascending", func(ctx context.Context) {
		want := []api.Key{scenario.Key("a", "1"), scenario.Key("a", "2"), scenario.Key("b", "1"), scenario.Key("b", "2"), scenario.Key("c", "1")}
		inserted := make([]api.Key, len(want))
		for i := range want {
			inserted[i] = want[len(want)-1-i]
		}
		table := loadKeys(ctx, f, inserted)
		got := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{}, len(want)).Entities()
		f.Requires(countRule(api.Query{}), "a query of the whole table returns every partition's entities", func() {
			Expect(got).To(HaveLen(len(want)), "entities inserted in descending order")
		})
		expectKeys(f, got, want, "entities inserted in descending order")
	})

	f.It("ordering.key-order", "keeps partitions apart and in order when new ones follow a partition emptied by deletes", func(ctx context.Context) {
		// A store may recycle what it kept for a partition whose last entity is gone; the
		// partitions written afterwards must still be told apart (found by source mutation,
		// docs/MUTATION.md).
		b := f.Backend()
		table := loadKeys(ctx, f, []api.Key{scenario.Key("a", "1"), scenario.Key("a", "2"), scenario.Key("z", "1")})
		for _, rk := range []string{"1", "2"} {
			Expect(scenario.DeleteAny(ctx, b, table, "a", rk)).To(SucceedOnBackend())
		}
		scenario.RequireDeleted(ctx, f, b, table, scenario.Key("a", "1"), scenario.Key("a", "2"))
		later := []api.Key{scenario.Key("c", "2"), scenario.Key("b", "1"), scenario.Key("d", "1"), scenario.Key("c", "1")}
		for _, k := range later {
			_, err := b.InsertEntity(ctx, table, api.NewEntity(k.PartitionKey, k.RowKey, nil))
			Expect(err).To(SucceedOnBackend())
		}
		want := []api.Key{scenario.Key("b", "1"), scenario.Key("c", "1"), scenario.Key("c", "2"), scenario.Key("d", "1"), scenario.Key("z", "1")}
		whole := scenario.MustQueryAll(ctx, b, table, api.Query{}, len(want)).Entities()
		f.Requires(countRule(api.Query{}), "a query of the whole table returns every partition's entities", func() {
			Expect(whole).To(HaveLen(len(want)), "the table after partition a was emptied")
		})
		Expect(whole).To(ConsistOfKeys(want...), "the table after partition a was emptied")
		for _, pk := range []string{"b", "c", "d"} {
			got := scenario.MustQueryAll(ctx, b, table, api.Query{Filter: fmt.Sprintf("PartitionKey eq '%s'", pk)}, len(want)).Entities()
			Expect(got).NotTo(BeEmpty(), "partition %s", pk)
			for _, e := range got {
				Expect(e.PartitionKey).To(Equal(pk), "a query of partition %s returned %s/%s", pk, e.PartitionKey, e.RowKey)
			}
		}
		f.Check(spec.CheckOrder, func() { Expect(whole).To(HaveKeys(want...), "the table after partition a was emptied") })
	})

	f.DescribeTable("ordering.ascii", "sorts ASCII RowKeys ordinally",
		func(ctx context.Context, want ...string) {
			scenario.RequireKeyOrder(ctx, f)
			expectOrder(ctx, f, api.Query{}, rowKeys("p", want...), 11)
		},
		Entry("with upper case before lower case", "A", "B", "Z", "a", "b", "z"),
		Entry("with case-sensitive words", "Apple", "Zebra", "apple", "zebra"),
		Entry("with digits before letters", "0", "9", "A", "Z", "a", "z"),
		Entry("with punctuation by character code", "!", "$", "-", ".", "0", ":", "@", "A", "[", "_", "a", "{", "~"),
		Entry("with a prefix before its extensions", "a", "a b", "a-b", "a0", "aa", "ab", "b"),
		Entry("with a space sorting before every printable character", " ", " z", "!", "a", "a ", "a!"),
	)

	f.DescribeTable("ordering.ascii", "sorts ASCII PartitionKeys ordinally",
		func(ctx context.Context, want ...string) {
			keys := make([]api.Key, len(want))
			for i, pk := range want {
				keys[i] = scenario.Key(pk, "r")
			}
			scenario.RequireKeyOrder(ctx, f)
			expectOrder(ctx, f, api.Query{}, keys, 13)
		},
		Entry("with mixed case", "B", "Sales", "a", "sales"),
		Entry("with a prefix before its extensions", "Sale", "Sales", "Sales ", "Sales2", "Salesman"),
	)

	f.DescribeTable("ordering.zero-padding", "sorts numbers in keys as strings",
		func(ctx context.Context, want ...string) {
			scenario.RequireKeyOrder(ctx, f)
			expectOrder(ctx, f, api.Query{}, rowKeys("p", want...), 17)
		},
		Entry("numerically when zero-padded to a fixed width", "00000009", "00000010", "00000099", "00000123", "00001000"),
		Entry("not numerically when unpadded", "1", "10", "1000", "123", "2", "9", "99"),
	)

	f.DescribeTable("ordering.non-ascii", "sorts non-ASCII RowKeys by UTF-16 code unit",
		func(ctx context.Context, want ...string) {
			scenario.RequireKeyOrder(ctx, f)
			expectOrder(ctx, f, api.Query{}, rowKeys("p", want...), 19)
		},
		Entry("with Latin-1 letters after every ASCII letter", "Z", "z", "\u00c9", "\u00e9", "\u00ff"),
		Entry("without normalizing a combining accent", "e\u0301", "f", "\u00e9"),
		Entry("with Greek, CJK and fullwidth letters by code point", "\u03a9", "\u4e2d", "\uff21"),
		Entry("with case ignored by no culture rule", "\u00c4", "\u00d6", "\u00e4", "\u00f6"),
	)

	f.DescribeTable("ordering.surrogates", "sorts characters above U+FFFF by their surrogate pairs",
		func(ctx context.Context, want ...string) {
			scenario.RequireKeyOrder(ctx, f)
			expectOrder(ctx, f, api.Query{}, rowKeys("p", want...), 23)
		},
		// In UTF-16, U+1F600 is D83D DE00, which sorts before U+FF21; by code point (or UTF-8
		// bytes) it would sort after.
		Entry("with an emoji before fullwidth letters", "\u4e2d", "\U0001F600", "\uff21"),
		Entry("with a supplementary ideograph before U+F900", "\u4e00", "\U00020000", "\uf900"),
		Entry("with two supplementary characters by code point", "\U00010000", "\U0001F600", "\U00020000"),
	)

	f.It("ordering.empty-partition-key", "sorts the empty PartitionKey before every other partition", func(ctx context.Context) {
		scenario.RequireKeyOrder(ctx, f)
		expectOrder(ctx, f, api.Query{}, []api.Key{scenario.Key("", "a"), scenario.Key("", "b"), scenario.Key(" ", "a"), scenario.Key("0", "a"), scenario.Key("A", "a")}, 29)
	})

	f.It("ordering.empty-row-key", "accepts an empty RowKey and sorts it first in its partition", func(ctx context.Context) {
		scenario.RequireKeyOrder(ctx, f)
		requireEmptyRowKeyKept(ctx, f)
		expectOrder(ctx, f, api.Query{}, []api.Key{scenario.Key("a", ""), scenario.Key("a", " "), scenario.Key("a", "0"), scenario.Key("b", ""), scenario.Key("b", "a")}, 31)
	})

	f.It("ordering.filtered", "returns the matches of a table scan in key order", func(ctx context.Context) {
		table := f.NewTable(ctx)
		var all []api.Entity
		var want []api.Key
		for _, pk := range []string{"c", "A", "b", "B"} {
			for i, rk := range []string{"z", "M", "a", "0", "m"} {
				tag := "skip"
				if i%2 == 0 {
					tag = "keep"
				}
				all = append(all, api.NewEntity(pk, rk, map[string]api.Value{"Tag": api.String(tag)}))
			}
		}
		for _, pk := range []string{"A", "B", "b", "c"} {
			want = append(want, rowKeys(pk, "a", "m", "z")...)
		}
		for i, e := range all {
			f.Requires(insertRule(e.Key(), Keys(all[:i])), fmt.Sprintf("insert the entity %s of the spec's %d", e, len(all)), func() {
				Expect(InsertAll(ctx, f.Backend(), table, e)).To(SucceedOnBackend())
			})
		}
		var got []api.Entity
		f.Requires("query.compare.string", "the filter Tag eq 'keep' selects the tagged entities", func() {
			got = scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: "Tag eq 'keep'"}, len(all)).Entities()
			Expect(got).To(ConsistOfKeys(want...), "filter \"Tag eq 'keep'\", in any order")
		})
		f.Check(spec.CheckOrder, func() { Expect(got).To(HaveKeys(want...), "filter \"Tag eq 'keep'\"") })
	})

	f.It("ordering.filtered", "returns the matches of a range query in RowKey order", func(ctx context.Context) {
		want := rowKeys("p", "b", "bA", "ba", "bz", "c")
		all := append(append([]api.Key{scenario.Key("p", "a"), scenario.Key("p", "cA"), scenario.Key("o", "b")}, want...), scenario.Key("q", "b"))
		table := loadKeys(ctx, f, shuffled(all, 37))
		got := scenario.MustQueryAll(ctx, f.Backend(), table, api.Query{Filter: "PartitionKey eq 'p' and RowKey ge 'b' and RowKey le 'c'"}, len(all)).Entities()
		expectKeys(f, got, want, "filter \"PartitionKey eq 'p' and RowKey ge 'b' and RowKey le 'c'\"")
	})
})
