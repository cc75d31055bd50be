package entities

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("System properties", func(f *framework.F) {
	Context("when an entity is inserted", func() {
		f.It("entities.timestamp.set", "gets a Timestamp from the service, returned by Get and Query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			before := time.Now()
			insert(ctx, b, table, api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)}))
			after := time.Now()
			got := get(ctx, b, table, "p", "r")
			Expect(got.Timestamp).NotTo(BeZero(), "Get Entity returned no Timestamp")
			Expect(got.Timestamp).To(BeTemporally(">=", before.Add(-spec.MaxClockSkew)), "the Timestamp lies before the insert")
			Expect(got.Timestamp).To(BeTemporally("<=", after.Add(spec.MaxClockSkew)), "the Timestamp lies after the insert")
			Expect(got.Absent&api.AbsentTimestamp).To(BeZero(), "Get Entity marked the Timestamp absent")
			listed := queryAll(ctx, b, table, api.Query{})
			Expect(listed).To(HaveLen(1))
			Expect(listed[0].Timestamp).To(BeTemporally("==", got.Timestamp), "Query Entities and Get Entity disagree on the Timestamp")
			Expect(got.Properties).NotTo(HaveKey("Timestamp"), "the Timestamp came back as a custom property")
		})
		f.It("entities.etag.present", "gets an ETag, the same from the insert, Get and Query", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			stored := insert(ctx, b, table, api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)}))
			Expect(stored.ETag).NotTo(BeEmpty(), "Insert Entity returned no ETag")
			got := scenario.ReadStable(ctx, f, b, table, "p", "r")
			Expect(got.ETag).To(Equal(stored.ETag), "Get Entity's ETag differs from the insert's")
			listed := queryAll(ctx, b, table, api.Query{})
			Expect(listed).To(HaveLen(1))
			Expect(listed[0].ETag).To(Equal(stored.ETag), "Query Entities' ETag differs from the insert's")
		})
	})

	Context("when the client sends a Timestamp", func() {
		f.It("entities.timestamp.client-ignored", "stores the service's Timestamp instead", func(ctx context.Context) {
			raw, table := f.Raw(), f.NewTable(ctx)
			const body = `{"PartitionKey":"p","RowKey":"r","Timestamp":"2001-02-03T04:05:06Z","Timestamp@odata.type":"Edm.DateTime","V":1}`
			status, code := rawInsert(ctx, raw, table, body)
			Expect(status).To(BeElementOf(http.StatusCreated, http.StatusNoContent), "Insert Entity with a Timestamp answered %d %s", status, code)
			got := get(ctx, f.Backend(), table, "p", "r")
			Expect(got.Timestamp.Year()).NotTo(Equal(2001), "the client's Timestamp was stored: %s", got.Timestamp)
			f.Requires("entities.timestamp.set", "the stored Timestamp is the service's, within the clock skew of now", func() {
				Expect(got.Timestamp).To(BeTemporally("~", time.Now(), spec.MaxClockSkew))
			})
			Expect(got).To(LackProperty("Timestamp"))
			f.Requires("types.int32.round-trip", "read back V as the Edm.Int32 it was sent as", func() {
				Expect(got).To(HaveProperty("V", api.Int32(1)))
			})
		})
	})

	Context("when the entity is written again", func() {
		writes := []any{
			Entry("by Update Entity", scenario.Replace),
			Entry("by Merge Entity", scenario.Merge),
			Entry("by Insert Or Replace Entity", scenario.InsertOrReplace),
			Entry("by Insert Or Merge Entity", scenario.InsertOrMerge),
		}
		f.DescribeTable("entities.timestamp.increases", "moves the Timestamp forward",
			func(ctx context.Context, w scenario.Write) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
				insert(ctx, b, table, e)
				first := get(ctx, b, table, "p", "r").Timestamp
				w.Require(ctx, f, b, table, e.With("V", api.Int32(2)))
				second := get(ctx, b, table, "p", "r").Timestamp
				Expect(second).To(BeTemporally(">", first), "the Timestamp stayed at or went back to %s (was %s)", api.FormatDateTime7(second), api.FormatDateTime7(first))
			},
			writes...,
		)
		f.DescribeTable("entities.etag.changes", "gives the entity a new ETag, returned by later reads",
			func(ctx context.Context, w scenario.Write) {
				b, table := f.Backend(), f.NewTable(ctx)
				e := api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)})
				seen := map[string]bool{insert(ctx, b, table, e).ETag: true}
				for i := int32(2); i <= 3; i++ {
					etag := w.Require(ctx, f, b, table, e.With("V", api.Int32(i)))
					Expect(etag).NotTo(BeEmpty(), "%s returned no ETag", w.Name)
					Expect(seen).NotTo(HaveKey(etag), "%s returned an ETag the entity already had: %s", w.Name, etag)
					seen[etag] = true
					Expect(scenario.ReadStable(ctx, f, b, table, "p", "r").ETag).To(Equal(etag), "Get Entity after %s", w.Name)
				}
			},
			writes...,
		)
	})

	Context("when the entity is read", func() {
		f.It("entities.reads.stable", "keeps its ETag and Timestamp", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			insert(ctx, b, table, api.NewEntity("p", "r", map[string]api.Value{"V": api.Int32(1)}))
			first := get(ctx, b, table, "p", "r")
			_ = queryAll(ctx, b, table, api.Query{Filter: "V eq 1"})
			_, err := b.GetEntity(ctx, table, "p", "r", []string{"V"})
			Expect(err).To(SucceedOnBackend())
			second := get(ctx, b, table, "p", "r")
			Expect(second.ETag).To(Equal(first.ETag), "reads changed the ETag")
			Expect(second.Timestamp).To(BeTemporally("==", first.Timestamp), "reads changed the Timestamp")
		})
	})
})
