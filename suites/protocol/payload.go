package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// typed inserts ("p","r") with one property of each kind the metadata levels treat apart.
func typed(ctx context.Context, raw driver.RawHTTP, table string) {
	GinkgoHelper()
	a := send(ctx, raw, "POST", table, body("p", "r",
		"Str", "text",
		"Small", 7,
		"Flag", true,
		"Big", "1099511627776", "Big@odata.type", "Edm.Int64",
		"When", "2021-09-20T21:55:33.1005177Z", "When@odata.type", "Edm.DateTime",
		"Id", "a455c695-df98-5678-aaaa-81d3367e5a34", "Id@odata.type", "Edm.Guid",
		"Bin", "AAEC", "Bin@odata.type", "Edm.Binary",
	), map[string]string{"Prefer": "return-no-content"})
	framework.Requires("modify.insert.stores", "insert the typed entity", func() {
		Expect(a.status).To(insertAccepted, "setting up: %s", a)
	})
}

// needAnnotation are the properties of typed() whose type JSON cannot show.
var needAnnotation = map[string]string{"Big": "Edm.Int64", "When": "Edm.DateTime", "Id": "Edm.Guid", "Bin": "Edm.Binary"}

// inferred are the properties of typed() (and the keys) that minimal metadata leaves bare.
var inferred = []string{"Str", "Small", "Flag", "PartitionKey", "RowKey"}

func checkNoMetadata(e map[string]any) {
	GinkgoHelper()
	Expect(odataMembers(e)).To(BeEmpty(), "odata members in a nometadata entity")
	Expect(e).To(HaveKeyWithValue("Big", "1099511627776"), "an Int64 must come as a JSON string")
}

func checkMinimalMetadata(e map[string]any) {
	GinkgoHelper()
	for name, t := range needAnnotation {
		Expect(e).To(HaveKeyWithValue(name+"@odata.type", t), "the annotation of %s", name)
	}
	for _, name := range inferred {
		Expect(e).NotTo(HaveKey(name+"@odata.type"), "%s needs no annotation", name)
	}
	Expect(e).To(HaveKeyWithValue("Big", "1099511627776"), "an Int64 must come as a JSON string")
}

func checkFullMetadata(e map[string]any) {
	GinkgoHelper()
	checkFullMetadataMembers(e)
	Expect(e).To(HaveKeyWithValue("Timestamp@odata.type", "Edm.DateTime"))
}

// checkFullMetadataMembers checks the odata members that only a full-metadata entity has.
func checkFullMetadataMembers(e map[string]any) {
	GinkgoHelper()
	for _, k := range []string{"odata.type", "odata.id", "odata.etag", "odata.editLink"} {
		Expect(e).To(HaveKey(k), "the full-metadata member %s", k)
	}
}

// odataError is the odata.error member of an error answer.
type odataError struct {
	Code    string `json:"code"`
	Message struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	} `json:"message"`
}

// errorBody reads a's odata.error member; it fails the spec when a has none or it has no code.
func errorBody(a answer) odataError {
	GinkgoHelper()
	Expect(a.header.Get("Content-Type")).To(HavePrefix("application/json"), "%s", a)
	var doc struct {
		Error *odataError `json:"odata.error"`
	}
	Expect(json.Unmarshal(a.body, &doc)).To(Succeed(), "%s", a)
	Expect(doc.Error).NotTo(BeNil(), "no odata.error member: %s", a)
	Expect(doc.Error.Code).NotTo(BeEmpty(), "the odata.error code of %s", a)
	return *doc.Error
}

var _ = framework.Describe("Error bodies", func(f *framework.F) {
	// Each case's status is the subject of rule (a precondition here): the error body and
	// its header are judged only on the answer the case is about.
	for _, c := range []struct {
		name   string
		status int
		rule   string
		do     func(ctx context.Context, raw driver.RawHTTP, b api.Backend, table string) answer
	}{
		{"a read of a missing entity", 404, "pattern.impl.point-query", func(ctx context.Context, raw driver.RawHTTP, _ api.Backend, table string) answer {
			return send(ctx, raw, "GET", entityPath(table, "p", "missing"), nil, nil)
		}},
		{"an insert conflict", 409, "modify.insert.conflict", func(ctx context.Context, raw driver.RawHTTP, b api.Backend, table string) answer {
			stored(ctx, b, table)
			return send(ctx, raw, "POST", table, body("p", "r"), nil)
		}},
		{"a stale ETag", 412, "concurrency.stale-etag.replace", func(ctx context.Context, raw driver.RawHTTP, b api.Backend, table string) answer {
			e := stored(ctx, b, table)
			_, err := scenario.UpdateAny(ctx, b, table, e, api.Merge)
			Expect(err).To(SucceedOnBackend())
			return send(ctx, raw, "PUT", entityPath(table, "p", "r"), body("p", "r"), map[string]string{"If-Match": e.ETag})
		}},
		{"a delete without If-Match", 400, "modify.delete.requires-if-match", func(ctx context.Context, raw driver.RawHTTP, b api.Backend, table string) answer {
			stored(ctx, b, table)
			return send(ctx, raw, "DELETE", entityPath(table, "p", "r"), nil, map[string]string{"If-Match": ""})
		}},
		{"an insert into a missing table", 404, "tables.missing.entity-operations", func(ctx context.Context, raw driver.RawHTTP, _ api.Backend, table string) answer {
			return send(ctx, raw, "POST", table+"missing", body("p", "r"), nil)
		}},
	} {
		f.It("protocol.error.body", "answers "+c.name+" with an odata.error body with a code and a message", func(ctx context.Context) {
			a := c.do(ctx, f.Raw(), f.Backend(), f.NewTable(ctx))
			f.Requires(c.rule, "answer "+c.name+" with "+strconv.Itoa(c.status), func() {
				Expect(a.status).To(Equal(c.status), "%s", a)
			})
			doc := errorBody(a)
			Expect(doc.Message.Value).NotTo(BeEmpty(), "no message")
		})
		f.It("protocol.error.code-header", "answers "+c.name+" with the odata.error code in x-ms-error-code", func(ctx context.Context) {
			a := c.do(ctx, f.Raw(), f.Backend(), f.NewTable(ctx))
			f.Requires(c.rule, "answer "+c.name+" with "+strconv.Itoa(c.status), func() {
				Expect(a.status).To(Equal(c.status), "%s", a)
			})
			var code string
			f.Requires("protocol.error.body", "answer "+c.name+" with an odata.error body with a code", func() {
				code = errorBody(a).Code
			})
			f.Check(spec.CheckErrorCodeHeader, func() {
				Expect(a.header.Get("x-ms-error-code")).To(Equal(code), "the x-ms-error-code header of %s", a)
			})
		})
	}
})

var _ = framework.Describe("JSON metadata levels", func(f *framework.F) {
	f.It("protocol.accept.nometadata", "returns a read entity without odata members and Int64 as a string", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": noMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		checkNoMetadata(object(a))
	})

	f.It("protocol.accept.nometadata", "returns query results without odata members", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"Accept": noMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		Expect(odataMembers(object(a))).To(BeEmpty(), "odata members in a nometadata query answer")
		vs := values(a)
		Expect(vs).To(HaveLen(1), "the query results of %s", a)
		checkNoMetadata(vs[0])
	})

	f.It("protocol.accept.minimalmetadata", "annotates exactly the types JSON cannot show in a read entity", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": minimalMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		e := object(a)
		Expect(e).To(HaveKey("odata.metadata"), "the odata.metadata member of %s", a)
		checkMinimalMetadata(e)
	})

	f.It("protocol.accept.minimalmetadata", "annotates exactly the types JSON cannot show in query results", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"Accept": minimalMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		Expect(object(a)).To(HaveKey("odata.metadata"), "the odata.metadata member of %s", a)
		vs := values(a)
		Expect(vs).To(HaveLen(1), "the query results of %s", a)
		checkMinimalMetadata(vs[0])
	})

	f.It("protocol.accept.minimal-etag", "puts odata.etag on every minimal-metadata query result", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		for _, rk := range []string{"a", "b", "c"} {
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", rk, nil))
			Expect(err).To(SucceedOnBackend())
		}
		a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"Accept": minimalMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		vs := values(a)
		Expect(vs).To(HaveLen(3), "the query results of %s", a)
		for _, e := range vs {
			Expect(e).To(HaveKey("odata.etag"), "result %v", e["RowKey"])
		}
	})

	f.It("protocol.accept.fullmetadata", "adds the odata members and the Timestamp annotation to a read entity", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": fullMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		checkFullMetadata(object(a))
	})

	f.It("protocol.accept.fullmetadata", "adds the odata members and the Timestamp annotation to query results", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"Accept": fullMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		vs := values(a)
		Expect(vs).To(HaveLen(1), "the query results of %s", a)
		checkFullMetadata(vs[0])
	})

	f.It("protocol.format.overrides-accept", "answers a query in the $format level whatever Accept says", func(ctx context.Context) {
		raw := f.Raw()
		table := f.NewTable(ctx)
		typed(ctx, raw, table)
		a := send(ctx, raw, "GET", queryPath(table, map[string]string{"$format": fullMetadata}), nil, map[string]string{"Accept": noMetadata})
		Expect(a.status).To(Equal(200), "%s", a)
		vs := values(a)
		Expect(vs).To(HaveLen(1), "the query results of %s", a)
		f.Check(spec.CheckMetadataLevel, func() {
			checkFullMetadataMembers(vs[0])
			f.Requires("protocol.accept.fullmetadata", "read the Timestamp's annotation in a full-metadata answer", func() {
				Expect(vs[0]).To(HaveKeyWithValue("Timestamp@odata.type", "Edm.DateTime"))
			})
		})
	})
})

var _ = framework.Describe("Edm.Double on the wire", func(f *framework.F) {
	for _, c := range []struct {
		name string
		sent []any
	}{
		{"sent as 5 with its annotation", []any{"D", 5, "D@odata.type", "Edm.Double"}},
		{"sent as 5.0 without annotation", []any{"D", json.RawMessage("5.0")}},
	} {
		f.It("protocol.double.whole", "returns a whole Double "+c.name+" as 5.0", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			a := send(ctx, raw, "POST", table, body("p", "r", c.sent...), map[string]string{"Prefer": "return-no-content"})
			Expect(a.status).To(insertAccepted, "%s", a)
			got := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": minimalMetadata})
			Expect(got.status).To(Equal(200), "%s", got)
			n, ok := object(got)["D"].(json.Number)
			Expect(ok).To(BeTrue(), "D is not a JSON number: %s", got)
			Expect(strings.ContainsAny(n.String(), ".eE")).To(BeTrue(), "D came back as %s, which reads as an integer", n)
			v, err := n.Float64()
			Expect(err).NotTo(HaveOccurred())
			Expect(v).To(Equal(5.0), "the value of D in %s", got)
			Expect(table).To(HoldEntity(ctx, b, api.NewEntity("p", "r", map[string]api.Value{"D": api.Double(5)})))
		})
	}
})

var _ = framework.Describe("Edm.Double in exponent form", func(f *framework.F) {
	for _, v := range []float64{5e-324, 1e-7, 1e21, -1.5e300} {
		f.It("protocol.double.exponent", fmt.Sprintf("answers the Double %g as a number without annotation", v), func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			a := send(ctx, raw, "POST", table, body("p", "r", "D", v, "D@odata.type", "Edm.Double"), map[string]string{"Prefer": "return-no-content"})
			Expect(a.status).To(insertAccepted, "%s", a)
			got := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": minimalMetadata})
			Expect(got.status).To(Equal(200), "%s", got)
			e := object(got)
			Expect(e).NotTo(HaveKey("D@odata.type"), "a Double in exponent form needs no annotation: %s", got)
			n, ok := e["D"].(json.Number)
			Expect(ok).To(BeTrue(), "D is not a JSON number: %s", got)
			back, err := n.Float64()
			Expect(err).NotTo(HaveOccurred())
			Expect(back).To(BeNumerically("~", v, math.Abs(v)*1e-14), "the value of D in %s", got)
			Expect(table).To(HoldEntity(ctx, b, api.NewEntity("p", "r", map[string]api.Value{"D": api.Double(v)})))
		})
	}
})
