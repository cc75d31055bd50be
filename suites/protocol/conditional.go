package protocol

import (
	"context"

	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// merged is what stored() becomes after a merge of Name "new".
func merged() api.Entity {
	return api.NewEntity("p", "r", map[string]api.Value{"Keep": api.Int32(1), "Name": api.String("new")})
}

// unchanged is what stored() holds.
func unchanged() api.Entity {
	return api.NewEntity("p", "r", map[string]api.Value{"Keep": api.Int32(1), "Name": api.String("old")})
}

var _ = framework.Describe("Merge verbs", func(f *framework.F) {
	for _, method := range []string{"MERGE", "PATCH"} {
		f.It("protocol.merge.verbs", method+" with If-Match * merges, keeping the properties not sent", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			stored(ctx, b, table)
			a := send(ctx, raw, method, entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": "*"})
			Expect(a.status).To(BeNumerically("<", 300), "%s", a)
			f.Requires("protocol.update.no-content", "the "+method+" answers 204", func() {
				Expect(a.status).To(Equal(204), "%s", a)
			})
			Expect(table).To(HoldExactly(ctx, b, merged()))
		})
	}

	f.It("protocol.merge.tunnel", "POST with X-HTTP-Method: MERGE merges", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		a := send(ctx, raw, "POST", entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": "*", "X-HTTP-Method": "MERGE"})
		Expect(a.status).To(Equal(204), "%s", a)
		Expect(table).To(HoldExactly(ctx, b, merged()))
	})

	f.It("protocol.x-method.not-post", "PUT with X-HTTP-Method is refused with 400 XMethodNotUsingPost", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		a := send(ctx, raw, "PUT", entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": "*", "X-HTTP-Method": "MERGE"})
		Expect(a.status).To(Equal(400), "%s", a)
		Expect(a.errorCode()).To(Equal("XMethodNotUsingPost"), "the error code of %s", a)
		Expect(table).To(HoldExactly(ctx, b, unchanged()))
	})

	f.It("protocol.x-method.bad-value", "POST with an unknown X-HTTP-Method is refused with 400 XMethodIncorrectValue", func(ctx context.Context) {
		raw, b := f.Raw(), f.Backend()
		table := f.NewTable(ctx)
		stored(ctx, b, table)
		a := send(ctx, raw, "POST", entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": "*", "X-HTTP-Method": "FROB"})
		Expect(a.status).To(Equal(400), "%s", a)
		Expect(a.errorCode()).To(Equal("XMethodIncorrectValue"), "the error code of %s", a)
		Expect(table).To(HoldExactly(ctx, b, unchanged()))
	})
})

var _ = framework.Describe("Conditional headers", func(f *framework.F) {
	for _, method := range []string{"PUT", "DELETE"} {
		f.It("protocol.if-none-match.refused", "refuses If-None-Match on "+method+" with 400 InvalidInput and changes nothing", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			stored(ctx, b, table)
			var payload []byte
			if method == "PUT" {
				payload = body("p", "r", "Name", "new")
			}
			a := send(ctx, raw, method, entityPath(table, "p", "r"), payload, map[string]string{"If-Match": "", "If-None-Match": "*"})
			Expect(a.status).To(Equal(400), "%s", a)
			Expect(a.errorCode()).To(Equal("InvalidInput"), "the error code of %s", a)
			Expect(table).To(HoldExactly(ctx, b, unchanged()))
		})
	}

	for _, method := range []string{"PUT", "MERGE", "DELETE"} {
		f.It("protocol.if-match.both", "refuses If-Match with If-None-Match on "+method+" with 400 InvalidInput and changes nothing", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			e := stored(ctx, b, table)
			var payload []byte
			if method != "DELETE" {
				payload = body("p", "r", "Name", "new")
			}
			a := send(ctx, raw, method, entityPath(table, "p", "r"), payload, map[string]string{"If-Match": e.ETag, "If-None-Match": "*"})
			Expect(a.status).To(Equal(400), "%s", a)
			Expect(a.errorCode()).To(Equal("InvalidInput"), "the error code of %s", a)
			Expect(table).To(HoldExactly(ctx, b, unchanged()))
		})
	}

	malformed := []struct{ name, value string }{
		{"an unquoted value", "not-an-etag"},
		{"two ETags", `W/"datetime'2021-09-20T21%3A55%3A33.1005177Z'", W/"datetime'2021-09-20T21%3A55%3A34.1005177Z'"`},
	}
	for _, m := range malformed {
		f.It("protocol.etag.malformed", "refuses "+m.name+" in If-Match with 400 InvalidInput", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			stored(ctx, b, table)
			a := send(ctx, raw, "PUT", entityPath(table, "p", "r"), body("p", "r", "Name", "new"), map[string]string{"If-Match": m.value})
			Expect(a.status).To(Equal(400), "%s", a)
			Expect(a.errorCode()).To(Equal("InvalidInput"), "the error code of %s", a)
		})
	}

	for _, method := range []string{"PUT", "MERGE", "DELETE"} {
		f.It("protocol.etag.malformed-no-write", "fails a "+method+" with a malformed If-Match and changes nothing", func(ctx context.Context) {
			raw, b := f.Raw(), f.Backend()
			table := f.NewTable(ctx)
			stored(ctx, b, table)
			var payload []byte
			if method != "DELETE" {
				payload = body("p", "r", "Name", "new")
			}
			a := send(ctx, raw, method, entityPath(table, "p", "r"), payload, map[string]string{"If-Match": malformed[0].value})
			Expect(a.status).To(BeNumerically(">=", 400), "%s", a)
			f.Choice("answer to a malformed If-Match on "+method, a.String())
			Expect(table).To(HoldExactly(ctx, b, unchanged()))
		})
	}
})
