package protocol

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// atomAccept is the outer Accept of the legacy Node SDK's batches (EVIDENCE.md,
// E-batch-outer-accept).
const atomAccept = "application/atom+xml,application/xml"

var _ = framework.Describe("Batch outer Accept", func(f *framework.F) {
	f.It("protocol.batch.outer-accept", "serves a $batch whose outer Accept asks for Atom", func(ctx context.Context) {
		raw := f.Raw()
		b, table := f.Backend(), f.NewTable(ctx)
		// The subject is the outer Accept, not transactions at all: a backend whose valid
		// transaction fails is blocked by the transactions' rule.
		scenario.RequireTransactions(ctx, f, b, table)
		const batchBoundary, changeset = "batch_conformaccept", "changeset_conformaccept"
		var body bytes.Buffer
		fmt.Fprintf(&body, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", batchBoundary, changeset)
		for i, rk := range []string{"a", "b"} {
			target, err := raw.NewRequest(ctx, http.MethodPost, table, nil)
			Expect(err).NotTo(HaveOccurred())
			fmt.Fprintf(&body, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\nContent-ID: %d\r\n\r\n", changeset, i+1)
			fmt.Fprintf(&body, "POST %s HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\nPrefer: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":%q}\r\n",
				target.URL.String(), rk)
		}
		fmt.Fprintf(&body, "--%s--\r\n\r\n--%s--\r\n", changeset, batchBoundary)
		a := send(ctx, raw, http.MethodPost, "$batch", body.Bytes(), map[string]string{
			"Content-Type": "multipart/mixed; boundary=" + batchBoundary,
			"Accept":       atomAccept,
		})
		Expect(a.status).To(Equal(http.StatusAccepted), "%s", a)
		Expect(string(a.body)).To(ContainSubstring("204 No Content"), "the operations' answers: %s", a)
		page, err := b.QueryEntities(ctx, table, api.Query{})
		Expect(err).To(SucceedOnBackend())
		Expect(Keys(page.Entities)).To(HaveLen(2), "the batch's inserts were not all stored: %s", a)
	})
})
