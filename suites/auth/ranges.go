package auth

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// The ranges of the range specs: PartitionKeys b..d, and (b, m)..(d, p) with RowKeys.
const (
	rangeStartPK, rangeEndPK = "b", "d"
	rangeStartRK, rangeEndRK = "m", "p"
)

// rangeKeys are the entities stored before a range spec acts: around and on each bound.
var rangeKeys = []api.Key{
	{PartitionKey: "a", RowKey: "n"}, {PartitionKey: "b", RowKey: "l"}, {PartitionKey: "b", RowKey: "m"},
	{PartitionKey: "b", RowKey: "z"}, {PartitionKey: "c", RowKey: "a"}, {PartitionKey: "c", RowKey: "n"},
	{PartitionKey: "d", RowKey: "p"}, {PartitionKey: "d", RowKey: "q"}, {PartitionKey: "d", RowKey: "zzz"},
	{PartitionKey: "e", RowKey: "n"},
}

func rangeEntity(k api.Key) api.Entity {
	return api.NewEntity(k.PartitionKey, k.RowKey, map[string]api.Value{"At": api.String(k.PartitionKey + "/" + k.RowKey)})
}

// rangeTable stores rangeKeys with the account key and returns a backend acting through a
// raud SAS bounded as given.
func rangeTable(ctx context.Context, f *framework.F, opts driver.SASOptions) (master, viaSAS api.Backend, table string) {
	GinkgoHelper()
	issuer := f.SAS()
	master, table = f.Backend(), f.NewTable(ctx)
	f.Requires("modify.insert.stores", "store the range's entities with the account key", func() {
		for _, k := range rangeKeys {
			_, err := master.InsertEntity(ctx, table, rangeEntity(k))
			Expect(err).To(SucceedOnBackend())
		}
	})
	requireValidSAS(ctx, f, issuer, table, rangeEntity(rangeKeys[0]))
	opts.Table, opts.Permissions, opts.Expiry = table, "raud", time.Now().Add(sasLifetime)
	viaSAS, err := issuer.WithSAS(ctx, opts)
	Expect(err).NotTo(HaveOccurred(), "issue a SAS %+v", opts)
	return master, viaSAS, table
}

// keyOp is a point operation on one key through a ranged SAS: a Get of a stored entity or
// an Insert of a new one.
type keyOp struct {
	insert bool
	key    api.Key
}

func (o keyOp) String() string {
	if o.insert {
		return fmt.Sprintf("Insert Entity (%q, %q)", o.key.PartitionKey, o.key.RowKey)
	}
	return fmt.Sprintf("Get Entity (%q, %q)", o.key.PartitionKey, o.key.RowKey)
}

func (o keyOp) run(ctx context.Context, viaSAS api.Backend, table string) error {
	if o.insert {
		_, err := viaSAS.InsertEntity(ctx, table, rangeEntity(o.key))
		return err
	}
	got, err := viaSAS.GetEntity(ctx, table, o.key.PartitionKey, o.key.RowKey, nil)
	if err == nil {
		Expect(got).To(MatchEntity(rangeEntity(o.key)))
	}
	return err
}

// check runs o and checks the allowed or refused outcome, and that a refused insert stored
// nothing.
func (o keyOp) check(ctx context.Context, master, viaSAS api.Backend, table string, allowed bool) {
	GinkgoHelper()
	err := o.run(ctx, viaSAS, table)
	if allowed {
		Expect(err).To(SucceedOnBackend(), "%s inside the SAS range", o)
		return
	}
	Expect(err).To(HaveFailedAs(spec.ErrAuthorizationFailure), "%s outside the SAS range", o)
	if o.insert {
		_, err := master.GetEntity(ctx, table, o.key.PartitionKey, o.key.RowKey, nil)
		Expect(err).To(HaveFailedWithStatus(404), "the refused %s stored the entity", o)
	}
}

func get(pk, rk string) keyOp { return keyOp{key: api.Key{PartitionKey: pk, RowKey: rk}} }
func insert(pk, rk string) keyOp {
	return keyOp{insert: true, key: api.Key{PartitionKey: pk, RowKey: rk}}
}

var _ = framework.Describe("Shared access signature ranges", func(f *framework.F) {
	pkRange := driver.SASOptions{StartPK: rangeStartPK, EndPK: rangeEndPK}
	rowRange := driver.SASOptions{StartPK: rangeStartPK, StartRK: rangeStartRK, EndPK: rangeEndPK, EndRK: rangeEndRK}

	Context("with a PartitionKey range b..d", func() {
		f.DescribeTable("auth.sas.range.partition", "allows keys inside the range and refuses the others with 403 AuthorizationFailure",
			func(ctx context.Context, o keyOp, allowed bool) {
				master, viaSAS, table := rangeTable(ctx, f, pkRange)
				o.check(ctx, master, viaSAS, table, allowed)
			},
			Entry("refuses a Get before the lower bound", get("a", "n"), false),
			Entry("allows a Get at the lower bound", get("b", "l"), true),
			Entry("allows a Get inside", get("c", "a"), true),
			Entry("allows a Get at the upper bound with any RowKey", get("d", "zzz"), true),
			Entry("refuses a Get after the upper bound", get("e", "n"), false),
			Entry("refuses an Insert before the lower bound", insert("a", "new"), false),
			Entry("allows an Insert at the lower bound", insert("b", "new"), true),
			Entry("allows an Insert at the upper bound", insert("d", "new"), true),
			Entry("refuses an Insert after the upper bound", insert("e", "new"), false),
			Entry("refuses an Insert of a PartitionKey that extends the upper bound", insert("da", "new"), false),
		)
	})

	Context("with a range from (b, m) to (d, p)", func() {
		f.DescribeTable("auth.sas.range.row", "allows keys between the bounds and refuses those outside with 403 AuthorizationFailure",
			func(ctx context.Context, o keyOp, allowed bool) {
				master, viaSAS, table := rangeTable(ctx, f, rowRange)
				o.check(ctx, master, viaSAS, table, allowed)
			},
			Entry("refuses a Get before the lower PartitionKey", get("a", "n"), false),
			Entry("refuses a Get of the lower PartitionKey before the lower RowKey", get("b", "l"), false),
			Entry("allows a Get at the lower bound", get("b", "m"), true),
			Entry("allows a Get inside both ranges", get("c", "n"), true),
			Entry("allows a Get at the upper bound", get("d", "p"), true),
			Entry("refuses a Get of the upper PartitionKey after the upper RowKey", get("d", "q"), false),
			Entry("refuses a Get after the upper PartitionKey", get("e", "n"), false),
			Entry("refuses an Insert of the lower PartitionKey before the lower RowKey", insert("b", "l5"), false),
			Entry("allows an Insert of the lower PartitionKey after the lower RowKey", insert("b", "m5"), true),
			Entry("allows an Insert of the upper PartitionKey before the upper RowKey", insert("d", "o"), true),
			Entry("refuses an Insert of the upper PartitionKey after the upper RowKey", insert("d", "p5"), false),
		)

		f.DescribeTable("auth.sas.range.row-reading", "allows or refuses keys whose RowKey alone lies outside srk..erk",
			func(ctx context.Context, o keyOp) {
				master, viaSAS, table := rangeTable(ctx, f, rowRange)
				err := o.run(ctx, viaSAS, table)
				if err == nil {
					f.Choice("reading of a PartitionKey and RowKey range", "one range of (PartitionKey, RowKey) pairs")
					return
				}
				Expect(err).To(HaveFailedAs(spec.ErrAuthorizationFailure), "%s", o)
				f.Choice("reading of a PartitionKey and RowKey range", "a PartitionKey range crossed with a RowKey range")
				if o.insert {
					_, err := master.GetEntity(ctx, table, o.key.PartitionKey, o.key.RowKey, nil)
					Expect(err).To(HaveFailedWithStatus(404), "the refused %s stored the entity", o)
				}
			},
			Entry("for a Get of the lower PartitionKey after the upper RowKey", get("b", "z")),
			Entry("for a Get of a middle PartitionKey before the lower RowKey", get("c", "a")),
			Entry("for an Insert of a middle PartitionKey after the upper RowKey", insert("c", "zz")),
		)
	})

	Context("when a query is sent through a SAS with a range", func() {
		f.DescribeTable("auth.sas.range.query", "never returns an entity outside the range",
			func(ctx context.Context, opts driver.SASOptions, filter string, inside func(api.Key) bool) {
				_, viaSAS, table := rangeTable(ctx, f, opts)
				page, err := viaSAS.QueryEntities(ctx, table, api.Query{Filter: filter})
				if err != nil {
					Expect(err).To(HaveFailedWithStatus(403), "Query Entities $filter=%q through a ranged SAS", filter)
					f.Choice("query through a ranged SAS", "refused: "+OutcomeOf(err))
					return
				}
				f.Choice("query through a ranged SAS", "answered inside the range")
				for _, e := range page.Entities {
					Expect(inside(e.Key())).To(BeTrue(), "Query Entities $filter=%q through a SAS for %+v returned (%q, %q)",
						filter, opts, e.PartitionKey, e.RowKey)
				}
			},
			Entry("without a filter, PartitionKey range", pkRange, "", inPKRange),
			Entry("with a filter wider than the PartitionKey range", pkRange, "PartitionKey ge 'a'", inPKRange),
			Entry("without a filter, PartitionKey and RowKey range", rowRange, "", inPairRange),
		)
	})
})

func inPKRange(k api.Key) bool {
	return k.PartitionKey >= rangeStartPK && k.PartitionKey <= rangeEndPK
}

// inPairRange is lenient about the reading of a two-level range: it accepts a key inside
// either reading.
func inPairRange(k api.Key) bool {
	lo := api.Key{PartitionKey: rangeStartPK, RowKey: rangeStartRK}
	hi := api.Key{PartitionKey: rangeEndPK, RowKey: rangeEndRK}
	return !k.Less(lo) && !hi.Less(k)
}
