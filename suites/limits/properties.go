package limits

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Property limits", func(f *framework.F) {
	f.DescribeTable("limits.properties.count", "allows 252 custom properties",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			checkWrite(ctx, f, w, bd, spec.ErrTooManyProperties)
		},
		writeEntries(scenario.AllWrites(),
			boundary{"at exactly 252 properties", func() api.Entity {
				return api.NewEntity("p", "r", props(0, spec.MaxCustomProperties))
			}, true},
			boundary{"one over, at 253 properties", func() api.Entity {
				return api.NewEntity("p", "r", props(0, spec.MaxCustomProperties+1))
			}, false},
		)...,
	)

	Context("when a merge adds properties to a stored entity", func() {
		type merge struct {
			stored, sentFrom, sent int
			upsert                 bool
		}
		f.DescribeTable("limits.properties.count-merged", "counts the merged result against 252",
			func(ctx context.Context, m merge, fits bool) {
				b, table := f.Backend(), f.NewTable(ctx)
				seed := api.NewEntity("p", "r", props(0, m.stored))
				_, err := b.InsertEntity(ctx, table, seed)
				Expect(err).To(SucceedOnBackend())
				sent := api.NewEntity("p", "r", props(m.sentFrom, m.sent))
				ifMatch := api.IfMatchAny
				if m.upsert {
					ifMatch = ""
				}
				requireMergeKeeps(ctx, f, b, table, seed, ifMatch)
				_, err = b.UpdateEntity(ctx, table, sent, api.Merge, ifMatch)
				if fits {
					Expect(err).To(SucceedOnBackend(), "merge of %d properties into %d", m.sent, m.stored)
					got, err := b.GetEntity(ctx, table, "p", "r", nil)
					Expect(err).To(SucceedOnBackend())
					Expect(WrittenOnly(got).Properties).To(HaveLen(max(m.stored, m.sentFrom+m.sent)))
					return
				}
				f.Check(spec.CheckRefusal, func() {
					Expect(err).To(HaveFailedWithStatus(400), "merge of %d new properties into %d", m.sent, m.stored)
				})
				f.Choice("refusal code", OutcomeOf(err))
				expectUnchanged(ctx, b, table, seed, true)
			},
			Entry("to exactly 252 by Merge Entity", merge{stored: 200, sentFrom: 200, sent: spec.MaxCustomProperties - 200}, true),
			Entry("to 253, one over, by Merge Entity", merge{stored: 200, sentFrom: 200, sent: spec.MaxCustomProperties - 199}, false),
			Entry("to 253, one over, by Insert Or Merge Entity", merge{stored: 200, sentFrom: 200, sent: spec.MaxCustomProperties - 199, upsert: true}, false),
			Entry("re-sending every one of 252 stored properties by Merge Entity", merge{stored: spec.MaxCustomProperties, sentFrom: 0, sent: spec.MaxCustomProperties}, true),
			Entry("adding one to 252 stored properties by Merge Entity", merge{stored: spec.MaxCustomProperties, sentFrom: spec.MaxCustomProperties, sent: 1}, false),
		)
	})

	nameOf := func(n int) string { return "N" + strings.Repeat("a", n-1) }
	f.DescribeTable("limits.property-name.length", "allows names of 255 characters",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			checkWrite(ctx, f, w, bd, spec.ErrPropertyNameTooLong)
		},
		writeEntries(scenario.AllWrites(),
			boundary{"with a name of exactly 255 characters", func() api.Entity {
				return api.NewEntity("p", "r", map[string]api.Value{nameOf(spec.MaxPropertyNameLength): api.Int32(1)})
			}, true},
			boundary{"with a name of 256 characters, one over", func() api.Entity {
				return api.NewEntity("p", "r", map[string]api.Value{nameOf(spec.MaxPropertyNameLength + 1): api.Int32(1)})
			}, false},
		)...,
	)

	stringOf := func(units int, unit string) func() api.Entity {
		return func() api.Entity {
			return api.NewEntity("p", "r", map[string]api.Value{"S": api.String(strings.Repeat(unit, units))})
		}
	}
	const astral = "😀" // two UTF-16 code units
	strEntries := writeEntries(scenario.AllWrites(),
		boundary{"with 32,000 ASCII characters", stringOf(spec.SafeStringChars, "a"), true},
		boundary{"with 32 Ki + 1 ASCII characters, one over", stringOf(spec.MaxStringChars+1, "a"), false},
	)
	strEntries = append(strEntries, writeEntries([]scenario.Write{scenario.Insert, scenario.Merge},
		boundary{"with 32,000 non-ASCII characters of the Basic Multilingual Plane", stringOf(spec.SafeStringChars, "é"), true},
		boundary{"with 32 Ki + 1 non-ASCII characters, one over", stringOf(spec.MaxStringChars+1, "é"), false},
		boundary{"with 16,000 characters outside the Basic Multilingual Plane, 32,000 units", stringOf(spec.SafeStringChars/2, astral), true},
		boundary{"with 16 Ki + 1 characters outside the Basic Multilingual Plane, two units over", stringOf(spec.MaxStringChars/2+1, astral), false},
		boundary{"with 16 Ki characters outside the Basic Multilingual Plane and one ASCII character, one unit over", func() api.Entity {
			return api.NewEntity("p", "r", map[string]api.Value{"S": api.String(strings.Repeat(astral, spec.MaxStringChars/2) + "a")})
		}, false},
	)...)
	f.DescribeTable("limits.string.size", "allows strings of 32,000 UTF-16 code units and refuses more than 32 Ki",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			checkWrite(ctx, f, w, bd, spec.ErrPropertyValueTooLarge)
		},
		strEntries...,
	)

	// EVIDENCE.md 13, E-string-32k-edge: exactly 32 Ki units is stored or refused.
	f.DescribeTable("limits.string.size-edge", "stores or refuses a string of exactly 32 Ki UTF-16 code units",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := bd.entity()
			_, err := w.Do(ctx, b, table, e)
			if err == nil {
				f.Choice("string of exactly 32 Ki units", "stored")
				got, err := b.GetEntity(ctx, table, e.PartitionKey, e.RowKey, nil)
				Expect(err).To(SucceedOnBackend(), "Get Entity after %s", w.Name)
				Expect(got).To(MatchEntity(e))
				return
			}
			Expect(err).To(HaveFailedAs(spec.ErrPropertyValueTooLarge), "%s of a string %s", w.Name, bd.what)
			f.Choice("string of exactly 32 Ki units", OutcomeOf(err))
			expectUnchanged(ctx, b, table, api.NewEntity(e.PartitionKey, e.RowKey, nil), false)
		},
		writeEntries([]scenario.Write{scenario.Insert},
			boundary{"of ASCII characters", stringOf(spec.MaxStringChars, "a"), false},
			boundary{"of non-ASCII characters of the Basic Multilingual Plane", stringOf(spec.MaxStringChars, "é"), false},
			boundary{"of characters outside the Basic Multilingual Plane", stringOf(spec.MaxStringChars/2, astral), false},
		)...,
	)

	binaryOf := func(n int) func() api.Entity {
		return func() api.Entity { return binaryEntity(1, n) }
	}
	f.DescribeTable("limits.binary.size", "allows binary values of 64 KiB",
		func(ctx context.Context, w scenario.Write, bd boundary) {
			checkWrite(ctx, f, w, bd, spec.ErrPropertyValueTooLarge)
		},
		writeEntries(scenario.AllWrites(),
			boundary{"with exactly 64 KiB", binaryOf(spec.MaxBinaryBytes), true},
			boundary{"with 64 KiB + 1 byte, one over", binaryOf(spec.MaxBinaryBytes + 1), false},
		)...,
	)
})
