package types

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Edm.DateTime range", func(f *framework.F) {
	beforeMin := spec.MinDateTime.Add(-100 * time.Nanosecond)
	dotnetMin := time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	f.DescribeTable("types.datetime.before-1601", "refuses a DateTime before 1601 with 400",
		func(ctx context.Context, t time.Time, upsert bool) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", map[string]api.Value{"When": api.DateTime(t)})
			var err error
			if upsert {
				_, err = b.UpdateEntity(ctx, table, e, api.Replace, "")
			} else {
				_, err = b.InsertEntity(ctx, table, e)
			}
			Expect(err).To(HaveFailedWithStatus(400), "a write with When=%s", api.FormatDateTime(t))
			f.Choice("code for a DateTime before 1601", OutcomeOf(err))
			_, err = b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(HaveFailedWithStatus(404), "the refused entity was stored")
		},
		Entry("one tick before 1601 by Insert Entity", beforeMin, false),
		Entry("one tick before 1601 by Insert Or Replace Entity", beforeMin, true),
		Entry("at 0001-01-01 by Insert Entity", dotnetMin, false),
		Entry("at 0001-01-01 by Insert Or Replace Entity", dotnetMin, true),
	)
})

var _ = framework.Describe("Property type changes", func(f *framework.F) {
	type change struct {
		from, to api.Value
		mode     api.UpdateMode
		ifMatch  string
	}
	f.DescribeTable("types.type-change", "stores the new type",
		func(ctx context.Context, c change) {
			b, table := f.Backend(), f.NewTable(ctx)
			old := api.NewEntity("p", "r", map[string]api.Value{"V": c.from, "Other": api.Int32(1)})
			_, err := b.InsertEntity(ctx, table, old)
			Expect(err).To(SucceedOnBackend())
			scenario.RequireRoundTrip(ctx, f, b, table, c.to)
			_, err = b.UpdateEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"V": c.to}), c.mode, c.ifMatch)
			// A refusal of the new type is this rule's failure; any other refusal is one of
			// the write's own rule, a precondition.
			Expect(err).NotTo(HaveFailedWithStatus(400), "%s of V=%s over V=%s", c.mode, c.to, c.from)
			writeRule := "concurrency.if-match-any"
			switch {
			case c.ifMatch == "" && c.mode == api.Replace:
				writeRule = "modify.insert-or-replace.replaces"
			case c.ifMatch == "":
				writeRule = "modify.insert-or-merge.merges"
			}
			f.Requires(writeRule, fmt.Sprintf("the %s with If-Match %q succeeds", c.mode, c.ifMatch), func() {
				Expect(err).To(SucceedOnBackend(), "%s of V=%s over V=%s", c.mode, c.to, c.from)
			})
			got, err := b.GetEntity(ctx, table, "p", "r", nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(HaveProperty("V", c.to))
			page, err := b.QueryEntities(ctx, table, api.Query{})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(HaveLen(1))
			Expect(page.Entities[0]).To(HaveProperty("V", c.to), "Query Entities after the change")
		},
		Entry("Int32 to String by Merge Entity", change{api.Int32(42), api.String("42"), api.Merge, api.IfMatchAny}),
		Entry("Int32 to String by Update Entity", change{api.Int32(42), api.String("42"), api.Replace, api.IfMatchAny}),
		Entry("String to Int64 by Merge Entity", change{api.String("7"), api.Int64(7), api.Merge, api.IfMatchAny}),
		Entry("Int32 to Int64 by Merge Entity", change{api.Int32(7), api.Int64(7), api.Merge, api.IfMatchAny}),
		Entry("Double to Boolean by Insert Or Merge Entity", change{api.Double(1.5), api.Bool(true), api.Merge, ""}),
		Entry("Binary to Guid by Insert Or Replace Entity", change{api.Binary([]byte{1}), api.Guid("5d6e4f0a-3c2b-4a19-8e7d-6c5b4a392817"), api.Replace, ""}),
		Entry("DateTime to Double by Merge Entity", change{api.DateTime(spec.MinDateTime), api.Double(0.25), api.Merge, api.IfMatchAny}),
	)
})
