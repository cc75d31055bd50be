package auth

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// sasLifetime is the validity of the SAS tokens that specs expect to work.
const sasLifetime = time.Hour

// seed is the entity every SAS spec stores with the account key before it acts through the
// SAS; fresh is the one that inserts and upserts create.
var (
	seed  = api.NewEntity("p", "existing", map[string]api.Value{"V": api.Int32(1)})
	fresh = api.NewEntity("p", "new", map[string]api.Value{"V": api.Int32(9)})
)

// op is one entity operation sent through a SAS. do performs it (checking what a read
// returns when it succeeds); after is the table's content when it is allowed.
type op struct {
	name  string
	do    func(ctx context.Context, b api.Backend, table string) error
	after []api.Entity
}

var (
	opGet = op{"Get Entity", func(ctx context.Context, b api.Backend, t string) error {
		got, err := b.GetEntity(ctx, t, seed.PartitionKey, seed.RowKey, nil)
		if err == nil {
			Expect(got).To(MatchEntity(seed), "Get Entity through the SAS")
		}
		return err
	}, []api.Entity{seed}}
	opQuery = op{"Query Entities", func(ctx context.Context, b api.Backend, t string) error {
		page, err := b.QueryEntities(ctx, t, api.Query{Filter: "PartitionKey eq 'p'"})
		if err == nil {
			Expect(page.Entities).To(ConsistOf(MatchEntity(seed)), "Query Entities through the SAS")
		}
		return err
	}, []api.Entity{seed}}
	opInsert = op{"Insert Entity", func(ctx context.Context, b api.Backend, t string) error {
		_, err := b.InsertEntity(ctx, t, fresh)
		return err
	}, []api.Entity{seed, fresh}}
	opReplace = op{"Update Entity", func(ctx context.Context, b api.Backend, t string) error {
		_, err := scenario.UpdateAny(ctx, b, t, seed.With("V", api.Int32(2)), api.Replace)
		return err
	}, []api.Entity{seed.With("V", api.Int32(2))}}
	opMerge = op{"Merge Entity", func(ctx context.Context, b api.Backend, t string) error {
		_, err := scenario.UpdateAny(ctx, b, t, api.NewEntity(seed.PartitionKey, seed.RowKey, map[string]api.Value{"W": api.Int32(2)}), api.Merge)
		return err
	}, []api.Entity{seed.With("W", api.Int32(2))}}
	opDelete = op{"Delete Entity", func(ctx context.Context, b api.Backend, t string) error {
		return scenario.DeleteAny(ctx, b, t, seed.PartitionKey, seed.RowKey)
	}, nil}
	opUpsertReplace = op{"Insert Or Replace Entity", func(ctx context.Context, b api.Backend, t string) error {
		_, err := b.UpdateEntity(ctx, t, fresh, api.Replace, "")
		return err
	}, []api.Entity{seed, fresh}}
	opUpsertMerge = op{"Insert Or Merge Entity", func(ctx context.Context, b api.Backend, t string) error {
		_, err := b.UpdateEntity(ctx, t, fresh, api.Merge, "")
		return err
	}, []api.Entity{seed, fresh}}

	allOps = []op{opGet, opQuery, opInsert, opReplace, opMerge, opDelete, opUpsertReplace, opUpsertMerge}

	// contentRules names, by operation, the rule whose subject is the content an allowed
	// operation leaves when it is not the SAS's own subject.
	contentRules = map[string]string{opReplace.name: "modify.replace.removes-omitted", opMerge.name: "modify.merge.keeps-omitted"}
)

// permissionEntries returns one Entry per operation for a SAS with permissions perm: the
// operations in allowed must succeed, the others must be refused.
func permissionEntries(perm string, allowed ...op) []any {
	out := make([]any, 0, len(allOps))
	for _, o := range allOps {
		ok := slices.ContainsFunc(allowed, func(a op) bool { return a.name == o.name })
		verb := "refuses"
		if ok {
			verb = "allows"
		}
		out = append(out, Entry(fmt.Sprintf("%s %s", verb, o.name), perm, o, ok))
	}
	return out
}

// withSAS stores the seed entity in a fresh table with the account key and returns a
// backend that acts through a SAS with opts (Table set to the new table when empty).
// requireValidSAS is the precondition of every spec of a service SAS: a valid SAS with
// permission r for the table reads stored, an entity the spec stored there
// (auth.sas.permission.read). A backend that refuses every SAS would otherwise pass each
// rule whose spec expects a refusal (an expired SAS, another table, a missing permission,
// a key outside a range) without its subject ever running.
func requireValidSAS(ctx context.Context, f *framework.F, issuer driver.SASIssuer, table string, stored api.Entity) {
	GinkgoHelper()
	f.Requires("auth.sas.permission.read", "read a stored entity through a valid SAS with permission r", func() {
		valid, err := issuer.WithSAS(ctx, driver.SASOptions{Permissions: "r", Table: table, Expiry: time.Now().Add(sasLifetime)})
		Expect(err).NotTo(HaveOccurred(), "issue a valid SAS")
		got, err := valid.GetEntity(ctx, table, stored.PartitionKey, stored.RowKey, nil)
		Expect(err).To(SucceedOnBackend(), "Get Entity through a valid SAS with permission r")
		Expect(got).To(MatchEntity(stored), "the stored entity through a valid SAS")
	})
}

func withSAS(ctx context.Context, f *framework.F, opts driver.SASOptions) (master, viaSAS api.Backend, table string) {
	GinkgoHelper()
	issuer := f.SAS()
	master, table = f.Backend(), f.NewTable(ctx)
	f.Requires("modify.insert.stores", "store the seed entity with the account key", func() {
		_, err := master.InsertEntity(ctx, table, seed)
		Expect(err).To(SucceedOnBackend(), "store the seed entity with the account key")
	})
	requireValidSAS(ctx, f, issuer, table, seed)
	if opts.Table == "" {
		opts.Table = table
	}
	if opts.Expiry.IsZero() {
		opts.Expiry = time.Now().Add(sasLifetime)
	}
	viaSAS, err := issuer.WithSAS(ctx, opts)
	Expect(err).NotTo(HaveOccurred(), "issue a SAS %+v", opts)
	return master, viaSAS, table
}

// expectTable checks, with the account key, that the table holds exactly want.
func expectTable(ctx context.Context, master api.Backend, table string, want []api.Entity, why string) {
	GinkgoHelper()
	page, err := master.QueryEntities(ctx, table, api.Query{})
	Expect(err).To(SucceedOnBackend(), "Query Entities with the account key")
	matchers := make([]any, len(want))
	for i, e := range want {
		matchers[i] = MatchEntity(e)
	}
	Expect(page.Entities).To(ConsistOf(matchers...), why)
}

// refusedPermission is what a SAS lacking a permission answers (CERR lists both codes).
var refusedPermission = []spec.ErrorCode{spec.ErrAuthorizationFailure, spec.ErrAuthPermissionMismatch}

var _ = framework.Describe("Shared access signatures", func(f *framework.F) {
	permissionBody := func(ctx context.Context, perm string, o op, allowed bool) {
		master, viaSAS, table := withSAS(ctx, f, driver.SASOptions{Permissions: perm})
		err := o.do(ctx, viaSAS, table)
		if allowed {
			Expect(err).To(SucceedOnBackend(), "%s through a SAS with permissions %q", o.name, perm)
			if o.name == opDelete.name {
				scenario.RequireDeleted(ctx, f, master, table, seed.Key())
			}
			// What an allowed replace or merge leaves is the subject of the write's own rule.
			if rule, ok := contentRules[o.name]; ok {
				f.Requires(rule, "the "+o.name+" leaves what it stores", func() {
					expectTable(ctx, master, table, o.after, fmt.Sprintf("after %s through a SAS with permissions %q", o.name, perm))
				})
				return
			}
			expectTable(ctx, master, table, o.after, fmt.Sprintf("after %s through a SAS with permissions %q", o.name, perm))
			return
		}
		Expect(err).To(HaveFailedAs(refusedPermission...), "%s through a SAS with permissions %q", o.name, perm)
		f.Choice("code for a missing SAS permission", OutcomeOf(err))
		expectTable(ctx, master, table, []api.Entity{seed}, fmt.Sprintf("the refused %s changed the table", o.name))
	}

	Context("with permission r", func() {
		f.DescribeTable("auth.sas.permission.read", "allows reads only", permissionBody,
			permissionEntries("r", opGet, opQuery)...)
	})
	Context("with permission a", func() {
		f.DescribeTable("auth.sas.permission.add", "allows inserts only", permissionBody,
			permissionEntries("a", opInsert)...)
	})
	Context("with permission u", func() {
		f.DescribeTable("auth.sas.permission.update", "allows updates and merges only", permissionBody,
			permissionEntries("u", opReplace, opMerge)...)
	})
	Context("with permission d", func() {
		f.DescribeTable("auth.sas.permission.delete", "allows deletes only", permissionBody,
			permissionEntries("d", opDelete)...)
	})
	Context("with permissions raud", func() {
		f.DescribeTable("auth.sas.permission.all", "allows every entity operation", permissionBody,
			permissionEntries("raud", allOps...)...)
	})
	Context("when an upsert is sent", func() {
		f.DescribeTable("auth.sas.permission.upsert", "needs permissions a and u together", permissionBody,
			Entry("a and u allow Insert Or Replace Entity", "au", opUpsertReplace, true),
			Entry("a and u allow Insert Or Merge Entity", "au", opUpsertMerge, true),
			Entry("a alone refuses Insert Or Replace Entity", "a", opUpsertReplace, false),
			Entry("a alone refuses Insert Or Merge Entity", "a", opUpsertMerge, false),
			Entry("u alone refuses Insert Or Replace Entity", "u", opUpsertReplace, false),
			Entry("u alone refuses Insert Or Merge Entity", "u", opUpsertMerge, false),
			Entry("r, u and d without a refuse Insert Or Replace Entity", "rud", opUpsertReplace, false),
		)
	})

	timeBody := func(start, expiry time.Duration) func(ctx context.Context, o op) {
		return func(ctx context.Context, o op) {
			now := time.Now()
			master, viaSAS, table := withSAS(ctx, f, driver.SASOptions{Permissions: "raud", Start: now.Add(start), Expiry: now.Add(expiry)})
			err := o.do(ctx, viaSAS, table)
			Expect(err).To(HaveFailedAs(spec.ErrAuthenticationFailed), "%s through a SAS valid from %s to %s from now", o.name, start, expiry)
			expectTable(ctx, master, table, []api.Entity{seed}, fmt.Sprintf("the refused %s changed the table", o.name))
		}
	}
	timeEntries := []any{Entry("for Get Entity", opGet), Entry("for Query Entities", opQuery), Entry("for Insert Entity", opInsert), Entry("for Delete Entity", opDelete)}
	Context("when the SAS has expired", func() {
		f.DescribeTable("auth.sas.expired", "refuses with 403 AuthenticationFailed", timeBody(-2*time.Hour, -time.Hour), timeEntries...)
	})
	Context("when the SAS is not valid yet", func() {
		f.DescribeTable("auth.sas.not-yet-valid", "refuses with 403 AuthenticationFailed", timeBody(time.Hour, 2*time.Hour), timeEntries...)
	})

	Context("when the SAS names another table", func() {
		f.DescribeTable("auth.sas.other-table", "refuses with 403",
			func(ctx context.Context, o op) {
				other := f.NewTable(ctx)
				master, viaSAS, table := withSAS(ctx, f, driver.SASOptions{Permissions: "raud", Table: other})
				err := o.do(ctx, viaSAS, table)
				Expect(err).To(HaveFailedWithStatus(403), "%s on %s through a SAS for %s", o.name, table, other)
				f.Choice("code for a SAS of another table", OutcomeOf(err))
				expectTable(ctx, master, table, []api.Entity{seed}, fmt.Sprintf("the refused %s changed the table", o.name))
			},
			Entry("for Get Entity", opGet),
			Entry("for Query Entities", opQuery),
			Entry("for Insert Entity", opInsert),
			Entry("for Update Entity", opReplace),
			Entry("for Delete Entity", opDelete),
		)
	})

	Context("when a table operation is sent through a service SAS", func() {
		f.It("auth.sas.no-table-management", "refuses Create Table with 403", func(ctx context.Context) {
			_, viaSAS, _ := withSAS(ctx, f, driver.SASOptions{Permissions: "raud"})
			name := f.TableName()
			err := viaSAS.CreateTable(ctx, name)
			if err == nil {
				f.CleanupTable(name)
			}
			Expect(err).To(HaveFailedWithStatus(403), "Create Table %s through a SAS for another table", name)
			f.Choice("code for Create Table through a service SAS", OutcomeOf(err))
		})
		f.It("auth.sas.no-table-management", "refuses Delete Table of its own table with 403", func(ctx context.Context) {
			master, viaSAS, table := withSAS(ctx, f, driver.SASOptions{Permissions: "raud"})
			err := viaSAS.DeleteTable(ctx, table)
			Expect(err).To(HaveFailedWithStatus(403), "Delete Table %s through its own SAS", table)
			f.Choice("code for Delete Table through a service SAS", OutcomeOf(err))
			expectTable(ctx, master, table, []api.Entity{seed}, "the refused Delete Table changed the table")
		})
	})
})
