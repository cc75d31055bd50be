package query

import (
	"context"
	"regexp"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/matchers"
)

// ruleInt64Literals is the rule whose subject is an Int64 literal (123L) selecting the Int64
// values it denotes.
const ruleInt64Literals = "query.compare.int64"

// int64Literal matches an Int64 literal of a $filter.
var int64Literal = regexp.MustCompile(`(^|[\s(])-?[0-9]+[Ll]($|[\s)])`)

// requireInt64Literals is the precondition of a spec whose filter holds an Int64 literal
// while its subject is another (a negative sign, a wider property type): a probe entity's
// Int64 beyond the Int32 range is selected by its Int64 literal (ruleInt64Literals). The
// probe is removed again. A filter without an Int64 literal needs nothing.
func requireInt64Literals(ctx context.Context, f *framework.F, table, filter string) {
	GinkgoHelper()
	if !int64Literal.MatchString(filter) {
		return
	}
	b := f.Backend()
	probe := api.NewEntity("conform-probe", "int64-literal", map[string]api.Value{"ConformInt64Probe": api.Int64(5000000000)})
	f.Requires(ruleInt64Literals, "select a probe's Int64 by the literal 5000000000L", func() {
		_, err := b.InsertEntity(ctx, table, probe)
		Expect(err).To(matchers.SucceedOnBackend(), "insert the Int64 probe")
		got, err := matchers.QueryAll(ctx, b, table, api.Query{Filter: "ConformInt64Probe eq 5000000000L"}, 10)
		Expect(err).To(matchers.SucceedOnBackend(), "the filter ConformInt64Probe eq 5000000000L")
		Expect(got.Entities()).To(matchers.ConsistOfKeys(probe.Key()), "the filter ConformInt64Probe eq 5000000000L")
	})
	f.Requires("modify.delete.removes", "delete the Int64 probe", func() {
		Expect(b.DeleteEntity(ctx, table, probe.PartitionKey, probe.RowKey, api.IfMatchAny)).To(matchers.SucceedOnBackend(), "delete the Int64 probe")
	})
}
