package service

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
)

// signedIdentifiers is the XML of Get/Set Table ACL.
type signedIdentifiers struct {
	XMLName     struct{}           `xml:"SignedIdentifiers"`
	Identifiers []signedIdentifier `xml:"SignedIdentifier"`
}

type signedIdentifier struct {
	ID     string `xml:"Id"`
	Policy struct {
		Start      string `xml:"Start"`
		Expiry     string `xml:"Expiry"`
		Permission string `xml:"Permission"`
	} `xml:"AccessPolicy"`
}

// policy is one stored access policy as a spec sets it.
type policy struct {
	id, permission string
	start, expiry  time.Time
}

// aclBody renders a Set Table ACL body, times in the seven-digit form the SDKs send.
func aclBody(ps ...policy) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
	for _, p := range ps {
		fmt.Fprintf(&b, "<SignedIdentifier><Id>%s</Id><AccessPolicy>", p.id)
		if !p.start.IsZero() {
			fmt.Fprintf(&b, "<Start>%s</Start>", p.start.UTC().Format("2006-01-02T15:04:05.0000000Z"))
		}
		if !p.expiry.IsZero() {
			fmt.Fprintf(&b, "<Expiry>%s</Expiry>", p.expiry.UTC().Format("2006-01-02T15:04:05.0000000Z"))
		}
		if p.permission != "" {
			fmt.Fprintf(&b, "<Permission>%s</Permission>", p.permission)
		}
		b.WriteString("</AccessPolicy></SignedIdentifier>")
	}
	b.WriteString("</SignedIdentifiers>")
	return []byte(b.String())
}

func aclPath(table string) string { return table + "?comp=acl" }

// readACL decodes the answer to Get Table ACL into v. That the answer is the document of
// the policies set is service.acl.roundtrip's subject: a precondition of the specs that
// read the policies for another purpose.
func readACL(f *framework.F, get answer, v any) {
	GinkgoHelper()
	f.Requires("service.acl.roundtrip", "read the policies with Get Table ACL", func() {
		Expect(get.status).To(Equal(http.StatusOK), "Get Table ACL: %s", get)
		decodeXML(get, v)
	})
}

// sameInstant reports whether two ACL times name the same instant, whatever their digits.
func sameInstant(got string, want time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, got)
	return err == nil && t.Equal(want.UTC().Truncate(time.Second))
}

// ruleACLAnswers is the rule whose subject includes the answers of Get and Set Table ACL:
// 200 with XML and 204.
const ruleACLAnswers = "service.acl.accept-xml"

// expectACLSet asserts that set, the answer of Set Table ACL (what), accepted the policies;
// its exact status, 204, is a precondition under ruleACLAnswers.
func expectACLSet(f *framework.F, set answer, what string) {
	GinkgoHelper()
	Expect(set.status).To(BeNumerically("<", 300), "%s: %s", what, set)
	f.Requires(ruleACLAnswers, what+" answers 204", func() {
		Expect(set.status).To(Equal(http.StatusNoContent), "%s: %s", what, set)
	})
}

var _ = framework.Describe("Table ACL", func(f *framework.F) {
	start := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	expiry := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)

	f.DescribeTable("service.acl.accept-xml", "serves Get and Set Table ACL with the XML Accept headers the SDKs send",
		func(ctx context.Context, accept string) {
			raw := f.Raw()
			table := f.NewTable(ctx)
			set := sendXML(ctx, raw, http.MethodPut, aclPath(table), aclBody(policy{id: "readers", permission: "r", start: start, expiry: expiry}), map[string]string{"Accept": accept}, nil)
			Expect(set.status).To(Equal(http.StatusNoContent), "Set Table ACL with Accept %q: %s", accept, set)
			get := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, map[string]string{"Accept": accept}, nil)
			Expect(get.status).To(Equal(http.StatusOK), "Get Table ACL with Accept %q: %s", accept, get)
			var ids signedIdentifiers
			readACL(f, get, &ids)
			Expect(ids.Identifiers).To(HaveLen(1), "Get Table ACL: %s", get)
			Expect(ids.Identifiers[0].ID).To(Equal("readers"))
		},
		Entry("Accept: application/xml (Go and Python SDKs)", acceptXML),
		Entry("Accept: application/atom+xml,application/xml (legacy Node SDK)", acceptAtomXML),
	)

	f.It("service.acl.empty", "answers an empty SignedIdentifiers element for a table without policies", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		get := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, nil, nil)
		Expect(get.status).To(Equal(http.StatusOK), "Get Table ACL: %s", get)
		var ids signedIdentifiers
		decodeXML(get, &ids)
		Expect(ids.Identifiers).To(BeEmpty(), "Get Table ACL of a new table: %s", get)
	})

	f.It("service.acl.roundtrip", "answers the policies that were set", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		want := []policy{{id: "readers", permission: "r", start: start, expiry: expiry}, {id: "writers", permission: "raud", start: start.Add(time.Hour), expiry: expiry}}
		set := sendXML(ctx, raw, http.MethodPut, aclPath(table), aclBody(want...), nil, nil)
		expectACLSet(f, set, "Set Table ACL")
		get := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, nil, nil)
		Expect(get.status).To(Equal(http.StatusOK), "Get Table ACL: %s", get)
		var ids signedIdentifiers
		decodeXML(get, &ids)
		Expect(ids.Identifiers).To(HaveLen(2), "Get Table ACL: %s", get)
		for i, w := range want {
			g := ids.Identifiers[i]
			Expect(g.ID).To(Equal(w.id), "policy %d: %s", i, get)
			Expect(g.Policy.Permission).To(Equal(w.permission), "permission of %s: %s", w.id, get)
			Expect(sameInstant(g.Policy.Expiry, w.expiry)).To(BeTrue(), "expiry of %s: %s", w.id, get)
			if !w.start.IsZero() {
				Expect(sameInstant(g.Policy.Start, w.start)).To(BeTrue(), "start of %s: %s", w.id, get)
			}
		}
	})

	f.It("service.acl.partial", "accepts policies without some or all of their fields and answers them as set", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		body := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>` +
			`<SignedIdentifier><Id>none</Id></SignedIdentifier>` +
			`<SignedIdentifier><Id>empty</Id><AccessPolicy /></SignedIdentifier>` +
			`<SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier>` +
			`<SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-06-08T02:10:09Z</Start><Expiry>2021-06-08T02:10:09Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>` +
			`</SignedIdentifiers>`
		set := sendXML(ctx, raw, http.MethodPut, aclPath(table), []byte(body), nil, nil)
		expectACLSet(f, set, "Set Table ACL with partial policies")
		get := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, nil, nil)
		Expect(get.status).To(Equal(http.StatusOK), "Get Table ACL: %s", get)
		var ids struct {
			Identifiers []struct {
				ID     string `xml:"Id"`
				Policy *struct {
					Start      string `xml:"Start"`
					Expiry     string `xml:"Expiry"`
					Permission string `xml:"Permission"`
				} `xml:"AccessPolicy"`
			} `xml:"SignedIdentifier"`
		}
		readACL(f, get, &ids)
		Expect(ids.Identifiers).To(HaveLen(4), "Get Table ACL: %s", get)
		byID := map[string]int{}
		for i, id := range ids.Identifiers {
			byID[id.ID] = i
		}
		for _, id := range []string{"none", "empty", "partial", "full"} {
			Expect(byID).To(HaveKey(id), "Get Table ACL lost the identifier %s: %s", id, get)
		}
		Expect(ids.Identifiers[byID["none"]].Policy).To(BeNil(), "an identifier without a policy got an AccessPolicy: %s", get)
		Expect(ids.Identifiers[byID["empty"]].Policy).To(BeNil(), "an identifier with an empty policy got an AccessPolicy: %s", get)
		partial := ids.Identifiers[byID["partial"]].Policy
		Expect(partial).NotTo(BeNil(), "the partial policy: %s", get)
		Expect(partial.Permission).To(Equal("r"), "the partial policy: %s", get)
		Expect(partial.Start+partial.Expiry).To(BeEmpty(), "the partial policy got times: %s", get)
		full := ids.Identifiers[byID["full"]].Policy
		Expect(full).NotTo(BeNil(), "the full policy: %s", get)
		Expect(sameInstant(full.Start, time.Date(2021, 6, 8, 2, 10, 9, 0, time.UTC))).To(BeTrue(), "the full policy's start: %s", get)
	})

	f.DescribeTable("service.acl.missing-table", "answers 404 ResourceNotFound for a table that does not exist",
		func(ctx context.Context, method string) {
			raw := f.Raw()
			table := f.TableName()
			var body []byte
			if method == http.MethodPut {
				body = aclBody(policy{id: "readers", permission: "r", start: start, expiry: expiry})
			}
			a := sendXML(ctx, raw, method, aclPath(table), body, nil, nil)
			Expect(a.status).To(Equal(spec.ErrResourceNotFound.Status), "%s", a)
			Expect(a.code()).To(Equal(spec.ErrResourceNotFound.Code), "%s", a)
		},
		Entry("Get Table ACL", http.MethodGet),
		Entry("Set Table ACL", http.MethodPut),
	)

	f.DescribeTable("service.acl.error-xml", "writes its errors in the m: prefixed OData XML form",
		func(ctx context.Context, method string) {
			raw := f.Raw()
			table := f.TableName()
			var body []byte
			if method == http.MethodPut {
				body = aclBody(policy{id: "readers", permission: "r", start: start, expiry: expiry})
			}
			a := sendXML(ctx, raw, method, aclPath(table), body, nil, nil)
			Expect(a.status).To(Equal(spec.ErrResourceNotFound.Status), "%s", a)
			text := strings.TrimPrefix(string(a.body), "\ufeff")
			Expect(text).To(ContainSubstring(`<m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">`), "the error's root element: %s", a)
			Expect(text).To(ContainSubstring(`<m:code>`+spec.ErrResourceNotFound.Code+`</m:code>`), "the error's code element: %s", a)
			Expect(text).To(MatchRegexp(`<m:message xml:lang="en-US">[^<]+</m:message>`), "the error's message element: %s", a)
		},
		Entry("Get Table ACL of a missing table", http.MethodGet),
		Entry("Set Table ACL of a missing table", http.MethodPut),
	)

	f.It("service.acl.too-many", "refuses six signed identifiers with 400 InvalidXmlDocument", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		first := policy{id: "kept", permission: "r", start: start, expiry: expiry}
		set := sendXML(ctx, raw, http.MethodPut, aclPath(table), aclBody(first), nil, nil)
		expectACLSet(f, set, "Set Table ACL with one policy")
		six := make([]policy, 6)
		for i := range six {
			six[i] = policy{id: fmt.Sprintf("p%d", i), permission: "r", start: start, expiry: expiry}
		}
		a := sendXML(ctx, raw, http.MethodPut, aclPath(table), aclBody(six...), nil, nil)
		Expect(a.status).To(Equal(spec.ErrInvalidXMLDocument.Status), "Set Table ACL with six policies: %s", a)
		Expect(a.code()).To(Equal(spec.ErrInvalidXMLDocument.Code), "%s", a)
		get := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, nil, nil)
		var ids signedIdentifiers
		readACL(f, get, &ids)
		Expect(ids.Identifiers).To(HaveLen(1), "the refused Set Table ACL changed the policies: %s", get)
		Expect(ids.Identifiers[0].ID).To(Equal("kept"))
	})
})
