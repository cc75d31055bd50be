package protocol

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// stored inserts ("p","r") with two properties through the backend and returns it.
func stored(ctx context.Context, b api.Backend, table string) api.Entity {
	GinkgoHelper()
	e := api.NewEntity("p", "r", map[string]api.Value{"Keep": api.Int32(1), "Name": api.String("old")})
	var got api.Entity
	framework.Requires("modify.insert.stores", "insert the spec's entity", func() {
		var err error
		got, err = b.InsertEntity(ctx, table, e)
		Expect(err).To(SucceedOnBackend(), "setting up: insert %s", e)
	})
	return got
}

var _ = framework.Describe("Insert Entity over HTTP", func(f *framework.F) {
	f.It("protocol.insert.default-201", "answers 201 with the entity and an ETag", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		a := send(ctx, raw, "POST", table, body("p", "r", "Name", "Ada"), map[string]string{"Prefer": ""})
		Expect(a.status).To(Equal(201), "%s", a)
		Expect(a.header.Get("ETag")).NotTo(BeEmpty(), "no ETag header: %s", a)
		m := object(a)
		Expect(m).To(HaveKeyWithValue("PartitionKey", "p"))
		Expect(m).To(HaveKeyWithValue("RowKey", "r"))
		Expect(m).To(HaveKeyWithValue("Name", "Ada"))
	})

	f.It("protocol.insert.location", "names the new entity in a Location header", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		a := send(ctx, raw, "POST", table, body("p", "r", "Name", "Ada"), map[string]string{"Prefer": ""})
		Expect(a.status).To(BeNumerically("<", 300), "%s", a)
		f.Requires("protocol.insert.default-201", "the insert without Prefer answers 201", func() {
			Expect(a.status).To(Equal(201), "%s", a)
		})
		Expect(a.header.Get("Location")).To(HaveSuffix("/"+entityPath(table, "p", "r")), "the Location header of %s", a)
	})

	f.It("protocol.insert.prefer-no-content", "answers 204 with no body, an ETag and Preference-Applied", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		a := send(ctx, raw, "POST", table, body("p", "r", "Name", "Ada"), map[string]string{"Prefer": "return-no-content"})
		Expect(a.status).To(Equal(204), "%s", a)
		Expect(a.body).To(BeEmpty(), "the body of %s", a)
		Expect(a.header.Get("ETag")).NotTo(BeEmpty(), "no ETag header")
		Expect(a.header.Get("Preference-Applied")).To(Equal("return-no-content"), "the Preference-Applied header of %s", a)
	})

	f.It("protocol.insert.prefer-no-content", "stores the entity it does not return", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		a := send(ctx, raw, "POST", table, body("p", "r", "Name", "Ada"), map[string]string{"Prefer": "return-no-content"})
		Expect(a.status).To(Equal(204), "%s", a)
		Expect(table).To(HoldExactly(ctx, b, api.NewEntity("p", "r", map[string]api.Value{"Name": api.String("Ada")})))
	})

	f.It("protocol.insert.prefer-content", "answers 201 with the entity and Preference-Applied: return-content", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		a := send(ctx, raw, "POST", table, body("p", "r", "Name", "Ada"), map[string]string{"Prefer": "return-content"})
		Expect(a.status).To(Equal(201), "%s", a)
		Expect(a.header.Get("Preference-Applied")).To(Equal("return-content"), "the Preference-Applied header of %s", a)
		Expect(object(a)).To(HaveKeyWithValue("Name", "Ada"))
	})
})

var _ = framework.Describe("Update, Merge and Delete Entity over HTTP", func(f *framework.F) {
	for _, c := range []struct {
		name, method, ifMatch string
	}{
		{"a PUT with If-Match *", "PUT", "*"},
		{"a PUT without If-Match", "PUT", ""},
		{"a MERGE with If-Match *", "MERGE", "*"},
		{"a MERGE without If-Match", "MERGE", ""},
	} {
		f.It("protocol.update.no-content", "answers "+c.name+" with 204, an ETag and no body", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			stored(ctx, b, table)
			a := send(ctx, raw, c.method, entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": c.ifMatch})
			Expect(a.status).To(Equal(204), "%s", a)
			Expect(a.body).To(BeEmpty(), "the body of %s", a)
			Expect(a.header.Get("ETag")).NotTo(BeEmpty(), "no ETag header")
		})
	}

	f.It("protocol.delete.no-content", "answers a DELETE with If-Match * with 204 and no body", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		a := send(ctx, raw, "DELETE", entityPath(table, "p", "r"), nil, map[string]string{"If-Match": "*"})
		Expect(a.status).To(Equal(204), "%s", a)
		Expect(a.body).To(BeEmpty(), "the body of %s", a)
	})

	f.It("protocol.get.etag", "answers a GET with 200 and the ETag the last write returned", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		w := send(ctx, raw, "MERGE", entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": "*"})
		Expect(w.status).To(BeNumerically("<", 300), "%s", w)
		f.Requires("protocol.update.no-content", "the MERGE answers 204", func() {
			Expect(w.status).To(Equal(204), "%s", w)
		})
		a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, nil)
		Expect(a.status).To(Equal(200), "%s", a)
		Expect(a.header.Get("ETag")).To(Equal(w.header.Get("ETag")), "the ETag header of %s, after the MERGE returned %s", a, w.header.Get("ETag"))
	})

	f.It("protocol.get.etag", "answers a GET in full metadata with an ETag header equal to odata.etag", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": fullMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		Expect(a.header.Get("ETag")).NotTo(BeEmpty(), "the ETag header of %s", a)
		Expect(object(a)).To(HaveKeyWithValue("odata.etag", a.header.Get("ETag")), "odata.etag against the ETag header of %s", a)
	})

	f.It("protocol.etag.weak", "hands out ETags on insert, update and read, weak or strong", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		ins := send(ctx, raw, "POST", table, body("p", "r", "N", 1), nil)
		upd := send(ctx, raw, "PUT", entityPath(table, "p", "r"), body("p", "r", "N", 2), map[string]string{"If-Match": "*"})
		get := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, nil)
		weak := 0
		for _, a := range []answer{ins, upd, get} {
			Expect(a.status).To(BeNumerically("<", 300), "%s", a)
			Expect(a.header.Get("ETag")).NotTo(BeEmpty(), "%s %s", a.method, a.path)
			if strings.HasPrefix(a.header.Get("ETag"), `W/"`) {
				weak++
			}
		}
		switch weak {
		case 3:
			f.Choice("ETag form", "weak (W/\"...\")")
		case 0:
			f.Choice("ETag form", "strong")
		default:
			f.Choice("ETag form", "weak on some answers, strong on others")
		}
	})
})

// expectStatus asserts that a, the answer of a spec's request, has status: a 201 for an
// insert without Prefer is the subject of protocol.insert.default-201, a precondition of the
// spec, which needs only the insert to succeed.
func expectStatus(f *framework.F, a answer, status int) {
	GinkgoHelper()
	if status != 201 {
		Expect(a.status).To(Equal(status), "%s", a)
		return
	}
	Expect(a.status).To(BeNumerically("<", 300), "%s", a)
	f.Requires("protocol.insert.default-201", "the insert without Prefer answers 201", func() {
		Expect(a.status).To(Equal(201), "%s", a)
	})
}

var _ = framework.Describe("Request identifiers", func(f *framework.F) {
	const clientID = "conform-client-id-0123456789"
	for _, c := range []struct {
		name   string
		status int
		do     func(ctx context.Context, raw driver.RawHTTP, table string, h map[string]string) answer
	}{
		{"an insert", 201, func(ctx context.Context, raw driver.RawHTTP, table string, h map[string]string) answer {
			return send(ctx, raw, "POST", table, body("p", "r"), h)
		}},
		{"a read", 200, func(ctx context.Context, raw driver.RawHTTP, table string, h map[string]string) answer {
			send(ctx, raw, "POST", table, body("p", "r"), nil)
			return send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, h)
		}},
		{"a query", 200, func(ctx context.Context, raw driver.RawHTTP, table string, h map[string]string) answer {
			return send(ctx, raw, "GET", queryPath(table, map[string]string{"$filter": "PartitionKey eq 'p'"}), nil, h)
		}},
		{"a read of a missing entity", 404, func(ctx context.Context, raw driver.RawHTTP, table string, h map[string]string) answer {
			return send(ctx, raw, "GET", entityPath(table, "p", "missing"), nil, h)
		}},
	} {
		f.It("protocol.client-request-id", "echoes x-ms-client-request-id on "+c.name, func(ctx context.Context) {
			raw := f.Raw()
			table := f.NewTable(ctx)
			a := c.do(ctx, raw, table, map[string]string{"x-ms-client-request-id": clientID})
			expectStatus(f, a, c.status)
			f.Check(spec.CheckClientRequestIDHeader, func() {
				Expect(a.header.Get("x-ms-client-request-id")).To(Equal(clientID), "the x-ms-client-request-id header of %s", a)
			})
		})
	}

	for _, c := range []struct {
		name, method, path string
		status             int
	}{
		{"a successful insert", "POST", "", 201},
		{"a failed delete of a missing entity", "DELETE", "missing", 404},
	} {
		f.It("protocol.request-id", "sends x-ms-request-id on "+c.name, func(ctx context.Context) {
			raw := f.Raw()
			table := f.NewTable(ctx)
			var a answer
			if c.method == "POST" {
				a = send(ctx, raw, "POST", table, body("p", "r"), nil)
			} else {
				a = send(ctx, raw, c.method, entityPath(table, "p", c.path), nil, map[string]string{"If-Match": "*"})
			}
			expectStatus(f, a, c.status)
			f.Check(spec.CheckRequestIDHeader, func() {
				Expect(strings.TrimSpace(a.header.Get("x-ms-request-id"))).NotTo(BeEmpty(), "the x-ms-request-id header of %s", a)
			})
		})
	}
})
