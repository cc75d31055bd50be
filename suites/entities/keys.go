package entities

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Entity keys", func(f *framework.F) {
	Context("when the body lacks a key", func() {
		f.DescribeTable("entities.key.required", "refuses the insert with 400",
			func(ctx context.Context, body string) {
				raw, table := f.Raw(), f.NewTable(ctx)
				status, code := rawInsert(ctx, raw, table, body)
				Expect(status).To(Equal(http.StatusBadRequest), "POST %s with body %s answered %d %s", table, body, status, code)
				f.Choice("code for a missing key", fmt.Sprintf("%d %s", status, code))
				Expect(queryAll(ctx, f.Backend(), table, api.Query{})).To(BeEmpty(), "the refused insert stored an entity")
			},
			Entry("without PartitionKey", `{"RowKey":"r","V":1}`),
			Entry("without RowKey", `{"PartitionKey":"p","V":1}`),
			Entry("without either key", `{"V":1}`),
		)

		f.It("entities.key.required.code", "refuses an insert without either key with 400 PropertiesNeedValue and echoes Prefer", func(ctx context.Context) {
			raw, table := f.Raw(), f.NewTable(ctx)
			req, err := raw.NewRequest(ctx, http.MethodPost, table, []byte(`{"String":"stringystring","Value":10}`))
			Expect(err).NotTo(HaveOccurred(), "build the request")
			req.Header.Set("Prefer", "return-no-content")
			resp, err := raw.Do(req)
			Expect(err).NotTo(HaveOccurred(), "conform:transport: POST %s", table)
			defer resp.Body.Close()
			status, code := ResponseOutcome(resp)
			Expect(status).To(Equal(http.StatusBadRequest), "POST %s without keys answered %d %s", table, status, code)
			Expect(code).To(Equal("PropertiesNeedValue"), "the error code")
			Expect(resp.Header.Get("Preference-Applied")).To(Equal("return-no-content"), "the refusal's Preference-Applied")
			Expect(queryAll(ctx, f.Backend(), table, api.Query{})).To(BeEmpty(), "the refused insert stored an entity")
		})
	})

	Context("with an empty PartitionKey", func() {
		f.It("entities.key.empty-partition-key", "stores the entity and reads it back by Get and Query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("", "rk", map[string]api.Value{"V": api.Int32(1)})
			insert(ctx, b, table, e)
			Expect(get(ctx, b, table, "", "rk")).To(MatchEntity(e))
			Expect(queryAll(ctx, b, table, api.Query{Filter: "PartitionKey eq ''"})).To(HaveKeys(e.Key()))
		})
	})

	Context("with an empty RowKey", func() {
		f.DescribeTable("entities.key.empty-row-key", "stores and reads the entity back, or refuses it with 400",
			func(ctx context.Context, pk string) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := api.NewEntity(pk, "", map[string]api.Value{"V": api.Int32(1)})
				_, err := b.InsertEntity(ctx, table, e)
				f.Choice("insert with an empty RowKey", OutcomeOf(err))
				if err != nil {
					Expect(err).To(HaveFailedWithStatus(400))
					Expect(err).To(BeDocumentedRefusal())
					return
				}
				Expect(get(ctx, b, table, pk, "")).To(MatchEntity(e))
			},
			Entry("and a non-empty PartitionKey", "pk"),
			Entry("and an empty PartitionKey", ""),
		)
	})

	Context("with keys that differ only in letter case", func() {
		f.DescribeTable("entities.key.case-sensitive", "stores distinct entities",
			func(ctx context.Context, a, b api.Key) {
				be, table := f.Backend(), f.NewTable(ctx)
				if a.PartitionKey != b.PartitionKey {
					scenario.RequireKeyIdentity(ctx, f, be, table) // the two keys share their RowKey
				}
				ea := api.NewEntity(a.PartitionKey, a.RowKey, map[string]api.Value{"Which": api.String("first")})
				eb := api.NewEntity(b.PartitionKey, b.RowKey, map[string]api.Value{"Which": api.String("second")})
				insert(ctx, be, table, ea)
				insert(ctx, be, table, eb)
				Expect(get(ctx, be, table, a.PartitionKey, a.RowKey)).To(MatchEntity(ea))
				Expect(get(ctx, be, table, b.PartitionKey, b.RowKey)).To(MatchEntity(eb))
				f.Requires("query.table-scan", "a query of the whole table returns both entities", func() {
					Expect(queryAll(ctx, be, table, api.Query{})).To(HaveLen(2))
				})
			},
			Entry("in the PartitionKey", api.Key{PartitionKey: "part", RowKey: "r"}, api.Key{PartitionKey: "PART", RowKey: "r"}),
			Entry("in the RowKey", api.Key{PartitionKey: "p", RowKey: "row"}, api.Key{PartitionKey: "p", RowKey: "Row"}),
			Entry("in non-ASCII letters", api.Key{PartitionKey: "p", RowKey: "é"}, api.Key{PartitionKey: "p", RowKey: "É"}),
		)
	})

	Context("with the same RowKey in two partitions", func() {
		f.It("entities.key.identity", "stores two entities", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e1 := api.NewEntity("p1", "r", map[string]api.Value{"V": api.Int32(1)})
			e2 := api.NewEntity("p2", "r", map[string]api.Value{"V": api.Int32(2)})
			insert(ctx, b, table, e1)
			insert(ctx, b, table, e2)
			Expect(get(ctx, b, table, "p1", "r")).To(MatchEntity(e1))
			Expect(get(ctx, b, table, "p2", "r")).To(MatchEntity(e2))
		})
	})

	Context("with the same keys in two tables", func() {
		f.It("entities.key.identity", "stores independent entities", func(ctx context.Context) {
			b, t1, t2 := f.Backend(), f.NewTable(ctx), f.NewTable(ctx)
			e1 := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
			e2 := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(2)})
			insert(ctx, b, t1, e1)
			insert(ctx, b, t2, e2)
			Expect(get(ctx, b, t1, "p", "r")).To(MatchEntity(e1), "writing the entity of %s changed the one of %s", t2, t1)
			Expect(scenario.DeleteAny(ctx, b, t1, "p", "r")).To(SucceedOnBackend())
			Expect(get(ctx, b, t2, "p", "r")).To(MatchEntity(e2), "deleting the entity of %s touched %s", t1, t2)
		})
	})

	Context("with a forbidden character in a key", func() {
		entries := []any{}
		for _, c := range forbiddenKeyChars {
			for _, inPK := range []bool{true, false} {
				where := "RowKey"
				if inPK {
					where = "PartitionKey"
				}
				entries = append(entries, Entry(fmt.Sprintf("%s holding %s", where, c.name), c.char, inPK))
			}
		}
		f.DescribeTable("entities.key.forbidden-characters", "refuses the entity with 400",
			func(ctx context.Context, char string, inPK bool) {
				b, table := f.Backend(), f.NewTable(ctx)
				key := "a" + char + "b"
				e := api.NewEntity("p", key, map[string]api.Value{"V": api.Int32(1)})
				if inPK {
					e.PartitionKey, e.RowKey = key, "r"
				}
				_, err := b.InsertEntity(ctx, table, e)
				Expect(err).To(HaveFailedWithStatus(400), "Insert Entity with keys (%q, %q)", e.PartitionKey, e.RowKey)
				Expect(err).To(HaveFailedAs(spec.ErrOutOfRangeInput, spec.ErrInvalidInput))
				f.Choice("code for a forbidden key character", OutcomeOf(err))
				Expect(queryAll(ctx, b, table, api.Query{})).To(BeEmpty(), "the refused entity was stored")
			},
			entries...,
		)
	})

	Context("with characters that keys allow", func() {
		entries := []any{}
		for _, k := range allowedKeys {
			entries = append(entries, Entry(k.name, k.key))
		}
		f.DescribeTable("entities.key.allowed-characters", "reaches the entity by every operation",
			func(ctx context.Context, key string) {
				b, table := f.Backend(), f.NewTable(ctx)
				pk, rk := key+"P", "R"+key
				e := api.NewEntity(pk, rk, map[string]api.Value{"V": api.Int32(1)})
				insert(ctx, b, table, e)
				Expect(get(ctx, b, table, pk, rk)).To(MatchEntity(e), "Get Entity after Insert")
				filter := fmt.Sprintf("PartitionKey eq '%s' and RowKey eq '%s'", quote(pk), quote(rk))
				Expect(queryAll(ctx, b, table, api.Query{Filter: filter})).To(HaveKeys(e.Key()), "Query Entities $filter=%s", filter)

				e = e.With("V", api.Int32(2))
				_, err := scenario.UpdateAny(ctx, b, table, e, api.Replace)
				Expect(err).To(SucceedOnBackend(), "Update Entity")
				// Read back by the key filter: Get Entity is judged above, and a read it made
				// before the writes must not stand in for them.
				updated := queryAll(ctx, b, table, api.Query{Filter: filter})
				Expect(updated).To(HaveLen(1), "Query Entities $filter=%s after Update", filter)
				Expect(updated[0]).To(MatchEntity(e), "Query Entities after Update")
				e = e.With("W", api.Bool(true))
				_, err = scenario.UpdateAny(ctx, b, table, api.NewEntity(pk, rk, map[string]api.Value{"W": api.Bool(true)}), api.Merge)
				Expect(err).To(SucceedOnBackend(), "Merge Entity")
				merged := queryAll(ctx, b, table, api.Query{Filter: filter})
				Expect(merged).To(HaveLen(1), "Query Entities $filter=%s after Merge", filter)
				Expect(merged[0]).To(HaveProperty("W", api.Bool(true)), "Query Entities after Merge")
				f.Requires("modify.merge.keeps-omitted", "the merge keeps V, which it does not send", func() {
					Expect(merged[0]).To(MatchEntity(e), "Query Entities after Update and Merge")
				})

				Expect(scenario.DeleteAny(ctx, b, table, pk, rk)).To(SucceedOnBackend(), "Delete Entity")
				Expect(table).To(LackEntity(ctx, b, pk, rk), "Get Entity after Delete")
			},
			entries...,
		)
	})

	Context("with many partitions in one table", func() {
		f.It("entities.partitions.many", "reaches every partition by a point query", func(ctx context.Context) {
			const partitions = 100
			b, table := f.Backend(), f.NewTable(ctx)
			for i := range partitions {
				insert(ctx, b, table, api.NewEntity(fmt.Sprintf("p%03d", i), "r", map[string]api.Value{"I": api.Int32(int32(i))}))
			}
			for i := range partitions {
				Expect(get(ctx, b, table, fmt.Sprintf("p%03d", i), "r")).To(HaveProperty("I", api.Int32(int32(i))))
			}
			f.Requires("query.table-scan", "a query of the whole table returns every partition's entity", func() {
				Expect(queryAll(ctx, b, table, api.Query{})).To(HaveLen(partitions))
			})
		})
	})
})

// quote doubles single quotes for an OData string literal (EVIDENCE.md 3.1).
func quote(s string) string { return strings.ReplaceAll(s, "'", "''") }

// forbiddenKeyChars holds one or more characters of each class that keys may not hold
// (EVIDENCE.md 1.2).
var forbiddenKeyChars = []struct{ name, char string }{
	{"a slash", "/"},
	{"a backslash", `\`},
	{"a number sign", "#"},
	{"a question mark", "?"},
	{"U+0000", "\x00"},
	{"a tab", "\t"},
	{"a line feed", "\n"},
	{"a carriage return", "\r"},
	{"U+001F", "\x1f"},
	{"U+007F", "\x7f"},
	{"U+0080", "\u0080"},
	{"U+009F", "\u009f"},
}

// allowedKeys are keys made of characters the documentation allows, chosen where a driver or
// a service might mangle them: quotes, URL delimiters, percent signs, spaces and non-ASCII.
var allowedKeys = []struct{ name, key string }{
	{"with a single quote", "O'Brien"},
	{"with two single quotes", "''"},
	{"with a double quote", `say "hi"`},
	{"with spaces", "a b  c"},
	{"with a leading and a trailing space", " x "},
	{"with URL delimiters", "a&b=c+d;e,f:g@h$i"},
	{"with percent signs", "100%25 %2F"},
	{"with parentheses and brackets", "f(x)[0]{1}"},
	{"with non-ASCII letters", "Zürich-東京-Москва"},
	{"with a character outside the Basic Multilingual Plane", "emoji😀"},
	{"with U+00A0 just past the forbidden range", "a\u00a0b"},
	{"with a tilde and an asterisk", "~*!"},
	{"compound, with the separators the design guide uses", "Sales_empid_000123|2014-08-22"},
}
