package query

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// employees is the design guide's example table (department as PartitionKey, employee id as
// RowKey), with neighbours that a sloppy key match would also select: partitions that differ
// from "Sales" by case, prefix, suffix and a trailing space, and RowKeys just outside the
// ranges the specs query.
func employees() []api.Entity {
	e := func(dept, id, first, last string, age int32) api.Entity {
		return api.NewEntity(dept, id, map[string]api.Value{
			"FirstName": api.String(first), "LastName": api.String(last), "Age": api.Int32(age),
		})
	}
	return []api.Entity{
		e("Sales", "121", "Ann", "Smith", 30),
		e("Sales", "2", "Bob", "Jones", 41),
		e("Sales", "322", "Cid", "Smith", 25),
		e("Sales", "R~", "Gus", "Green", 33),
		e("Sales", "S", "Hal", "White", 22),
		e("Sales", "S100", "Dee", "Brown", 35),
		e("Sales", "Sz", "Eve", "Smith", 28),
		e("Sales", "T", "Fay", "Jones", 50),
		e("Marketing", "121", "Ivy", "Jones", 44),
		e("Marketing", "2", "Jay", "Smith", 31),
		e("sales", "121", "Kim", "Smith", 29),
		e("Sales2", "121", "Lee", "Jones", 38),
		e("Sale", "2", "Max", "Smith", 27),
		e("Sales ", "2", "Ned", "Jones", 39),
		e("HR", "7", "Oli", "Jones", 45),
	}
}

// requireAgeComparison is the precondition of a scan spec that filters on the Int32 Age:
// over a table of the Sales employees alone, the condition selects those that pred
// selects (query.compare.int32), so that a backend that cannot compare an Int32 blocks
// the spec instead of failing its rule about scans.
func requireAgeComparison(ctx context.Context, f *framework.F, condition string, pred func(api.Entity) bool) {
	GinkgoHelper()
	f.Requires("query.compare.int32", fmt.Sprintf("the comparison %q over one partition", condition), func() {
		var sales []api.Entity
		for _, e := range employees() {
			if e.PartitionKey == "Sales" {
				sales = append(sales, e)
			}
		}
		table := tableWith(ctx, f, sales...)
		Expect(filterAll(ctx, f, table, condition, len(sales))).To(ConsistOfKeys(keysWhere(sales, pred)...), "filter %q", condition)
	})
}

var _ = framework.Describe("Design for querying", func(f *framework.F) {
	var people = employees()

	// check loads the employees and runs filter to its end; the matches must be exactly the
	// employees that pred selects.
	check := func(ctx context.Context, filter string, pred func(api.Entity) bool) {
		if strings.Contains(filter, "Age ") {
			requireAgeComparison(ctx, f, strings.TrimPrefix(filter, "PartitionKey eq 'Sales' and "), pred)
		}
		table := tableWith(ctx, f, people...)
		if !strings.Contains(filter, "PartitionKey") {
			f.Requires("query.table-scan", "a query without a filter returns the entities of every partition", func() {
				Expect(filterAll(ctx, f, table, "", len(people))).To(HaveLen(len(people)), "a query without a filter")
			})
		}
		want := keysWhere(people, pred)
		got := filterAll(ctx, f, table, filter, len(people))
		Expect(got).To(ConsistOfKeys(want...), "filter %q", filter)
	}
	inSales := func(e api.Entity) bool { return e.PartitionKey == "Sales" }

	Context("with a point query", func() {
		f.It("query.point", "returns exactly the one entity with both keys", func(ctx context.Context) {
			check(ctx, "PartitionKey eq 'Sales' and RowKey eq '2'", func(e api.Entity) bool {
				return e.Key() == scenario.Key("Sales", "2")
			})
		})
		f.It("query.point", "returns the entity when the RowKey condition comes first", func(ctx context.Context) {
			check(ctx, "RowKey eq '2' and PartitionKey eq 'Sales'", func(e api.Entity) bool {
				return e.Key() == scenario.Key("Sales", "2")
			})
		})
		f.It("query.point.absent", "succeeds with no entities and no continuation when the keys do not exist", func(ctx context.Context) {
			table := tableWith(ctx, f, people...)
			for _, filter := range []string{
				"PartitionKey eq 'Sales' and RowKey eq '3'",
				"PartitionKey eq 'Nowhere' and RowKey eq '2'",
			} {
				page, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: filter})
				Expect(err).To(SucceedOnBackend(), "filter %q", filter)
				Expect(page.Entities).To(BeEmpty(), "filter %q", filter)
				Expect(page.Continuation.IsZero()).To(BeTrue(), "filter %q: a point query for absent keys returned the continuation %+v", filter, page.Continuation)
			}
		})
	})

	f.DescribeTable("query.range", "with a range query returns exactly the RowKeys in the range",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) { check(ctx, filter, pred) },
		Entry("for a half-open prefix range (ge 'S' and lt 'T')",
			"PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'",
			func(e api.Entity) bool { return inSales(e) && e.RowKey >= "S" && e.RowKey < "T" }),
		Entry("for a closed range (ge and le, both bounds stored)",
			"PartitionKey eq 'Sales' and RowKey ge '2' and RowKey le 'S'",
			func(e api.Entity) bool { return inSales(e) && e.RowKey >= "2" && e.RowKey <= "S" }),
		Entry("for an open range (gt and lt, both bounds stored)",
			"PartitionKey eq 'Sales' and RowKey gt '121' and RowKey lt 'S100'",
			func(e api.Entity) bool { return inSales(e) && e.RowKey > "121" && e.RowKey < "S100" }),
		Entry("for a lower bound only",
			"PartitionKey eq 'Sales' and RowKey gt 'S'",
			func(e api.Entity) bool { return inSales(e) && e.RowKey > "S" }),
		Entry("for an upper bound only",
			"PartitionKey eq 'Sales' and RowKey lt '2'",
			func(e api.Entity) bool { return inSales(e) && e.RowKey < "2" }),
		Entry("for an empty range (lower bound above upper bound)",
			"PartitionKey eq 'Sales' and RowKey ge 'T' and RowKey lt 'S'",
			func(api.Entity) bool { return false }),
	)

	f.DescribeTable("query.partition-scan", "with a partition scan returns exactly the partition's matches",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) { check(ctx, filter, pred) },
		Entry("for a String property",
			"PartitionKey eq 'Sales' and LastName eq 'Smith'",
			func(e api.Entity) bool { return inSales(e) && str(e, "LastName") == "Smith" }),
		Entry("for an Int32 property",
			"PartitionKey eq 'Sales' and Age ge 33",
			func(e api.Entity) bool { return inSales(e) && e.Properties["Age"].Int() >= 33 }),
	)

	f.DescribeTable("query.partition-scan.exact", "with PartitionKey eq selects one partition only",
		func(ctx context.Context, pk string) {
			check(ctx, "PartitionKey eq "+scenario.Quote(pk), func(e api.Entity) bool { return e.PartitionKey == pk })
		},
		Entry("not its lower-case, prefix, suffix or trailing-space neighbours", "Sales"),
		Entry("not the partition it is a prefix of", "Sale"),
		Entry("when the key ends in a space", "Sales "),
	)

	f.DescribeTable("query.table-scan", "with a table scan returns the matches of every partition",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) { check(ctx, filter, pred) },
		Entry("for a condition on a non-key property",
			"LastName eq 'Jones'",
			func(e api.Entity) bool { return str(e, "LastName") == "Jones" }),
		Entry("for a condition on RowKey alone",
			"RowKey eq '121'",
			func(e api.Entity) bool { return e.RowKey == "121" }),
		Entry("for a numeric range on a non-key property",
			"Age ge 31 and Age le 41",
			func(e api.Entity) bool { a := e.Properties["Age"].Int(); return a >= 31 && a <= 41 }),
		Entry("for no filter at all", "", func(api.Entity) bool { return true }),
	)

	f.DescribeTable("query.or-keys", "with key equalities joined by or returns exactly the named entities",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) { check(ctx, filter, pred) },
		Entry("for two RowKeys in one partition",
			"PartitionKey eq 'Sales' and (RowKey eq '121' or RowKey eq '322')",
			func(e api.Entity) bool { return inSales(e) && (e.RowKey == "121" || e.RowKey == "322") }),
		Entry("for two point queries in different partitions",
			"(PartitionKey eq 'Sales' and RowKey eq '2') or (PartitionKey eq 'HR' and RowKey eq '7')",
			func(e api.Entity) bool {
				return e.Key() == scenario.Key("Sales", "2") || e.Key() == scenario.Key("HR", "7")
			}),
		Entry("for two whole partitions",
			"PartitionKey eq 'Marketing' or PartitionKey eq 'HR'",
			func(e api.Entity) bool { return e.PartitionKey == "Marketing" || e.PartitionKey == "HR" }),
	)

	f.DescribeTable("query.prefix", "with a prefix search returns exactly the keys with the prefix",
		func(ctx context.Context, filter string, pred func(api.Entity) bool) { check(ctx, filter, pred) },
		Entry("for a PartitionKey prefix",
			"PartitionKey ge 'Sale' and PartitionKey lt 'Salf'",
			func(e api.Entity) bool { return len(e.PartitionKey) >= 4 && e.PartitionKey[:4] == "Sale" }),
		Entry("for a one-letter PartitionKey prefix, case-sensitively",
			"PartitionKey ge 'S' and PartitionKey lt 'T'",
			func(e api.Entity) bool { return e.PartitionKey[0] == 'S' }),
		Entry("for a RowKey prefix across partitions",
			"RowKey ge '1' and RowKey lt '2'",
			func(e api.Entity) bool { return e.RowKey[0] == '1' }),
	)
})
