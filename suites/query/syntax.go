package query

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	. "github.com/tableconform/conform/suites/matchers"
	"github.com/tableconform/conform/suites/scenario"
)

var _ = framework.Describe("Query Entities $filter syntax", func(f *framework.F) {
	sample := []api.Entity{
		api.NewEntity("p", "r1", map[string]api.Value{"Rank": api.Int32(3), "Name": api.String("test")}),
		api.NewEntity("p", "r2", map[string]api.Value{"Rank": api.Int32(4), "Name": api.String("other")}),
	}
	refuse := func(ctx context.Context, filter string) error {
		GinkgoHelper()
		table := tableWith(ctx, f, sample...)
		// A refusal says something only from a backend that answers well-formed filters: one
		// that refused every filter would otherwise pass the rules about malformed ones.
		f.Requires("query.compare.int32", "answer the well-formed filter Rank eq 3", func() {
			Expect(filterAll(ctx, f, table, "Rank eq 3", len(sample))).To(ConsistOfKeys(scenario.Key("p", "r1")), "filter \"Rank eq 3\"")
		})
		_, err := f.Backend().QueryEntities(ctx, table, api.Query{Filter: filter})
		return err
	}
	invalidInput := func(ctx context.Context, filter string) {
		Expect(refuse(ctx, filter)).To(HaveFailedWith(400, spec.ErrInvalidInput.Code), "filter %q", filter)
	}

	f.DescribeTable("query.filter.syntax", "with a malformed filter fails with 400 InvalidInput",
		invalidInput,
		Entry("for words without an operator", "aaa bbb ccc"),
		Entry("for a missing right operand", "Rank eq"),
		Entry("for a missing left operand", "eq 3"),
		Entry("for a dangling and", "Rank eq 3 and"),
		Entry("for a leading or", "or Rank eq 3"),
		Entry("for an unclosed parenthesis", "(Rank eq 3"),
		Entry("for an unopened parenthesis", "Rank eq 3)"),
		Entry("for empty parentheses", "()"),
		Entry("for an unknown word operator", "Rank equals 3"),
		Entry("for a symbolic operator", "Rank == 3"),
		Entry("for an unterminated string", "Name eq 'test"),
		Entry("for a literal glued to a string", "Rank eq 1'invalid'"),
		Entry("for two literals in a row", "Rank eq 3 3"),
		Entry("for two comparisons without and/or", "Rank eq 3 Name eq 'test'"),
	)

	f.It("query.filter.syntax.message", "with a malformed filter may name the error's position", func(ctx context.Context) {
		err := refuse(ctx, "aaa bbb ccc")
		f.Requires("query.filter.syntax", "refuse the malformed filter aaa bbb ccc", func() {
			Expect(err).To(HaveFailedWith(400))
		})
		e, _ := driver.AsError(err)
		if strings.HasPrefix(e.Message, "Syntax error at position") {
			f.Choice("syntax error message", "names the position")
		} else {
			f.Choice("syntax error message", fmt.Sprintf("other: %q", firstLineOf(e.Message)))
		}
	})

	f.DescribeTable("query.filter.bad-literal", "with an invalid typed literal fails with 400",
		func(ctx context.Context, filter string) {
			err := refuse(ctx, filter)
			Expect(err).To(HaveFailedWith(400), "filter %q", filter)
			e, _ := driver.AsError(err)
			f.Choice("error code of an invalid literal", e.Code)
		},
		Entry("for a datetime with month 13", "Rank eq 3 and When eq datetime'2020-13-01T00:00:00Z'"),
		Entry("for a datetime that is not a date", "When eq datetime'yesterday'"),
		Entry("for a guid that is not a GUID", "Id eq guid'not-a-guid'"),
		Entry("for a binary with a non-hexadecimal digit", "Blob eq X'0G'"),
		Entry("for a binary with an odd number of digits", "Blob eq X'ABC'"),
	)

	f.DescribeTable("query.filter.case.operators", "with an operator not in lower case fails with 400 InvalidInput",
		invalidInput,
		Entry("for EQ", "Rank EQ 3"),
		Entry("for Eq", "Rank Eq 3"),
		Entry("for GT", "Rank GT 3"),
		Entry("for AND", "Rank eq 3 AND Name eq 'test'"),
		Entry("for Or", "Rank eq 3 Or Name eq 'test'"),
		Entry("for NOT", "NOT (Rank eq 3)"),
	)

	f.DescribeTable("query.filter.case.properties", "with property names matches them case-sensitively",
		func(ctx context.Context, filter string, want []api.Key) {
			table := tableWith(ctx, f, sample...)
			f.Requires("query.compare.int32", "answer the filter Rank eq 3 with the stored spelling", func() {
				Expect(filterAll(ctx, f, table, "Rank eq 3", len(sample))).To(ConsistOfKeys(scenario.Key("p", "r1")), "filter \"Rank eq 3\"")
			})
			// A differently cased name is a property the entities lack: that such a comparison
			// leaves them out is query.compare.missing's subject, shown here on a name no entity
			// has in any spelling, with the entry's operator and literal.
			_, comparison, _ := strings.Cut(filter, " ")
			absent := "ConformAbsent " + comparison
			f.Requires("query.compare.missing", fmt.Sprintf("the filter %q selects nothing", absent), func() {
				Expect(filterAll(ctx, f, table, absent, len(sample))).To(BeEmpty(), "filter %q", absent)
			})
			Expect(filterAll(ctx, f, table, filter, len(sample))).To(ConsistOfKeys(want...), "filter %q", filter)
		},
		Entry("selecting with the stored spelling", "Rank eq 3", []api.Key{scenario.Key("p", "r1")}),
		Entry("selecting nothing with a lower-case name", "rank eq 3", nil),
		Entry("selecting nothing with an upper-case name", "RANK eq 3", nil),
		// ne with a String literal, as in the reported live answers (E-filter-missing-property).
		Entry("selecting nothing with ne on another spelling", "name ne 'test'", nil),
		Entry("selecting nothing with a lower-case partitionkey", "partitionkey eq 'p'", nil),
		Entry("selecting nothing with a lower-case rowKey", "rowKey eq 'r1'", nil),
	)
})

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
