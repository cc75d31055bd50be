package batch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// rawInsert is one insert of a hand-made transaction: the table it addresses and its keys.
type rawInsert struct{ table, rowKey string }

// submitRaw sends a transaction of inserts built by hand (EVIDENCE.md 4: a changeset of
// application/http parts with absolute URLs), which the api cannot express when the
// inserts address different tables or form more than one changeset. Each argument after
// raw is one changeset. It returns the HTTP status and the answer's body.
func submitRaw(ctx context.Context, raw driver.RawHTTP, changesets ...[]rawInsert) (int, string) {
	GinkgoHelper()
	const batchBoundary = "batch_conform0001"
	var body bytes.Buffer
	contentID := 0
	for c, inserts := range changesets {
		changeset := fmt.Sprintf("changeset_conform%04d", c+2)
		fmt.Fprintf(&body, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchBoundary, changeset)
		for _, in := range inserts {
			target, err := raw.NewRequest(ctx, "POST", in.table, nil)
			Expect(err).NotTo(HaveOccurred())
			entity := fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q}`, pk, in.rowKey)
			contentID++
			fmt.Fprintf(&body, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", changeset, contentID)
			fmt.Fprintf(&body, "POST %s HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n%s\r\n", target.URL.String(), entity)
		}
		fmt.Fprintf(&body, "--%s--\r\n\r\n", changeset)
	}
	fmt.Fprintf(&body, "--%s--\r\n", batchBoundary)
	req, err := raw.NewRequest(ctx, "POST", "$batch", body.Bytes())
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	resp, err := raw.Do(req)
	Expect(err).NotTo(HaveOccurred(), "conform:transport: POST $batch")
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	Expect(err).NotTo(HaveOccurred(), "conform:transport: reading the answer to POST $batch")
	return resp.StatusCode, string(data)
}

// answerFailed reports whether a transaction's answer is a failure: a 4xx status, or a 202
// whose changeset answer holds an error part instead of one part per operation.
func answerFailed(status int, body string) bool {
	if status >= 400 {
		return true
	}
	return status == 202 && (strings.Contains(body, "HTTP/1.1 4") || strings.Contains(body, "HTTP/1.1 5"))
}

var _ = framework.Describe("Entity group transactions over HTTP", func(f *framework.F) {
	Context("when its operations address two tables", func() {
		f.It("batch.table.single", "refuses the transaction and applies nothing in either table", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			one, two := f.NewTable(ctx), f.NewTable(ctx)

			// The hand-made framing must be good: the same transaction on one table succeeds.
			f.Requires(scenario.RuleTransactions, "apply the hand-made transaction on one table", func() {
				status, answer := submitRaw(ctx, raw, []rawInsert{{one, "control1"}, {one, "control2"}})
				Expect(answerFailed(status, answer)).To(BeFalse(), "a hand-made transaction on one table failed (%d): %.400s", status, answer)
				Expect(one).To(HoldExactly(ctx, b, api.NewEntity(pk, "control1", nil), api.NewEntity(pk, "control2", nil)))
			})

			status, answer := submitRaw(ctx, raw, []rawInsert{{one, "a"}, {two, "b"}})
			Expect(answerFailed(status, answer)).To(BeTrue(), "a transaction over tables %s and %s was accepted (%d): %.400s", one, two, status, answer)
			f.Choice("answer to a transaction over two tables", fmt.Sprintf("%d %.200s", status, answer))
			Expect(one).To(HoldExactly(ctx, b, api.NewEntity(pk, "control1", nil), api.NewEntity(pk, "control2", nil)))
			Expect(two).To(HoldExactly(ctx, b))
		})
	})

	Context("when it holds a second changeset", func() {
		f.It("batch.changeset.single", "refuses the second changeset with 400 and does not apply it", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			scenario.RequireTransactions(ctx, f, b, table)
			status, answer := submitRaw(ctx, raw, []rawInsert{{table, "first1"}, {table, "first2"}}, []rawInsert{{table, "second"}})
			refused := status == 400 || (status == 202 && strings.Contains(answer, "HTTP/1.1 400"))
			Expect(refused).To(BeTrue(), "a transaction with two changesets was not refused with 400 (%d): %.400s", status, answer)
			got := scenario.MustQueryAll(ctx, b, table, api.Query{}, 3).Entities()
			keys := make([]string, 0, len(got))
			for _, e := range got {
				keys = append(keys, e.RowKey)
			}
			Expect(keys).NotTo(ContainElement("second"), "the second changeset was applied")
			Expect(keys).To(Or(BeEmpty(), ConsistOf("first1", "first2")), "the first changeset was applied in part")
			f.Choice("the first changeset of a two-changeset transaction", map[bool]string{true: "not applied", false: "applied"}[len(keys) == 0]+
				fmt.Sprintf("; answer %d %.200s", status, answer))
		})
	})
})

var _ = framework.Describe("An empty change set over HTTP", func(f *framework.F) {
	// EVIDENCE.md 13, E-batch-empty-changeset: Storage answered 202 with an empty change set.
	f.It("batch.changeset.empty", "is answered with 202 and an empty change set, or refused with 4xx, and changes nothing", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		// A choice is recorded only from a backend whose valid transactions work: a refusal
		// of every $batch says nothing about empty change sets.
		scenario.RequireTransactions(ctx, f, b, table)
		before := seed(ctx, b, table, entity("r"))
		status, answer := submitRaw(ctx, raw, []rawInsert{})
		Expect(status).NotTo(BeNumerically(">=", 500), "a server error for a change set without operations: %.400s", answer)
		Expect(answer).NotTo(ContainSubstring("HTTP/1.1 5"), "a server error inside the answer to a change set without operations")
		switch {
		case status == 202 && !answerFailed(status, answer):
			f.Choice("answer to an empty change set", "202 with an empty change set")
		case status == 202:
			f.Choice("answer to an empty change set", fmt.Sprintf("202 holding a refusal: %.160s", answer))
		default:
			Expect(status).To(BeNumerically(">=", 400), "an empty change set got %d: %.400s", status, answer)
			f.Choice("answer to an empty change set", fmt.Sprintf("%d", status))
		}
		Expect(table).To(HoldExactly(ctx, b, before...))
	})
})
