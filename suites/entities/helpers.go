package entities

import (
	"context"
	"fmt"
	"io"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	. "github.com/tableconform/conform/suites/matchers"
)

// insert stores e and fails the spec when the backend refuses it.
func insert(ctx context.Context, b api.Backend, table string, e api.Entity) api.Entity {
	GinkgoHelper()
	got, err := b.InsertEntity(ctx, table, e)
	Expect(err).To(SucceedOnBackend(), "Insert Entity %s", e)
	return got
}

// get reads one entity and fails the spec when the backend refuses.
func get(ctx context.Context, b api.Backend, table, pk, rk string) api.Entity {
	GinkgoHelper()
	got, err := b.GetEntity(ctx, table, pk, rk, nil)
	Expect(err).To(SucceedOnBackend(), "Get Entity (%q, %q)", pk, rk)
	return got
}

// queryAll returns every entity a query answers, following continuations for a bounded
// number of pages.
func queryAll(ctx context.Context, b api.Backend, table string, q api.Query) []api.Entity {
	GinkgoHelper()
	const maxPages = 64
	var out []api.Entity
	for range maxPages {
		page, err := b.QueryEntities(ctx, table, q)
		Expect(err).To(SucceedOnBackend(), "Query Entities $filter=%q", q.Filter)
		out = append(out, page.Entities...)
		if page.Continuation.IsZero() {
			return out
		}
		q.Continuation = page.Continuation
	}
	Fail(fmt.Sprintf("Query Entities $filter=%q still had a continuation after %d pages", q.Filter, maxPages))
	return nil
}

// rawInsert posts a hand-made JSON body to Insert Entity and returns the status and the
// error code of the answer.
func rawInsert(ctx context.Context, raw driver.RawHTTP, table string, body string) (int, string) {
	GinkgoHelper()
	req, err := raw.NewRequest(ctx, http.MethodPost, table, []byte(body))
	Expect(err).NotTo(HaveOccurred(), "build the request")
	req.Header.Set("Prefer", "return-no-content")
	resp, err := raw.Do(req)
	Expect(err).NotTo(HaveOccurred(), "conform:transport: POST %s", table)
	defer resp.Body.Close()
	status, code := ResponseOutcome(resp)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return status, code
}
