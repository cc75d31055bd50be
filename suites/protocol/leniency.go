package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

// The leniencies and limits that real traffic shows (EVIDENCE.md 13): what Storage accepts
// beyond the documented forms, and how it refuses bodies and headers it does not accept.

// insertRaw inserts the JSON object body into table, asking for no content, and returns
// the answer. Whether the answer honours Prefer (204 rather than 201) is the subject of
// protocol.insert.prefer-no-content only: a spec about the stored value accepts either
// (insertAccepted).
func insertRaw(ctx context.Context, raw driver.RawHTTP, table string, body []byte) answer {
	GinkgoHelper()
	return send(ctx, raw, "POST", table, body, map[string]string{"Prefer": "return-no-content", "Content-Type": "application/json"})
}

// insertAccepted is the answer to an insert with Prefer: return-no-content that stored the
// entity: 204 as Storage answers, or 201 from a backend that ignores Prefer.
var insertAccepted = BeElementOf(204, 201)

// readBack reads ("p","r") of table at minimal metadata.
func readBack(ctx context.Context, raw driver.RawHTTP, table string) map[string]any {
	GinkgoHelper()
	a := send(ctx, raw, "GET", entityPath(table, "p", "r"), nil, map[string]string{"Accept": minimalMetadata})
	Expect(a.status).To(Equal(200), "reading back the entity: %s", a)
	return object(a)
}

// expectNothingStored checks that table holds no entity.
func expectNothingStored(ctx context.Context, raw driver.RawHTTP, table string) {
	GinkgoHelper()
	a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"Accept": noMetadata})
	Expect(a.status).To(Equal(200), "querying the table: %s", a)
	Expect(values(a)).To(BeEmpty(), "a refused request stored an entity")
}

// instant reads a DateTime member m of e, with its annotation, as an instant.
func instant(e map[string]any, m string) time.Time {
	GinkgoHelper()
	framework.Requires("protocol.accept.minimalmetadata", "read "+m+" back with its Edm.DateTime annotation in a minimal-metadata answer", func() {
		Expect(e).To(HaveKeyWithValue(m+"@odata.type", "Edm.DateTime"), "the type of %s", m)
	})
	s, ok := e[m].(string)
	Expect(ok).To(BeTrue(), "%s is not a JSON string: %v", m, e[m])
	t, err := time.Parse(time.RFC3339Nano, s)
	Expect(err).NotTo(HaveOccurred(), "%s read back as %q", m, s)
	return t
}

var _ = framework.Describe("Values Storage accepts beyond the documented forms", func(f *framework.F) {
	f.It("protocol.datetime.no-zone", "stores an Edm.DateTime without a zone designator as UTC", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		a := insertRaw(ctx, raw, table, body("p", "r", "D", "2012-01-02T23:00:00", "D@odata.type", "Edm.DateTime"))
		Expect(a.status).To(insertAccepted, "insert of a DateTime without a zone: %s", a)
		Expect(instant(readBack(ctx, raw, table), "D")).To(BeTemporally("==", time.Date(2012, 1, 2, 23, 0, 0, 0, time.UTC)))
	})

	for _, c := range []struct {
		sent         string
		cut, rounded time.Time
	}{
		{"2021-04-01T01:01:01.000000001Z", time.Date(2021, 4, 1, 1, 1, 1, 0, time.UTC), time.Date(2021, 4, 1, 1, 1, 1, 0, time.UTC)},
		{"2021-04-01T01:01:01.12345678Z", time.Date(2021, 4, 1, 1, 1, 1, 123456700, time.UTC), time.Date(2021, 4, 1, 1, 1, 1, 123456800, time.UTC)},
	} {
		f.It("protocol.datetime.extra-digits", "stores an Edm.DateTime of "+c.sent+" at 100 ns, cut or rounded", func(ctx context.Context) {
			raw, table := f.Raw(), f.NewTable(ctx)
			a := insertRaw(ctx, raw, table, body("p", "r", "D", c.sent, "D@odata.type", "Edm.DateTime"))
			Expect(a.status).To(insertAccepted, "insert of a DateTime with more than 7 fractional digits: %s", a)
			got := instant(readBack(ctx, raw, table), "D")
			Expect(got).To(Or(BeTemporally("==", c.cut), BeTemporally("==", c.rounded)), "%s read back as %s", c.sent, got.Format(time.RFC3339Nano))
			if got.Equal(c.cut) {
				f.Choice("digits beyond 100 ns", "cut")
			} else {
				f.Choice("digits beyond 100 ns", "rounded")
			}
		})
	}

	for _, c := range []struct {
		edm, sent string
		want      any // as encoding/json reads the answer with UseNumber
	}{
		{"Edm.Int32", "12345", json.Number("12345")},
		{"Edm.Int32", "-32", json.Number("-32")},
		{"Edm.Boolean", "False", false},
		{"Edm.Boolean", "true", true},
		{"Edm.Double", "3.14", json.Number("3.14")},
		{"Edm.Double", "1.5", json.Number("1.5")},
	} {
		f.It("protocol.typed.string-values", fmt.Sprintf("stores %q sent as a JSON string with %s as that type", c.sent, c.edm), func(ctx context.Context) {
			raw, table := f.Raw(), f.NewTable(ctx)
			a := insertRaw(ctx, raw, table, body("p", "r", "V", c.sent, "V@odata.type", c.edm))
			Expect(a.status).To(insertAccepted, "insert of %s %q as a JSON string: %s", c.edm, c.sent, a)
			e := readBack(ctx, raw, table)
			Expect(e).To(HaveKeyWithValue("V", c.want), "%s %q read back", c.edm, c.sent)
			if c.edm == "Edm.Double" {
				// A Double that JSON shows as a number needs no annotation at minimal metadata;
				// one that is present must say Edm.Double.
				if t, ok := e["V@odata.type"]; ok {
					Expect(t).To(Equal("Edm.Double"))
				}
			} else {
				Expect(e).NotTo(HaveKey("V@odata.type"), "%s needs no annotation at minimal metadata", c.edm)
			}
		})
	}

	f.It("protocol.int64.number", "stores or refuses an Edm.Int64 sent as a bare JSON number", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		a := insertRaw(ctx, raw, table, []byte(`{"PartitionKey":"p","RowKey":"r","V":1152921504606846976,"V@odata.type":"Edm.Int64"}`))
		Expect(a.status).To(BeNumerically("<", 500), "a server error: %s", a)
		if a.status == 204 || a.status == 201 {
			Expect(readBack(ctx, raw, table)).To(HaveKeyWithValue("V", "1152921504606846976"), "the Int64 read back")
			f.Choice("Edm.Int64 as a JSON number", "stored")
			return
		}
		Expect(a.status).To(Equal(400), "%s", a)
		Expect(a.errorCode()).NotTo(BeEmpty(), "a refusal without an error code: %s", a)
		f.Choice("Edm.Int64 as a JSON number", "refused with 400 "+a.errorCode())
		expectNothingStored(ctx, raw, table)
	})

	f.It("protocol.int64.out-of-range", "refuses an Edm.Int64 beyond 64 bits with 400 InvalidInput and stores nothing", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		for _, v := range []string{"9223372036854775808", "-9223372036854775809"} {
			a := insertRaw(ctx, raw, table, body("p", "r", "V", v, "V@odata.type", "Edm.Int64"))
			Expect(a.status).To(Equal(400), "insert of the Int64 %s: %s", v, a)
			Expect(a.errorCode()).To(Equal("InvalidInput"), "%s", a)
		}
		expectNothingStored(ctx, raw, table)
	})

	f.It("protocol.double.out-of-range", "refuses an Edm.Double beyond the range of a Double with 400 InvalidInput and stores nothing", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		for _, v := range []json.RawMessage{json.RawMessage(`"13e7705"`), json.RawMessage(`"-1e400"`)} {
			a := insertRaw(ctx, raw, table, body("p", "r", "V", v, "V@odata.type", "Edm.Double"))
			Expect(a.status).To(Equal(400), "insert of the Double %s: %s", v, a)
			Expect(a.errorCode()).To(Equal("InvalidInput"), "%s", a)
		}
		expectNothingStored(ctx, raw, table)
	})

	f.It("protocol.datetime.empty", "refuses an empty Edm.DateTime with 400 and stores nothing", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		a := insertRaw(ctx, raw, table, body("p", "r", "D", "", "D@odata.type", "Edm.DateTime"))
		Expect(a.status).To(Equal(400), "insert of an empty DateTime: %s", a)
		Expect(a.errorCode()).NotTo(BeEmpty(), "a refusal without an error code: %s", a)
		f.Choice("empty Edm.DateTime", "refused with 400 "+a.errorCode())
		expectNothingStored(ctx, raw, table)
	})

	f.It("protocol.annotation.nested", "ignores an annotation of an annotation and stores the entity", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		a := insertRaw(ctx, raw, table, []byte(`{"PartitionKey":"p","PartitionKey@odata.type":"Edm.String","PartitionKey@odata.type@odata.type":"Edm.String",`+
			`"RowKey":"r","RowKey@odata.type":"Edm.String","RowKey@odata.type@odata.type":"Edm.String",`+
			`"N":"12","N@odata.type":"Edm.Int64","N@odata.type@odata.type":"Edm.String"}`))
		Expect(a.status).To(insertAccepted, "insert with annotations of annotations: %s", a)
		e := readBack(ctx, raw, table)
		Expect(e).To(HaveKeyWithValue("N", "12"))
		f.Requires("protocol.accept.minimalmetadata", "read N back with its Edm.Int64 annotation in a minimal-metadata answer", func() {
			Expect(e).To(HaveKeyWithValue("N@odata.type", "Edm.Int64"))
		})
		for k := range e {
			Expect(strings.Count(k, "@")).To(BeNumerically("<=", 1), "the member %s was stored", k)
		}
	})
})

var _ = framework.Describe("Bodies and headers Storage refuses", func(f *framework.F) {
	f.It("protocol.body.too-large", "refuses an entity body over 4 MiB with 413 RequestBodyTooLarge and stores nothing", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		// 70 strings of 30,000 ASCII characters: 2.1 MB, under the entity limit in UTF-8
		// but over it in UTF-16; 140 would be 4.2 MB. The body's size decides first.
		var b bytes.Buffer
		b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
		s := strings.Repeat("x", 30000)
		for i := 0; b.Len() <= 4<<20; i++ {
			fmt.Fprintf(&b, `,"S%03d":"%s"`, i, s)
		}
		b.WriteString("}")
		a := insertRaw(ctx, raw, table, b.Bytes())
		Expect(a.status).To(Equal(413), "insert of a %d-byte body: %s", b.Len(), a)
		Expect(a.errorCode()).To(Equal("RequestBodyTooLarge"), "%s", a)
		expectNothingStored(ctx, raw, table)
	})

	f.It("protocol.version.invalid", "refuses x-ms-version: invalid with 400 InvalidHeaderValue and creates no table", func(ctx context.Context) {
		raw, name := f.Raw(), f.TableName()
		f.CleanupTable(name)
		a := send(ctx, raw, "POST", "Tables", []byte(fmt.Sprintf(`{"TableName":%q}`, name)),
			map[string]string{"x-ms-version": "invalid", "Content-Type": "application/json", "Prefer": "return-no-content"})
		Expect(a.status).To(Equal(400), "Create Table with x-ms-version: invalid: %s", a)
		Expect(a.errorCode()).To(Equal("InvalidHeaderValue"), "%s", a)
		filter := strings.ReplaceAll(url.Values{"$filter": {"TableName eq '" + name + "'"}}.Encode(), "+", "%20")
		q := send(ctx, raw, "GET", "Tables?"+filter, nil, map[string]string{"Accept": noMetadata})
		Expect(q.status).To(Equal(200), "%s", q)
		Expect(values(q)).To(BeEmpty(), "the table was created")
	})

	f.It("protocol.version.echo", "answers with the x-ms-version the request asked for", func(ctx context.Context) {
		raw, table := f.Raw(), f.NewTable(ctx)
		for _, v := range []string{"2019-02-02", "2019-07-07", "2020-12-06"} {
			a := send(ctx, raw, "GET", queryPath(table, nil), nil, map[string]string{"x-ms-version": v})
			Expect(a.status).To(Equal(200), "Query Entities with x-ms-version %s: %s", v, a)
			f.Check(spec.CheckVersionHeader, func() {
				Expect(a.header.Get("x-ms-version")).To(Equal(v), "the answer's x-ms-version: %s", a)
			})
		}
	})
})
