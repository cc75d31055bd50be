package patterns

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// The compound key pattern stores an employee's yearly reviews beside the employee, in the
// department's partition, under RowKeys "empid_<id>_<year>" next to the employee's own
// "empid_<id>", so that one range query returns an employee with all their reviews.

const (
	propManagerRating = "ManagerRating"
	propPeerRating    = "PeerRating"
	propComments      = "Comments"
)

var reviewYears = []int{2012, 2013, 2014}

func review(emp fixtures.Employee, year int) api.Entity {
	return api.NewEntity(emp.Department, fmt.Sprintf("empid_%s_%d", emp.ID, year), scenario.Props(
		propManagerRating, api.Int32(int32(3+(year+len(emp.ID)+int(emp.Age))%3)),
		propPeerRating, api.Int32(int32(2+(year+int(emp.Age))%4)),
		propComments, api.String(fmt.Sprintf("%s %s, review of %d", emp.FirstName, emp.LastName, year))))
}

// loadReviews stores every Sales employee under "empid_<id>" with three yearly reviews.
func loadReviews(ctx context.Context, b api.Backend, table string) map[string][]api.Entity {
	GinkgoHelper()
	byEmployee := map[string][]api.Entity{}
	var es []api.Entity
	for _, e := range department("Sales") {
		own := api.NewEntity(e.Department, "empid_"+e.ID, e.Properties())
		byEmployee[e.ID] = []api.Entity{own}
		for _, y := range reviewYears {
			byEmployee[e.ID] = append(byEmployee[e.ID], review(e, y))
		}
		es = append(es, byEmployee[e.ID]...)
	}
	scenario.Load(ctx, b, table, fixtures.Shuffle(es, 13))
	return byEmployee
}

var _ = framework.Describe("Compound key pattern", func(f *framework.F) {
	Context("with reviews keyed empid_<id>_<year> beside their employee", func() {
		f.It("pattern.compound-key.range", "returns employee 000123 and their reviews in year order, and nothing of 000124", func(ctx context.Context) {
			scenario.RequireKeyOrder(ctx, f) // the rule is the pattern's range, not key order itself
			b, table := f.Backend(), f.NewTable(ctx)
			byEmployee := loadReviews(ctx, b, table)
			Expect(byEmployee).To(HaveKey("000124"), "the fixture must hold the next employee")
			got, err := scenario.AllEntities(ctx, b, table, api.Query{Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"),
				scenario.Cmp("RowKey", "ge", "empid_000123"), scenario.Cmp("RowKey", "lt", "empid_000124"))})
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(ConsistOfEntities(byEmployee["000123"]...))
			f.Check(spec.CheckOrder, func() { Expect(got).To(MatchEntities(byEmployee["000123"]...)) })
		})

		f.It("pattern.compound-key.projection", "returns only the selected review properties", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			byEmployee := loadReviews(ctx, b, table)
			reviews := byEmployee["000123"][1:]
			got, err := scenario.AllEntities(ctx, b, table, api.Query{
				Filter: scenario.And(scenario.Cmp("PartitionKey", "eq", "Sales"), scenario.Cmp("RowKey", "ge", "empid_000123_"), scenario.Cmp("RowKey", "lt", "empid_000124")),
				Select: []string{"RowKey", propManagerRating, propPeerRating, propComments},
			})
			Expect(err).To(SucceedOnBackend())
			f.Requires("query.range", "the range query [empid_000123_, empid_000124) returns the employee's reviews and nothing beyond its bounds", func() {
				Expect(got).To(HaveLen(len(reviews)))
			})
			byRowKey := map[string]api.Entity{}
			for _, r := range reviews {
				byRowKey[r.RowKey] = r
			}
			for _, g := range got {
				want, ok := byRowKey[g.RowKey]
				Expect(ok).To(BeTrue(), "RowKey was selected, so it comes back; got %q", g.RowKey)
				delete(byRowKey, g.RowKey)
				Expect(g).To(HavePropertyNames(propManagerRating, propPeerRating, propComments))
				for _, name := range []string{propManagerRating, propPeerRating, propComments} {
					Expect(g).To(HaveProperty(name, want.Properties[name]))
				}
			}
		})
	})
})
