package tables

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
)

// nameFunc builds the table name of one entry when the spec runs (names depend on the run's
// prefix and on the spec's unique table number).
type nameFunc func(f *framework.F) string

var _ = framework.Describe("Table names", func(f *framework.F) {
	f.DescribeTable("tables.name.valid", "accepts names of letters and digits starting with a letter",
		func(ctx context.Context, name nameFunc) {
			n := name(f)
			err := createOwned(ctx, f, n)
			if e, ok := driver.AsError(err); ok && e.Code == spec.ErrTableAlreadyExists.Code {
				// A short random name may be held by another run: the name was still accepted.
				f.Choice("create of a valid name", "already held by another run (409 TableAlreadyExists)")
				return
			}
			Expect(err).To(SucceedOnBackend(), "Create Table %q (%d characters)", n, len(n))
		},
		Entry("at exactly 3 characters", nameFunc(func(*framework.F) string { return randomName(spec.MinTableNameLength) })),
		Entry("at exactly 63 characters", nameFunc(func(f *framework.F) string { return padName(f.TableName(), spec.MaxTableNameLength) })),
		Entry("with upper-case letters", nameFunc(func(f *framework.F) string { return f.TableName() + "UpperCASE" })),
		Entry("with digits after the first letter", nameFunc(func(f *framework.F) string { return f.TableName() + "0123456789" })),
	)

	// A refusal says something only from a backend that creates a table under a valid name:
	// one that refused every create would otherwise pass the rules about invalid names
	// (NewTable blocks the spec by tables.create.listed).
	refused := func(ctx context.Context, n string, codes ...spec.ErrorCode) {
		f.NewTable(ctx)
		err := createOwned(ctx, f, n)
		if len(codes) > 0 {
			Expect(err).To(HaveFailedAs(codes...), "Create Table %q (%d characters)", n, len(n))
			return
		}
		Expect(err).To(HaveFailedWithStatus(400), "Create Table %q (%d characters)", n, len(n))
		f.Choice("refusal of an invalid table name", OutcomeOf(err))
	}

	f.DescribeTable("tables.name.length", "refuses names shorter than 3 or longer than 63 characters with 400",
		func(ctx context.Context, name nameFunc) { refused(ctx, name(f)) },
		Entry("at 2 characters, one under", nameFunc(func(*framework.F) string { return randomName(spec.MinTableNameLength - 1) })),
		Entry("at 1 character", nameFunc(func(*framework.F) string { return randomName(1) })),
		Entry("at 64 characters, one over", nameFunc(func(f *framework.F) string { return padName(f.TableName(), spec.MaxTableNameLength+1) })),
		Entry("at 255 characters", nameFunc(func(f *framework.F) string { return padName(f.TableName(), 255) })),
	)

	f.DescribeTable("tables.name.charset", "refuses names with characters other than ASCII letters and digits with 400",
		func(ctx context.Context, name nameFunc, codes []spec.ErrorCode) { refused(ctx, name(f), codes...) },
		Entry("with an underscore", nameFunc(func(f *framework.F) string { return f.TableName() + "_u" }), []spec.ErrorCode{spec.ErrInvalidResourceName}),
		Entry("with a hyphen", nameFunc(func(f *framework.F) string { return f.TableName() + "-h" }), []spec.ErrorCode(nil)),
		Entry("with a dot", nameFunc(func(f *framework.F) string { return f.TableName() + ".d" }), []spec.ErrorCode(nil)),
		Entry("with a space", nameFunc(func(f *framework.F) string { return f.TableName() + " s" }), []spec.ErrorCode(nil)),
		Entry("with a non-ASCII letter", nameFunc(func(f *framework.F) string { return f.TableName() + "é" }), []spec.ErrorCode(nil)),
	)

	f.DescribeTable("tables.name.leading-digit", "refuses names that start with a digit with 400",
		func(ctx context.Context, name nameFunc) { refused(ctx, name(f)) },
		Entry("starting with 1", nameFunc(func(f *framework.F) string { return "1" + f.TableName() })),
		Entry("starting with 0 at 3 characters", nameFunc(func(*framework.F) string { return "0" + randomName(spec.MinTableNameLength-1) })),
	)

	f.DescribeTable("tables.name.reserved", "refuses the reserved name with 400 or 404",
		func(ctx context.Context, n string) {
			f.NewTable(ctx)
			err := createOwned(ctx, f, n)
			Expect(err).To(HaveFailedWithStatus(400, 404), "Create Table %q", n)
			f.Choice("refusal of the reserved table name", OutcomeOf(err))
		},
		Entry("in lower case", "tables"),
		Entry("in its URL case", "Tables"),
	)
})
