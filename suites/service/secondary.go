package service

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// secondaryWrite is one write sent to the secondary location: its method, its path under
// the account (given the spec's table), its body (given the table and the primary's URL of
// the spec's entity) and content type.
type secondaryWrite struct {
	method      string
	path        func(table string) string
	body        func(table, entityURL string) string
	contentType string
}

// The JSON headers of the entity and table writes a spec sends by hand.
var jsonWriteHeaders = map[string]string{
	"Accept":             "application/json;odata=nometadata",
	"DataServiceVersion": "3.0;NetFx",
}

func entityPath(table string) string { return table + "(PartitionKey='p',RowKey='kept')" }

var _ = framework.Describe("Secondary location", func(f *framework.F) {
	f.DescribeTable("service.secondary.read-only", "refuses a write through the secondary location and changes nothing",
		func(ctx context.Context, w secondaryWrite) {
			raw := f.Raw()
			b, table := f.Backend(), f.NewTable(ctx)
			f.Requires("modify.insert.stores", "insert the spec's entity through the primary", func() {
				_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "kept", map[string]api.Value{"V": api.String("old")}))
				Expect(err).To(SucceedOnBackend())
			})
			var kept api.Entity
			f.Requires("query.table-scan", "read the spec's entity through the primary", func() {
				before, err := b.QueryEntities(ctx, table, api.Query{})
				Expect(err).To(SucceedOnBackend())
				Expect(before.Entities).To(HaveLen(1), "the table's entities")
				kept = before.Entities[0]
			})
			headers := map[string]string{"Content-Type": w.contentType, "If-Match": "*"}
			for k, v := range jsonWriteHeaders {
				headers[k] = v
			}
			if w.contentType == "application/xml" {
				headers["Accept"] = acceptXML
			}
			var body []byte
			if w.body != nil {
				target, err := raw.NewRequest(ctx, http.MethodDelete, entityPath(table), nil)
				Expect(err).NotTo(HaveOccurred())
				body = []byte(w.body(table, target.URL.String()))
			}
			a := sendXML(ctx, raw, w.method, w.path(table), body, headers, toSecondary)
			Expect(a.status).To(BeNumerically(">=", 400), "a write through the secondary location was accepted: %s", a)
			Expect(a.status).To(BeNumerically("<", 500), "a write through the secondary location: %s", a)
			f.Choice("answer to a write through the secondary location", a.outcome())

			// Nothing changed on the primary: the table, its entity and, after Set Table ACL, its
			// policies (read only there, so that a backend without table ACLs is judged on the rest).
			page, err := b.QueryEntities(ctx, table, api.Query{})
			if e, ok := driver.AsError(err); ok && e.Status == http.StatusNotFound {
				Fail(fmt.Sprintf("the table is gone after %s through the secondary location (%v): %s", w.method, err, a))
			}
			f.Requires("query.table-scan", "read the table's entities back through the primary", func() {
				Expect(err).To(SucceedOnBackend())
			})
			Expect(page.Entities).To(HaveLen(1), "the table's entities changed after %s through the secondary location: %s", w.method, a)
			Expect(page.Entities[0].ETag).To(Equal(kept.ETag), "the entity changed after %s through the secondary location: %s", w.method, a)
			Expect(page.Entities[0].Properties).To(Equal(kept.Properties), "the entity's properties changed after %s through the secondary location: %s", w.method, a)
			if w.path(table) == aclPath(table) {
				acl := sendXML(ctx, raw, http.MethodGet, aclPath(table), nil, nil, nil)
				f.Requires("service.acl.empty", "read the table's policies through the primary", func() {
					Expect(acl.status).To(Equal(http.StatusOK), "Get Table ACL: %s", acl)
				})
				Expect(string(acl.body)).NotTo(ContainSubstring("<Id>secondary</Id>"), "Set Table ACL through the secondary location was applied: %s", a)
			}
			if w.method == http.MethodPost && w.path(table) == "Tables" {
				created := sendXML(ctx, raw, http.MethodGet, fmt.Sprintf("Tables('%sx')", table), nil, jsonWriteHeaders, nil)
				Expect(created.status).NotTo(Equal(http.StatusOK), "Create Table through the secondary location created the table: %s", a)
			}
		},
		Entry("Insert Entity", secondaryWrite{http.MethodPost, func(t string) string { return t }, func(string, string) string { return `{"PartitionKey":"p","RowKey":"new"}` }, "application/json"}),
		Entry("Update Entity", secondaryWrite{http.MethodPut, entityPath, func(string, string) string { return `{"V":"new"}` }, "application/json"}),
		Entry("Merge Entity", secondaryWrite{"MERGE", entityPath, func(string, string) string { return `{"V":"new"}` }, "application/json"}),
		Entry("Delete Entity", secondaryWrite{http.MethodDelete, entityPath, nil, ""}),
		Entry("Create Table", secondaryWrite{http.MethodPost, func(string) string { return "Tables" }, func(t, _ string) string { return `{"TableName":"` + t + `x"}` }, "application/json"}),
		Entry("Delete Table", secondaryWrite{http.MethodDelete, func(t string) string { return "Tables('" + t + "')" }, nil, ""}),
		Entry("Set Table ACL", secondaryWrite{http.MethodPut, aclPath, func(string, string) string {
			return `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>secondary</Id><AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`
		}, "application/xml"}),
		Entry("$batch", secondaryWrite{http.MethodPost, func(string) string { return "$batch" }, secondaryBatch, "multipart/mixed; boundary=batch_conformsecondary"}),
	)
})

// secondaryBatch is a $batch body that deletes the spec's entity at entityURL, the primary's:
// the outer request alone goes to the secondary location.
func secondaryBatch(_, entityURL string) string {
	return "--batch_conformsecondary\r\nContent-Type: multipart/mixed; boundary=changeset_conformsecondary\r\n\r\n" +
		"--changeset_conformsecondary\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"DELETE " + entityURL + " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\nIf-Match: *\r\nDataServiceVersion: 3.0;\r\n\r\n\r\n" +
		"--changeset_conformsecondary--\r\n\r\n--batch_conformsecondary--\r\n"
}
