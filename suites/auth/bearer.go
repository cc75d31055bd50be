package auth

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// unsignedToken is a well-formed JWT for the storage audience, valid for an hour, whose
// signature no issuer made: a service must never accept it.
func unsignedToken() string {
	enc := base64.RawURLEncoding.EncodeToString
	header := enc([]byte(`{"alg":"RS256","typ":"JWT"}`))
	now := time.Now().Unix()
	payload := enc([]byte(fmt.Sprintf(`{"aud":"https://storage.azure.com","iss":"https://sts.windows.net/00000000-0000-0000-0000-000000000000/","iat":%d,"nbf":%d,"exp":%d,"tid":"00000000-0000-0000-0000-000000000000"}`, now-60, now-60, now+3600)))
	return header + "." + payload + "." + enc([]byte("conform: not a signature"))
}

var _ = framework.Describe("Bearer tokens", func(f *framework.F) {
	send := func(ctx context.Context, r rawReq) (status int, code string, body []byte, challenge string) {
		GinkgoHelper()
		raw, _, table := rawTable(ctx, f)
		req := r.build(ctx, raw, table)
		req.Header.Set("Authorization", "Bearer "+unsignedToken())
		resp, err := raw.Do(req)
		Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
		challenge = resp.Header.Get("WWW-Authenticate")
		status, code, body = readAnswer(resp)
		return status, code, body, challenge
	}

	f.DescribeTable("auth.bearer.refused", "refuses a bearer token no trusted issuer signed",
		func(ctx context.Context, r rawReq) {
			raw, b, table := rawTable(ctx, f)
			req := r.build(ctx, raw, table)
			req.Header.Set("Authorization", "Bearer "+unsignedToken())
			resp, err := raw.Do(req)
			Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
			Expect(resp).To(HaveAnswered([]int{http.StatusUnauthorized, http.StatusForbidden}))
			status, code, body := readAnswer(resp)
			f.Choice("refusal of an unverifiable bearer token", fmt.Sprintf("%d %s", status, code))
			Expect(string(body)).NotTo(ContainSubstring(secret), "the refused request revealed the entity")
			expectStored(ctx, b, table, "the refused request changed the table")
		},
		Entry("for Query Entities", reqQuery),
		Entry("for Insert Entity", reqInsert),
		Entry("for Delete Entity", reqDelete),
	)

	f.It("auth.bearer.challenge", "answers 401 InvalidAuthenticationInfo with a Bearer challenge", func(ctx context.Context) {
		status, code, body, challenge := send(ctx, reqQuery)
		Expect(status).To(Equal(spec.ErrBearerRefused.Status), "status: %s", body)
		Expect(code).To(Equal(spec.ErrBearerRefused.Code), "code: %s", body)
		Expect(challenge).To(HavePrefix("Bearer "), "WWW-Authenticate")
		Expect(strings.Contains(challenge, "authorization_uri=") && strings.Contains(challenge, "resource_id=")).To(BeTrue(), "WWW-Authenticate: %s", challenge)
	})
})
