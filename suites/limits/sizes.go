package limits

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

// empiricalEdgeGap is how far under 1 MiB one user's measurement on Storage put the edge
// (EVIDENCE.md 1.4: 1,048,488 accepted, 1,048,489 refused).
const empiricalEdgeGap = 88

// Full 64 KiB binary values: 8 of them are about half of 1 MiB, 17 are 6% over.
const (
	halfEntityBinaries = 8
	overEntityBinaries = 17
	// underEntityStrings strings of 32,000 ASCII characters are 85% of 1 MiB counted in
	// UTF-16 and less in any other unit.
	underEntityStrings = 14
	// overEntityStrings strings of 32,000 non-ASCII characters are 10% over 1 MiB in UTF-16.
	overEntityStrings = 18
)

var _ = framework.Describe("Key size", func(f *framework.F) {
	type key struct {
		pk, rk string
		upsert bool
	}
	long := func(n int, unit string) string { return strings.Repeat(unit, n) }
	write := func(ctx context.Context, b api.Backend, table string, k key) (api.Entity, error) {
		e := api.NewEntity(k.pk, k.rk, map[string]api.Value{"V": api.Int32(1)})
		if k.upsert {
			_, err := b.UpdateEntity(ctx, table, e, api.Replace, "")
			return e, err
		}
		_, err := b.InsertEntity(ctx, table, e)
		return e, err
	}
	readBack := func(ctx context.Context, b api.Backend, table string, e api.Entity) {
		GinkgoHelper()
		got, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
		Expect(err).To(SucceedOnBackend(), "Get Entity with keys of %d and %d characters", len([]rune(e.PartitionKey)), len([]rune(e.RowKey)))
		Expect(got).To(MatchEntity(e))
		page, err := b.QueryEntities(ctx, table, api.Query{})
		Expect(err).To(SucceedOnBackend())
		Expect(page.Entities).To(HaveKeys(e.Key()))
	}

	// maxKeyChars is the key length every reading of "1 KiB" allows: 1 KiB of UTF-16.
	const maxKeyChars = spec.MaxKeyBytes / 2
	f.DescribeTable("limits.key.size", "allows keys of 512 characters and refuses keys over 1,024",
		func(ctx context.Context, k key, fits bool) {
			b, table := f.Backend(), f.NewTable(ctx)
			e, err := write(ctx, b, table, k)
			if fits {
				Expect(err).To(SucceedOnBackend())
				readBack(ctx, b, table, e)
				return
			}
			Expect(err).To(HaveFailedWithStatus(400), "a write with keys of %d and %d characters", len(k.pk), len(k.rk))
			f.Choice("refusal code", OutcomeOf(err))
			expectUnchanged(ctx, b, table, api.Entity{}, false)
		},
		Entry("PartitionKey at 512 characters by Insert Entity", key{pk: long(maxKeyChars, "p"), rk: "r"}, true),
		Entry("RowKey at 512 characters by Insert Entity", key{pk: "p", rk: long(maxKeyChars, "r")}, true),
		Entry("both keys at 512 characters by Insert Entity", key{pk: long(maxKeyChars, "p"), rk: long(maxKeyChars, "r")}, true),
		Entry("PartitionKey at 512 characters by Insert Or Replace Entity", key{pk: long(maxKeyChars, "p"), rk: "r", upsert: true}, true),
		Entry("RowKey at 512 characters by Insert Or Replace Entity", key{pk: "p", rk: long(maxKeyChars, "r"), upsert: true}, true),
		Entry("RowKey at 512 non-ASCII characters by Insert Entity", key{pk: "p", rk: long(maxKeyChars, "é")}, true),
		Entry("PartitionKey at 1,025 characters by Insert Entity", key{pk: long(spec.MaxKeyBytes+1, "p"), rk: "r"}, false),
		Entry("RowKey at 1,025 characters by Insert Entity", key{pk: "p", rk: long(spec.MaxKeyBytes+1, "r")}, false),
		Entry("PartitionKey at 1,025 characters by Insert Or Replace Entity", key{pk: long(spec.MaxKeyBytes+1, "p"), rk: "r", upsert: true}, false),
		Entry("RowKey at 1,025 characters by Insert Or Replace Entity", key{pk: "p", rk: long(spec.MaxKeyBytes+1, "r"), upsert: true}, false),
		Entry("RowKey at 2,048 characters by Insert Entity", key{pk: "p", rk: long(2*spec.MaxKeyBytes, "r")}, false),
	)

	f.DescribeTable("limits.key.size-between", "accepts or refuses keys of 513 to 1,024 characters",
		func(ctx context.Context, k key) {
			b, table := f.Backend(), f.NewTable(ctx)
			e, err := write(ctx, b, table, k)
			f.Choice("key of 513 to 1,024 characters", OutcomeOf(err))
			if err != nil {
				Expect(err).To(HaveFailedWithStatus(400))
				Expect(err).To(BeDocumentedRefusal())
				expectUnchanged(ctx, b, table, api.Entity{}, false)
				return
			}
			readBack(ctx, b, table, e)
		},
		Entry("PartitionKey at 513 characters", key{pk: long(maxKeyChars+1, "p"), rk: "r"}),
		Entry("RowKey at 513 characters", key{pk: "p", rk: long(maxKeyChars+1, "r")}),
		Entry("PartitionKey at 1,024 characters", key{pk: long(spec.MaxKeyBytes, "p"), rk: "r"}),
		Entry("RowKey at 1,024 characters", key{pk: "p", rk: long(spec.MaxKeyBytes, "r")}),
		Entry("RowKey at 512 CJK characters, 1,536 bytes of UTF-8", key{pk: "p", rk: long(maxKeyChars, "東")}),
	)
})

var _ = framework.Describe("Entity size", func(f *framework.F) {
	writes := scenario.AllWrites()
	entries := writeEntries(writes,
		boundary{fmt.Sprintf("clearly under 1 MiB, %d strings of 32,000 ASCII characters", underEntityStrings), func() api.Entity {
			return stringEntity(underEntityStrings, spec.SafeStringChars, "a")
		}, true},
		boundary{fmt.Sprintf("clearly over 1 MiB, %d binary values of 64 KiB", overEntityBinaries), func() api.Entity {
			return binaryEntity(overEntityBinaries, spec.MaxBinaryBytes)
		}, false},
	)
	entries = append(entries, writeEntries([]scenario.Write{scenario.Insert},
		boundary{fmt.Sprintf("about half of 1 MiB, %d binary values of 64 KiB", halfEntityBinaries), func() api.Entity {
			return binaryEntity(halfEntityBinaries, spec.MaxBinaryBytes)
		}, true},
		boundary{fmt.Sprintf("clearly over 1 MiB, %d strings of 32,000 non-ASCII characters", overEntityStrings), func() api.Entity {
			return stringEntity(overEntityStrings, spec.SafeStringChars, "é")
		}, false},
	)...)
	f.DescribeTable("limits.entity.size", "allows entities up to 1 MiB",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			size := api.EntitySize(bd.entity())
			if bd.fits {
				Expect(size).To(BeNumerically("<=", spec.MaxEntityBytes*9/10), "the spec's entity is not clearly under 1 MiB")
			} else {
				Expect(size).To(BeNumerically(">=", spec.MaxEntityBytes*21/20), "the spec's entity is not clearly over 1 MiB")
			}
			checkWrite(ctx, f, w, bd, spec.ErrEntityTooLarge)
		},
		entries...,
	)

	f.DescribeTable("limits.entity.size-edge", "accepts or refuses entities at the edge of 1 MiB",
		func(ctx context.Context, size int) {
			e, err := entityOfSize(size)
			Expect(err).NotTo(HaveOccurred())
			Expect(api.EntitySize(e)).To(Equal(size))
			b, table := f.Backend(), f.NewTable(ctx)
			_, err = b.InsertEntity(ctx, table, e)
			f.Choice(fmt.Sprintf("entity of %d bytes by the documented accounting", size), OutcomeOf(err))
			if err != nil {
				Expect(err).To(HaveFailedAs(spec.ErrEntityTooLarge))
				expectUnchanged(ctx, b, table, api.Entity{}, false)
				return
			}
			got, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
			Expect(err).To(SucceedOnBackend())
			Expect(got).To(MatchEntity(e))
		},
		Entry("at the measured edge, 88 bytes under 1 MiB", spec.MaxEntityBytes-empiricalEdgeGap),
		Entry("one byte past the measured edge", spec.MaxEntityBytes-empiricalEdgeGap+1),
		Entry("at exactly 1 MiB", spec.MaxEntityBytes),
		Entry("one byte over 1 MiB", spec.MaxEntityBytes+1),
	)

	// sizeFirstStrings strings of 32,768 characters are 25% over 1 MiB in UTF-16, each
	// also over the value limit (E-entity-size-first).
	const sizeFirstStrings = 20
	f.DescribeTable("limits.entity.size-first", "judges the entity's size before its values' sizes",
		func(ctx context.Context, w scenario.Write) {
			bd := boundary{fmt.Sprintf("of %d strings of %d characters", sizeFirstStrings, spec.MaxStringChars), func() api.Entity {
				return stringEntity(sizeFirstStrings, spec.MaxStringChars, "a")
			}, false}
			Expect(api.EntitySize(bd.entity())).To(BeNumerically(">=", spec.MaxEntityBytes*21/20), "the spec's entity is not clearly over 1 MiB")
			checkWrite(ctx, f, w, bd, spec.ErrEntityTooLarge)
		},
		Entry("by Insert Entity", scenario.Insert),
		Entry("by Merge Entity", scenario.Merge),
	)

	Context("when a merge grows a stored entity past 1 MiB", func() {
		f.DescribeTable("limits.entity.size-merged", "refuses the merge and keeps the entity",
			func(ctx context.Context, ifMatch string) {
				b, table := f.Backend(), f.NewTable(ctx)
				seed := binaryEntity(overEntityBinaries/2, spec.MaxBinaryBytes)
				_, err := b.InsertEntity(ctx, table, seed)
				Expect(err).To(SucceedOnBackend(), "store an entity of %d bytes", api.EntitySize(seed))
				more := api.NewEntity("p", "r", map[string]api.Value{})
				for i := range overEntityBinaries - overEntityBinaries/2 {
					more.Properties[fmt.Sprintf("M%02d", i)] = api.Binary(filled(spec.MaxBinaryBytes, byte(i)))
				}
				requireMergeKeeps(ctx, f, b, table, seed, ifMatch)
				_, err = b.UpdateEntity(ctx, table, more, api.Merge, ifMatch)
				Expect(err).To(HaveFailedWithStatus(400), "a merge that makes the entity %d bytes", api.EntitySize(seed)+api.EntitySize(more)-api.EntitySize(api.NewEntity("p", "r", nil)))
				f.Choice("refusal code", OutcomeOf(err))
				expectUnchanged(ctx, b, table, seed, true)
			},
			Entry("by Merge Entity", api.IfMatchAny),
			Entry("by Insert Or Merge Entity", ""),
		)
	})
})
