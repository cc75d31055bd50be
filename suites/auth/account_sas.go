package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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

// accountOp is one operation sent through an account SAS on the spec's table, with the
// resource type and the permission letters the account SAS needs for it (EVIDENCE.md,
// E-account-sas). check, when set, verifies with the account key what an allowed
// operation did.
type accountOp struct {
	name     string
	resource string
	perms    string
	do       func(ctx context.Context, f *framework.F, viaSAS api.Backend, table string) error
}

var (
	acctQuery = accountOp{"Query Entities", "o", "r", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		page, err := b.QueryEntities(ctx, t, api.Query{Filter: "PartitionKey eq 'p'"})
		if err == nil {
			Expect(page.Entities).To(ConsistOf(MatchEntity(seed)), "Query Entities through the account SAS")
		}
		return err
	}}
	acctGet = accountOp{"Get Entity", "o", "r", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		got, err := b.GetEntity(ctx, t, seed.PartitionKey, seed.RowKey, nil)
		if err == nil {
			Expect(got).To(MatchEntity(seed), "Get Entity through the account SAS")
		}
		return err
	}}
	acctInsert = accountOp{"Insert Entity", "o", "a", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		_, err := b.InsertEntity(ctx, t, fresh)
		return err
	}}
	acctUpdate = accountOp{"Update Entity", "o", "u", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		_, err := scenario.UpdateAny(ctx, b, t, seed.With("V", api.Int32(2)), api.Replace)
		return err
	}}
	acctUpsert = accountOp{"Insert Or Merge Entity", "o", "au", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		_, err := b.UpdateEntity(ctx, t, fresh, api.Merge, "")
		return err
	}}
	acctDelete = accountOp{"Delete Entity", "o", "d", func(ctx context.Context, _ *framework.F, b api.Backend, t string) error {
		return scenario.DeleteAny(ctx, b, t, seed.PartitionKey, seed.RowKey)
	}}
	acctListTables = accountOp{"Query Tables", "c", "l", func(ctx context.Context, f *framework.F, b api.Backend, t string) error {
		page, err := b.QueryTables(ctx, api.TableQuery{Filter: "TableName eq '" + t + "'"})
		if err == nil {
			// Judged on the spec's own table alone: the account holds other clients' tables.
			var own []string
			for _, n := range page.Tables {
				if strings.EqualFold(n, t) {
					own = append(own, n)
				}
			}
			Expect(own).To(ConsistOf(t), "the spec's table in Query Tables through the account SAS")
		}
		return err
	}}
	acctCreateTable = accountOp{"Create Table", "c", "w", func(ctx context.Context, f *framework.F, b api.Backend, _ string) error {
		name := f.TableName()
		f.CleanupTable(name)
		return b.CreateTable(ctx, name)
	}}
	acctDeleteTable = accountOp{"Delete Table", "c", "d", func(ctx context.Context, f *framework.F, b api.Backend, _ string) error {
		name := f.NewTable(ctx)
		return b.DeleteTable(ctx, name)
	}}

	accountOps = []accountOp{acctQuery, acctGet, acctInsert, acctUpdate, acctUpsert, acctDelete, acctListTables, acctCreateTable, acctDeleteTable}
)

// withAccountSAS stores the seed entity in a fresh table with the account key and returns
// a backend that acts through an account SAS with opts (Services "t" and an expiry an hour
// from now when unset).
func withAccountSAS(ctx context.Context, f *framework.F, opts driver.AccountSASOptions) (master, viaSAS api.Backend, table string) {
	GinkgoHelper()
	issuer := f.SAS()
	master, table = f.Backend(), f.NewTable(ctx)
	f.Requires("modify.insert.stores", "store the seed entity with the account key", func() {
		_, err := master.InsertEntity(ctx, table, seed)
		Expect(err).To(SucceedOnBackend(), "store the seed entity with the account key")
	})
	// A valid account SAS must read first: a backend that refuses every account SAS would
	// otherwise pass each rule whose spec expects a refusal (auth.account-sas.permissions
	// covers the read).
	f.Requires("auth.account-sas.permissions", "read the seed entity through a valid account SAS with permission r", func() {
		valid, err := issuer.WithAccountSAS(ctx, driver.AccountSASOptions{Services: "t", ResourceTypes: "sco", Permissions: "r", Expiry: time.Now().Add(sasLifetime)})
		Expect(err).NotTo(HaveOccurred(), "issue a valid account SAS")
		got, err := valid.GetEntity(ctx, table, seed.PartitionKey, seed.RowKey, nil)
		Expect(err).To(SucceedOnBackend(), "Get Entity through a valid account SAS with permission r")
		Expect(got).To(MatchEntity(seed), "the seed entity through a valid account SAS")
	})
	if opts.Services == "" {
		opts.Services = "t"
	}
	if opts.Expiry.IsZero() {
		opts.Expiry = time.Now().Add(sasLifetime)
	}
	viaSAS, err := issuer.WithAccountSAS(ctx, opts)
	Expect(err).NotTo(HaveOccurred(), "issue an account SAS %+v", opts)
	return master, viaSAS, table
}

// entityOp says whether an operation acts on entities (and must leave the table as it was
// when refused).
func (o accountOp) entityOp() bool { return o.resource == "o" }

var _ = framework.Describe("Account shared access signatures", func(f *framework.F) {
	Context("when the SAS lacks the operation's resource type", func() {
		f.DescribeTable("auth.account-sas.resource-types", "allows only the resource types it signs",
			func(ctx context.Context, srt string, o accountOp, allowed bool) {
				master, viaSAS, table := withAccountSAS(ctx, f, driver.AccountSASOptions{ResourceTypes: srt, Permissions: "rwdlacu"})
				err := o.do(ctx, f, viaSAS, table)
				if allowed {
					Expect(err).To(SucceedOnBackend(), "%s through an account SAS with srt=%s", o.name, srt)
					return
				}
				Expect(err).To(HaveFailedAs(spec.ErrAuthResourceTypeMismatch), "%s through an account SAS with srt=%s", o.name, srt)
				if o.entityOp() {
					expectTable(ctx, master, table, []api.Entity{seed}, fmt.Sprintf("the refused %s changed the table", o.name))
				}
			},
			Entry("srt=o allows Query Entities", "o", acctQuery, true),
			Entry("srt=o allows Insert Entity", "o", acctInsert, true),
			Entry("srt=o refuses Query Tables", "o", acctListTables, false),
			Entry("srt=o refuses Create Table", "o", acctCreateTable, false),
			Entry("srt=c allows Query Tables", "c", acctListTables, true),
			Entry("srt=c allows Create Table", "c", acctCreateTable, true),
			Entry("srt=c refuses Get Entity", "c", acctGet, false),
			Entry("srt=c refuses Insert Entity", "c", acctInsert, false),
			Entry("srt=s refuses Query Entities", "s", acctQuery, false),
			Entry("srt=s refuses Delete Entity", "s", acctDelete, false),
			Entry("srt=sco allows Delete Table", "sco", acctDeleteTable, true),
		)
	})

	Context("when the SAS lacks the operation's permission", func() {
		body := func(ctx context.Context, o accountOp, perms string, allowed bool) {
			master, viaSAS, table := withAccountSAS(ctx, f, driver.AccountSASOptions{ResourceTypes: "sco", Permissions: perms})
			err := o.do(ctx, f, viaSAS, table)
			if allowed {
				Expect(err).To(SucceedOnBackend(), "%s through an account SAS with sp=%s", o.name, perms)
				return
			}
			Expect(err).To(HaveFailedAs(spec.ErrAuthPermissionMismatch), "%s through an account SAS with sp=%s", o.name, perms)
			if o.entityOp() {
				expectTable(ctx, master, table, []api.Entity{seed}, fmt.Sprintf("the refused %s changed the table", o.name))
			}
		}
		var entries []any
		for _, o := range accountOps {
			entries = append(entries, Entry(fmt.Sprintf("%s is allowed with sp=%s", o.name, o.perms), o, o.perms, true))
			without := "rwdlacu"
			for _, p := range o.perms {
				without = removeLetter(without, p)
			}
			if o.name == "Create Table" {
				without = "rdlu" // neither w nor a nor c, which may each create a table
			}
			entries = append(entries, Entry(fmt.Sprintf("%s is refused with sp=%s", o.name, without), o, without, false))
		}
		f.DescribeTable("auth.account-sas.permissions", "allows each operation only with its permission", body, entries...)
	})

	f.It("auth.account-sas.service", "refuses an account SAS without the Table service", func(ctx context.Context) {
		master, viaSAS, table := withAccountSAS(ctx, f, driver.AccountSASOptions{Services: "bfq", ResourceTypes: "sco", Permissions: "rwdlacu"})
		err := acctInsert.do(ctx, f, viaSAS, table)
		Expect(err).To(HaveFailedAs(spec.ErrAuthServiceMismatch), "Insert Entity through an account SAS with ss=bfq")
		expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
	})

	f.DescribeTable("auth.account-sas.expired", "refuses an account SAS outside its validity with 403 AuthenticationFailed",
		func(ctx context.Context, start, expiry time.Duration) {
			now := time.Now()
			master, viaSAS, table := withAccountSAS(ctx, f, driver.AccountSASOptions{ResourceTypes: "sco", Permissions: "rwdlacu",
				Start: now.Add(start), Expiry: now.Add(expiry)})
			Expect(acctGet.do(ctx, f, viaSAS, table)).To(HaveFailedAs(spec.ErrAuthenticationFailed), "Get Entity")
			Expect(acctInsert.do(ctx, f, viaSAS, table)).To(HaveFailedAs(spec.ErrAuthenticationFailed), "Insert Entity")
			expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
		},
		Entry("expired an hour ago", -2*time.Hour, -time.Hour),
		Entry("valid from an hour from now", time.Hour, 2*time.Hour),
	)

	f.It("auth.account-sas.signature", "refuses an account SAS whose signature does not match", func(ctx context.Context) {
		master, viaSAS, table := withAccountSAS(ctx, f, driver.AccountSASOptions{ResourceTypes: "sco", Permissions: "rwdlacu"})
		raw, ok := viaSAS.(driver.RawHTTP)
		if !ok {
			Skip("capability missing: " + string(driver.CapRawHTTP))
		}
		req, err := raw.NewRequest(ctx, http.MethodPost, table, []byte(`{"PartitionKey":"p","RowKey":"forged","V":1}`))
		Expect(err).NotTo(HaveOccurred())
		q := req.URL.Query()
		q.Set("sig", forgedSignature)
		req.URL.RawQuery = q.Encode()
		resp, err := raw.Do(req)
		Expect(err).NotTo(HaveOccurred(), "conform:transport: Insert Entity with a forged account SAS")
		Expect(resp).To(HaveAnswered([]int{spec.ErrAuthenticationFailed.Status}, spec.ErrAuthenticationFailed.Code))
		_, _, _ = readAnswer(resp)
		expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
	})
})

// forgedSignature is a well-formed signature that no key produced.
const forgedSignature = "Y29uZm9ybTogbm90IGEgc2lnbmF0dXJlIGF0IGFsbCEhISE="

func removeLetter(s string, r rune) string {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if c != r {
			out = append(out, c)
		}
	}
	return string(out)
}
