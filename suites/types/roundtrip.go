package types

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// sample is one value of a type, named for the edge it probes.
type sample struct {
	name  string
	value api.Value
}

// path is how a stored value is read back.
type path int

const (
	byGet path = iota
	byQuery
)

func (p path) String() string {
	if p == byQuery {
		return "through Query Entities"
	}
	return "through Insert and Get"
}

// roundTrip stores v as property V of a fresh entity and reads it back by p.
func roundTrip(ctx context.Context, f *framework.F, p path, v api.Value) {
	GinkgoHelper()
	b, table := f.Backend(), f.NewTable(ctx)
	e := api.NewEntity("p", "r", map[string]api.Value{"V": v, "Marker": api.Int32(1)})
	_, err := b.InsertEntity(ctx, table, e)
	Expect(err).To(SucceedOnBackend(), "Insert Entity with V=%s", v)
	var got api.Entity
	switch p {
	case byGet:
		got, err = b.GetEntity(ctx, table, "p", "r", nil)
		Expect(err).To(SucceedOnBackend(), "Get Entity")
	case byQuery:
		page, err := b.QueryEntities(ctx, table, api.Query{Filter: "PartitionKey eq 'p'"})
		Expect(err).To(SucceedOnBackend(), "Query Entities")
		Expect(page.Entities).To(HaveLen(1), "Query Entities returned %s", KeyList(page.Entities))
		got = page.Entities[0]
	}
	Expect(got).To(HaveProperty("V", v), "%s, the value sent was %s", p, v)
	Expect(got).To(MatchEntity(e))
}

// entries returns one Entry per sample and path.
func entries(samples []sample) []any {
	out := make([]any, 0, 2*len(samples))
	for _, s := range samples {
		for _, p := range []path{byGet, byQuery} {
			out = append(out, Entry(fmt.Sprintf("%s %s", s.name, p), p, s.value))
		}
	}
	return out
}

// dateTime returns an Edm.DateTime value of a UTC instant.
func dateTime(year int, month time.Month, day, hour, minute, second, nanosecond int) api.Value {
	return api.DateTime(time.Date(year, month, day, hour, minute, second, nanosecond, time.UTC))
}

// bytesOf returns n deterministic pseudo-random bytes (seeded by n), like ciphertext.
func bytesOf(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func everyByte() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

var (
	stringSamples = []sample{
		{"the empty string", api.String("")},
		{"ASCII text", api.String("hello, table")},
		{"non-ASCII text of the Basic Multilingual Plane", api.String("Grüße, 世界, Привет")},
		{"surrogate pairs", api.String("😀𝄞🀄")},
		{"a ZWJ emoji sequence", api.String("👩\u200d💻")},
		{"a combining accent", api.String("e\u0301")},
		{"right-to-left text", api.String("שלום עולם")},
		{"quotes and backslashes", api.String(`'single' "double" \back\`)},
		{"line breaks and tabs", api.String("a\nb\tc\r\nd")},
		{"surrounding spaces", api.String("  padded  ")},
		{"U+FFFD", api.String("\ufffd")},
		{"text that looks like an Int32", api.String("123")},
		{"text that looks like an Int64", api.String("9007199254740993")},
		{"text that looks like a Double", api.String("5.0")},
		{"text that looks like a Boolean", api.String("true")},
		{"text that looks like a DateTime", api.String("2020-01-01T00:00:00Z")},
		{"text that looks like a GUID", api.String("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{"text that looks like base64", api.String("AAEC")},
		{"text that looks like JSON", api.String(`{"a":[1,null]}`)},
		{"the word null", api.String("null")},
	}
	binarySamples = []sample{
		{"an empty value", api.Binary([]byte{})},
		{"one zero byte", api.Binary([]byte{0})},
		{"every byte value", api.Binary(everyByte())},
		{"4 KiB of ciphertext-like bytes", api.Binary(bytesOf(4 << 10))},
		{"exactly 64 KiB", api.Binary(bytesOf(spec.MaxBinaryBytes))},
	}
	booleanSamples = []sample{
		{"true", api.Bool(true)},
		{"false", api.Bool(false)},
	}
	dateTimeSamples = []sample{
		{"the minimum 1601-01-01T00:00:00Z", api.DateTime(spec.MinDateTime)},
		{"the maximum 9999-12-31T23:59:59.9999999Z", api.DateTime(spec.MaxDateTime)},
		{"seven fractional digits", dateTime(2024, time.February, 29, 12, 34, 56, 123456700)},
		{"one fractional digit", dateTime(2024, time.February, 29, 12, 34, 56, 100000000)},
		{"a trailing zero in the fraction", dateTime(2021, time.September, 21, 1, 4, 48, 453251000)},
		{"whole seconds", dateTime(1973, time.October, 4, 0, 0, 0, 0)},
		{"the Unix epoch", dateTime(1970, time.January, 1, 0, 0, 0, 0)},
		{"a date before the Unix epoch", dateTime(1900, time.January, 1, 23, 59, 59, 999999900)},
		{"the first tick after the minimum", api.DateTime(spec.MinDateTime.Add(100 * time.Nanosecond))},
	}
	doubleSamples = []sample{
		{"a fraction", api.Double(0.5)},
		{"the whole number 5.0", api.Double(5)},
		{"zero", api.Double(0)},
		{"a negative fraction", api.Double(-1.25)},
		{"0.1, which binary cannot hold exactly", api.Double(0.1)},
		{"one third", api.Double(1.0 / 3)},
		{"pi", api.Double(math.Pi)},
		{"a large whole number", api.Double(123456789012345678)},
		{"2^53", api.Double(1 << 53)},
		{"1e300", api.Double(1e300)},
		{"-1e-300", api.Double(-1e-300)},
		{"the largest finite value", api.Double(math.MaxFloat64)},
		{"the most negative finite value", api.Double(-math.MaxFloat64)},
		{"the smallest normal value", api.Double(0x1p-1022)},
		{"the largest subnormal value", api.Double(math.Float64frombits(0x000fffffffffffff))},
		{"the smallest subnormal value", api.Double(math.SmallestNonzeroFloat64)},
		{"NaN", api.Double(math.NaN())},
		{"+Infinity", api.Double(math.Inf(1))},
		{"-Infinity", api.Double(math.Inf(-1))},
	}
	guidSamples = []sample{
		{"a random GUID", api.Guid("5d6e4f0a-3c2b-4a19-8e7d-6c5b4a392817")},
		{"the nil GUID", api.Guid("00000000-0000-0000-0000-000000000000")},
		{"the all-ones GUID", api.Guid("ffffffff-ffff-ffff-ffff-ffffffffffff")},
	}
	int32Samples = []sample{
		{"the minimum -2147483648", api.Int32(math.MinInt32)},
		{"the maximum 2147483647", api.Int32(math.MaxInt32)},
		{"zero", api.Int32(0)},
		{"-1", api.Int32(-1)},
		{"1", api.Int32(1)},
	}
	int64Samples = []sample{
		{"the minimum -9223372036854775808", api.Int64(math.MinInt64)},
		{"the maximum 9223372036854775807", api.Int64(math.MaxInt64)},
		{"2^53+1, which a Double cannot hold", api.Int64(1<<53 + 1)},
		{"-(2^53+1)", api.Int64(-(1<<53 + 1))},
		{"2^31, one over the Int32 range", api.Int64(math.MaxInt32 + 1)},
		{"-2^31-1, one under the Int32 range", api.Int64(math.MinInt32 - 1)},
		{"zero, which an Int32 could hold", api.Int64(0)},
		{"1, which an Int32 could hold", api.Int64(1)},
	}
)

var _ = framework.Describe("EDM types", func(f *framework.F) {
	body := func(ctx context.Context, p path, v api.Value) { roundTrip(ctx, f, p, v) }

	f.DescribeTable("types.string.round-trip", "Edm.String reads back unchanged", body, entries(stringSamples)...)
	f.DescribeTable("types.binary.round-trip", "Edm.Binary reads back unchanged", body, entries(binarySamples)...)
	f.DescribeTable("types.boolean.round-trip", "Edm.Boolean reads back unchanged", body, entries(booleanSamples)...)
	f.DescribeTable("types.datetime.round-trip", "Edm.DateTime reads back unchanged", body, entries(dateTimeSamples)...)
	f.DescribeTable("types.double.round-trip", "Edm.Double reads back unchanged", body, entries(doubleSamples)...)
	f.DescribeTable("types.guid.round-trip", "Edm.Guid reads back unchanged", body, entries(guidSamples)...)
	f.DescribeTable("types.int32.round-trip", "Edm.Int32 reads back unchanged", body, entries(int32Samples)...)
	f.DescribeTable("types.int64.round-trip", "Edm.Int64 reads back unchanged", body, entries(int64Samples)...)

	f.DescribeTable("types.double.negative-zero", "Edm.Double negative zero reads back as a Double zero",
		func(ctx context.Context, p path) {
			b, table := f.Backend(), f.NewTable(ctx)
			_, err := b.InsertEntity(ctx, table, api.NewEntity("p", "r", map[string]api.Value{"V": api.Double(math.Copysign(0, -1))}))
			Expect(err).To(SucceedOnBackend())
			var got api.Entity
			if p == byGet {
				got, err = b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
			} else {
				page, err := b.QueryEntities(ctx, table, api.Query{})
				Expect(err).To(SucceedOnBackend())
				Expect(page.Entities).To(HaveLen(1))
				got = page.Entities[0]
			}
			Expect(got).To(HaveProperty("V", api.Double(0)))
			if math.Signbit(got.Properties["V"].Float()) {
				f.Choice("sign of a stored negative zero", "kept (-0)")
			} else {
				f.Choice("sign of a stored negative zero", "dropped (0)")
			}
		},
		Entry(byGet.String(), byGet),
		Entry(byQuery.String(), byQuery),
	)

	f.DescribeTable("types.all-in-one", "one entity holds every type",
		func(ctx context.Context, p path) {
			b, table := f.Backend(), f.NewTable(ctx)
			e := api.NewEntity("p", "r", map[string]api.Value{
				"S": api.String("text"), "B": api.Binary([]byte{1, 2, 3}), "Flag": api.Bool(true),
				"When": dateTime(2014, time.August, 22, 0, 50, 32, 123456700), "D": api.Double(2.5),
				"G": api.Guid("5d6e4f0a-3c2b-4a19-8e7d-6c5b4a392817"), "I": api.Int32(-7), "L": api.Int64(1 << 40),
			})
			_, err := b.InsertEntity(ctx, table, e)
			Expect(err).To(SucceedOnBackend())
			if p == byGet {
				got, err := b.GetEntity(ctx, table, "p", "r", nil)
				Expect(err).To(SucceedOnBackend())
				Expect(got).To(MatchEntity(e))
				return
			}
			page, err := b.QueryEntities(ctx, table, api.Query{})
			Expect(err).To(SucceedOnBackend())
			Expect(page.Entities).To(ConsistOf(MatchEntity(e)))
		},
		Entry(byGet.String(), byGet),
		Entry(byQuery.String(), byQuery),
	)
})
