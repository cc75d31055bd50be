package patterns

import (
	"bytes"
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// The large entities pattern keeps a value too large for an entity (an employee's photo) in
// blob storage and stores the blob's address in the entity instead.

const propPhoto = "Photo"

// photo returns n bytes of a deterministic image stand-in.
func photo(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte((i*31 + 7) % 251)
	}
	return p
}

// johnJones is the guide's employee 000223 of Sales.
func johnJones() fixtures.Employee {
	e, _ := fixtures.FindEmployee(fixtures.EmployeeRecords(0), "000223")
	return e
}

var _ = framework.Describe("Large entities pattern", func(f *framework.F) {
	Context("with the photo stored in the entity", func() {
		f.It("pattern.large-entities.value-too-large", "refuses a photo one byte over 64 KiB with 400 PropertyValueTooLarge", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := johnJones().Entity().With(propPhoto, api.Binary(photo(spec.MaxBinaryBytes+1)))
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(HaveFailedWith(400, "PropertyValueTooLarge"))
			Expect(table).To(LackEntity(ctx, b, e.PartitionKey, e.RowKey))
		})

		f.It("pattern.large-entities.entity-too-large", "refuses photos totalling more than 1 MiB with 400 EntityTooLarge", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := johnJones().Entity()
			total := 0
			for i := 0; total <= spec.MaxEntityBytes; i++ {
				e.Properties[fixtures.DayProperty(i+1)] = api.Binary(photo(spec.MaxBinaryBytes))
				total += spec.MaxBinaryBytes
			}
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(HaveFailedWith(400, "EntityTooLarge"))
			Expect(table).To(LackEntity(ctx, b, e.PartitionKey, e.RowKey))
		})

		f.It("pattern.large-entities.inline-limit", "stores a photo of exactly 64 KiB and returns it byte for byte", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := johnJones().Entity().With(propPhoto, api.Binary(photo(spec.MaxBinaryBytes)))
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend())
			Expect(table).To(HoldEntity(ctx, b, e))
		})
	})

	Context("with the photo in blob storage and its address in the entity", func() {
		f.It("pattern.large-entities.blob-pointer", "returns the address, which leads to the photo", func(ctx context.Context) {
			b, table := f.Backend(), f.NewTable(ctx)
			blobs := map[string][]byte{} // stands in for blob storage
			jones, image := johnJones(), photo(300<<10)
			address := "https://contoso.blob.core.windows.net/photos/" + jones.Department + "/" + jones.ID + ".jpg"
			blobs[address] = image // the blob is written first, so the pointer never dangles
			e := jones.Entity().With(propPhoto, api.String(address)).With("PhotoBytes", api.Int64(int64(len(image))))
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend())
			got, err := b.GetEntity(ctx, table, jones.Department, jones.ID, nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(e))
			Expect(bytes.Equal(blobs[got.Properties[propPhoto].Str], image)).To(BeTrue(), "the stored address leads to the photo")
		})
	})
})
