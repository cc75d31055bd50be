package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// secret is a value stored in the entity that unauthenticated requests must not reveal.
const secret = "conform-secret-7f3a"

// rawReq describes one hand-made request on the table of a spec: the method, the path
// relative to the table endpoint ({table} stands for the spec's table) and a JSON body.
type rawReq struct {
	method, path, body string
	// shows is what a successful answer's body holds ({table} for the spec's table).
	shows string
}

func (r rawReq) build(ctx context.Context, raw driver.RawHTTP, table string) *http.Request {
	GinkgoHelper()
	path := strings.ReplaceAll(r.path, "{table}", table)
	var body []byte
	if r.body != "" {
		body = []byte(r.body)
	}
	req, err := raw.NewRequest(ctx, r.method, path, body)
	Expect(err).NotTo(HaveOccurred(), "build %s %s", r.method, path)
	if r.method == http.MethodDelete || r.method == http.MethodPut {
		req.Header.Set("If-Match", "*")
	}
	return req
}

var (
	reqQuery = rawReq{method: http.MethodGet, path: "{table}()", shows: secret}
	reqGet   = rawReq{method: http.MethodGet, path: "{table}(PartitionKey='p',RowKey='r')", shows: secret}
	// reqTables lists only the spec's own table: a run never lists other tables.
	reqTables = rawReq{method: http.MethodGet, path: "Tables?%24filter=TableName%20eq%20%27{table}%27", shows: "{table}"}
	reqInsert = rawReq{method: http.MethodPost, path: "{table}", body: `{"PartitionKey":"p","RowKey":"` + intruderRowKey + `","V":1}`}
	reqUpdate = rawReq{method: http.MethodPut, path: "{table}(PartitionKey='p',RowKey='r')", body: `{"V":2}`}
	reqDelete = rawReq{method: http.MethodDelete, path: "{table}(PartitionKey='p',RowKey='r')"}
)

// storedEntity is what every Shared Key spec stores before it sends its request.
// intruderRowKey is the RowKey of the entity a refused Insert Entity would add.
const intruderRowKey = "intruder"

var storedEntity = api.NewEntity("p", "r", map[string]api.Value{"Secret": api.String(secret)})

// rawTable creates a table holding storedEntity and returns the raw capability.
func rawTable(ctx context.Context, f *framework.F) (driver.RawHTTP, api.Backend, string) {
	GinkgoHelper()
	raw := f.Raw()
	b, table := f.Backend(), f.NewTable(ctx)
	_, err := b.InsertEntity(ctx, table, storedEntity)
	Expect(err).To(SucceedOnBackend())
	return raw, b, table
}

// readAnswer reads and closes resp, returning its status, code and body.
func readAnswer(resp *http.Response) (int, string, []byte) {
	defer resp.Body.Close()
	status, code := ResponseOutcome(resp)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return status, code, body
}

// expectStored checks with the account key that the refused request changed none of the
// spec's own entities: storedEntity is as stored and the entity reqInsert would add is
// absent. It reads those keys only, not the whole table, so that nothing but the refused
// request can be the change it reports.
func expectStored(ctx context.Context, b api.Backend, table, why string) {
	GinkgoHelper()
	got, err := b.GetEntity(ctx, table, storedEntity.PartitionKey, storedEntity.RowKey, nil)
	Expect(err).To(SucceedOnBackend(), "%s: read the stored entity back", why)
	Expect(got).To(MatchEntity(storedEntity), why)
	_, err = b.GetEntity(ctx, table, storedEntity.PartitionKey, intruderRowKey, nil)
	Expect(err).To(HaveFailedWithStatus(http.StatusNotFound), "%s: it stored the entity it would insert", why)
}

// signedAuthorization sends a harmless signed request and returns the Authorization and
// x-ms-date headers Do signed it with.
func signedAuthorization(ctx context.Context, raw driver.RawHTTP, table string) (auth, date string) {
	GinkgoHelper()
	req := reqQuery.build(ctx, raw, table)
	resp, err := raw.Do(req)
	Expect(err).NotTo(HaveOccurred(), "conform:transport: a signed GET")
	status, code, _ := readAnswer(resp)
	Expect(status).To(Equal(http.StatusOK), "a correctly signed GET answered %d %s", status, code)
	auth = req.Header.Get("Authorization")
	if auth == "" {
		Skip("capability missing: the raw capability does not show the Authorization it signs with")
	}
	return auth, req.Header.Get("x-ms-date")
}

// forged replaces the signature of a "Scheme account:signature" header with one of the
// same length that no key produced.
func forged(auth string) string {
	scheme, rest, _ := strings.Cut(auth, " ")
	account, _, _ := strings.Cut(rest, ":")
	sum := sha256.Sum256([]byte("conform: not a signature"))
	return scheme + " " + account + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

var _ = framework.Describe("Shared Key authorization", func(f *framework.F) {
	Context("with a correct signature", func() {
		f.DescribeTable("auth.shared-key.valid", "accepts the request",
			func(ctx context.Context, r rawReq, want []int) {
				raw, _, table := rawTable(ctx, f)
				resp, err := raw.Do(r.build(ctx, raw, table))
				Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
				Expect(resp).To(HaveAnswered(want))
				_, _, body := readAnswer(resp)
				if r.shows != "" {
					Expect(string(body)).To(ContainSubstring(strings.ReplaceAll(r.shows, "{table}", table)), "the answer to %s %s", r.method, r.path)
				}
			},
			Entry("for Query Entities", reqQuery, []int{http.StatusOK}),
			Entry("for Get Entity", reqGet, []int{http.StatusOK}),
			Entry("for Query Tables", reqTables, []int{http.StatusOK}),
			Entry("for Insert Entity", reqInsert, []int{http.StatusCreated, http.StatusNoContent}),
			// Accepted is the subject: the 204 Storage answers is protocol.delete.no-content's.
			Entry("for Delete Entity", reqDelete, []int{http.StatusOK, http.StatusNoContent}),
		)
	})

	Context("with a wrong signature", func() {
		f.DescribeTable("auth.shared-key.bad-signature", "refuses the request with 403 AuthenticationFailed",
			func(ctx context.Context, r rawReq) {
				raw, b, table := rawTable(ctx, f)
				auth, _ := signedAuthorization(ctx, raw, table)
				req := r.build(ctx, raw, table)
				req.Header.Set("Authorization", forged(auth))
				resp, err := raw.Do(req)
				Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
				Expect(resp).To(HaveAnswered([]int{spec.ErrAuthenticationFailed.Status}, spec.ErrAuthenticationFailed.Code))
				_, _, body := readAnswer(resp)
				Expect(string(body)).NotTo(ContainSubstring(secret), "the refused request revealed the entity")
				expectStored(ctx, b, table, "the refused request changed the table")
			},
			Entry("for Query Entities", reqQuery),
			Entry("for Get Entity", reqGet),
			Entry("for Query Tables", reqTables),
			Entry("for Insert Entity", reqInsert),
			Entry("for Update Entity", reqUpdate),
			Entry("for Delete Entity", reqDelete),
		)

		f.DescribeTable("auth.shared-key.bad-signature", "refuses the signature of another request with 403 AuthenticationFailed",
			func(ctx context.Context, r rawReq) {
				raw, b, table := rawTable(ctx, f)
				auth, date := signedAuthorization(ctx, raw, table)
				req := r.build(ctx, raw, table)
				req.Header.Set("Authorization", auth)
				if date != "" {
					req.Header.Set("x-ms-date", date)
				}
				resp, err := raw.Do(req)
				Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
				Expect(resp).To(HaveAnswered([]int{spec.ErrAuthenticationFailed.Status}, spec.ErrAuthenticationFailed.Code))
				_, _, _ = readAnswer(resp)
				expectStored(ctx, b, table, "the refused request changed the table")
			},
			Entry("signed for a GET of the table, sent as Delete Entity", reqDelete),
			Entry("signed for a GET of the table, sent as Insert Entity", reqInsert),
		)
	})

	Context("without any credential", func() {
		f.DescribeTable("auth.anonymous", "refuses the request with 401 or 403",
			func(ctx context.Context, r rawReq) {
				raw, b, table := rawTable(ctx, f)
				req := r.build(ctx, raw, table)
				req.Header.Del("Authorization")
				if req.GetBody != nil {
					body, err := req.GetBody()
					Expect(err).NotTo(HaveOccurred())
					req.Body = body
				} else if r.body != "" {
					req.Body = io.NopCloser(bytes.NewReader([]byte(r.body)))
				}
				// Sent around Do, which would sign it.
				resp, err := f.SendUnsigned(req)
				Expect(err).NotTo(HaveOccurred(), "conform:transport: %s %s", r.method, r.path)
				Expect(resp).To(HaveAnswered([]int{http.StatusUnauthorized, http.StatusForbidden}))
				status, code, body := readAnswer(resp)
				f.Choice("refusal of a request without credentials", fmt.Sprintf("%d %s", status, code))
				Expect(string(body)).NotTo(ContainSubstring(secret), "the refused request revealed the entity")
				expectStored(ctx, b, table, "the refused request changed the table")
			},
			Entry("for Query Entities", reqQuery),
			Entry("for Get Entity", reqGet),
			Entry("for Query Tables", reqTables),
			Entry("for Insert Entity", reqInsert),
			Entry("for Delete Entity", reqDelete),
		)
	})
})
