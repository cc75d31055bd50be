package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// IP ranges for the sip specs: every IPv4 address, and one address of TEST-NET-3 (RFC
// 5737), which no client of a test run has.
const (
	everyIPv4  = "0.0.0.0-255.255.255.255"
	notOurIPv4 = "203.0.113.7"
)

// sasKind issues a service or an account SAS with an IP range and a protocol and returns
// the backend acting through it on a fresh table holding the seed entity.
type sasKind struct {
	name  string
	issue func(ctx context.Context, f *framework.F, ip, protocol string) (master, viaSAS api.Backend, table string)
}

var (
	serviceSASKind = sasKind{"a service SAS", func(ctx context.Context, f *framework.F, ip, protocol string) (api.Backend, api.Backend, string) {
		return withSAS(ctx, f, driver.SASOptions{Permissions: "raud", IPRange: ip, Protocol: protocol})
	}}
	accountSASKind = sasKind{"an account SAS", func(ctx context.Context, f *framework.F, ip, protocol string) (api.Backend, api.Backend, string) {
		return withAccountSAS(ctx, f, driver.AccountSASOptions{ResourceTypes: "sco", Permissions: "rwdlacu", IPRange: ip, Protocol: protocol})
	}}
)

// plainHTTP says whether the backend is reached over plain HTTP; unknown (in process)
// counts as HTTP, as its SAS specs go through a loopback server.
func plainHTTP(f *framework.F) bool {
	u, err := url.Parse(f.Info().Endpoint)
	return err != nil || u.Scheme != "https"
}

var _ = framework.Describe("SAS restrictions and stored access policies", func(f *framework.F) {
	f.DescribeTable("auth.sas.ip", "allows requests from inside the signed IP range only",
		func(ctx context.Context, k sasKind, ip string, allowed bool) {
			master, viaSAS, table := k.issue(ctx, f, ip, "")
			err := opGet.do(ctx, viaSAS, table)
			if allowed {
				Expect(err).To(SucceedOnBackend(), "Get Entity through %s with sip=%s", k.name, ip)
				return
			}
			Expect(err).To(HaveFailedAs(spec.ErrAuthSourceIPMismatch), "Get Entity through %s with sip=%s", k.name, ip)
			_, err = viaSAS.InsertEntity(ctx, table, fresh)
			Expect(err).To(HaveFailedAs(spec.ErrAuthSourceIPMismatch), "Insert Entity through %s with sip=%s", k.name, ip)
			expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
		},
		Entry("a service SAS for every IPv4 address", serviceSASKind, everyIPv4, true),
		Entry("a service SAS for an address that is not the client's", serviceSASKind, notOurIPv4, false),
		Entry("an account SAS for every IPv4 address", accountSASKind, everyIPv4, true),
		Entry("an account SAS for an address that is not the client's", accountSASKind, notOurIPv4, false),
	)

	f.DescribeTable("auth.sas.protocol", "enforces the signed protocol",
		func(ctx context.Context, k sasKind, protocol string) {
			master, viaSAS, table := k.issue(ctx, f, "", protocol)
			err := opGet.do(ctx, viaSAS, table)
			if protocol == "https" && plainHTTP(f) {
				Expect(err).To(HaveFailedAs(spec.ErrAuthProtocolMismatch), "Get Entity over HTTP through %s with spr=https", k.name)
				_, err = viaSAS.InsertEntity(ctx, table, fresh)
				Expect(err).To(HaveFailedAs(spec.ErrAuthProtocolMismatch), "Insert Entity over HTTP through %s with spr=https", k.name)
				expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
				return
			}
			Expect(err).To(SucceedOnBackend(), "Get Entity through %s with spr=%s", k.name, protocol)
		},
		Entry("a service SAS with spr=https", serviceSASKind, "https"),
		Entry("a service SAS with spr=https,http", serviceSASKind, "https,http"),
		Entry("an account SAS with spr=https", accountSASKind, "https"),
		Entry("an account SAS with spr=https,http", accountSASKind, "https,http"),
	)

	// setPolicies replaces the stored access policies of table with the account key; each
	// policy starts an hour ago, as the SDKs send a start.
	setPolicies := func(ctx context.Context, table string, ps map[string]string, expiry time.Time) {
		GinkgoHelper()
		raw := f.Raw()
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
		for id, perm := range ps {
			fmt.Fprintf(&b, "<SignedIdentifier><Id>%s</Id><AccessPolicy><Start>%s</Start><Expiry>%s</Expiry><Permission>%s</Permission></AccessPolicy></SignedIdentifier>",
				id, time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.0000000Z"), expiry.UTC().Format("2006-01-02T15:04:05.0000000Z"), perm)
		}
		b.WriteString("</SignedIdentifiers>")
		req, err := raw.NewRequest(ctx, http.MethodPut, table+"?comp=acl", []byte(b.String()))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Accept", "application/xml")
		req.Header.Set("Content-Type", "application/xml")
		resp, err := raw.Do(req)
		Expect(err).NotTo(HaveOccurred(), "conform:transport: Set Table ACL")
		status, code, body := readAnswer(resp)
		framework.Requires("service.acl.accept-xml", "Set Table ACL with an XML Accept answers 204", func() {
			Expect(status).To(Equal(http.StatusNoContent), "Set Table ACL answered %d %s %s", status, code, body)
		})
	}

	// withPolicySAS stores the seed entity and a policy "readers" (permission r) on a fresh
	// table and returns a backend acting through a SAS that names the policy id and signs
	// neither permissions nor times.
	withPolicySAS := func(ctx context.Context, id string) (master, viaSAS api.Backend, table string) {
		GinkgoHelper()
		issuer := f.SAS()
		f.Raw()
		master, table = f.Backend(), f.NewTable(ctx)
		f.Requires("modify.insert.stores", "store the seed entity with the account key", func() {
			_, err := master.InsertEntity(ctx, table, seed)
			Expect(err).To(SucceedOnBackend(), "store the seed entity with the account key")
		})
		requireValidSAS(ctx, f, issuer, table, seed)
		setPolicies(ctx, table, map[string]string{"readers": "r"}, time.Now().Add(sasLifetime))
		viaSAS, err := issuer.WithSAS(ctx, driver.SASOptions{Table: table, Identifier: id})
		Expect(err).NotTo(HaveOccurred(), "issue a SAS naming the policy %q", id)
		return master, viaSAS, table
	}

	// requirePolicySAS is the precondition of the specs that judge a policy's removal or
	// absence: a SAS naming the stored policy "readers" reads the seed entity
	// (auth.sas.stored-policy). A backend that refuses every SAS naming a policy would
	// otherwise pass them without their subject ever running.
	requirePolicySAS := func(ctx context.Context, table string) {
		GinkgoHelper()
		f.Requires("auth.sas.stored-policy", "read the seed entity through a SAS naming the policy readers", func() {
			viaPolicy, err := f.SAS().WithSAS(ctx, driver.SASOptions{Table: table, Identifier: "readers"})
			Expect(err).NotTo(HaveOccurred(), "issue a SAS naming the policy readers")
			Expect(opGet.do(ctx, viaPolicy, table)).To(SucceedOnBackend(), "Get Entity through a SAS naming a read policy")
		})
	}

	f.It("auth.sas.stored-policy", "takes permissions and expiry from the stored access policy", func(ctx context.Context) {
		master, viaSAS, table := withPolicySAS(ctx, "readers")
		Expect(opGet.do(ctx, viaSAS, table)).To(SucceedOnBackend(), "Get Entity through a SAS naming a read policy")
		Expect(opQuery.do(ctx, viaSAS, table)).To(SucceedOnBackend(), "Query Entities through a SAS naming a read policy")
		err := opInsert.do(ctx, viaSAS, table)
		Expect(err).To(HaveFailedAs(refusedPermission...), "Insert Entity through a SAS naming a read policy")
		expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
	})

	f.It("auth.sas.stored-policy-revoked", "refuses the SAS once its policy is removed", func(ctx context.Context) {
		_, viaSAS, table := withPolicySAS(ctx, "readers")
		requirePolicySAS(ctx, table)
		setPolicies(ctx, table, map[string]string{"others": "r"}, time.Now().Add(sasLifetime))
		// The documentation allows 30 seconds for a changed policy to take effect.
		Eventually(func() error { return opGet.do(ctx, viaSAS, table) }).WithContext(ctx).
			WithTimeout(45*time.Second).WithPolling(time.Second).
			Should(HaveFailedWithStatus(http.StatusForbidden), "Get Entity through a SAS whose policy was removed")
	}, NodeTimeout(90*time.Second))

	f.It("auth.sas.stored-policy-unknown", "refuses a SAS naming no policy of its table", func(ctx context.Context) {
		master, viaSAS, table := withPolicySAS(ctx, "nosuchpolicy")
		requirePolicySAS(ctx, table)
		Expect(opGet.do(ctx, viaSAS, table)).To(HaveFailedAs(spec.ErrAuthenticationFailed), "Get Entity through a SAS naming no policy")
		Expect(opInsert.do(ctx, viaSAS, table)).To(HaveFailedAs(spec.ErrAuthenticationFailed), "Insert Entity through a SAS naming no policy")
		expectTable(ctx, master, table, []api.Entity{seed}, "the refused Insert Entity changed the table")
	})
})
