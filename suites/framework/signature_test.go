package framework

import (
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/driver/record"
)

// Issue 31, item 8: a failure after a raw exchange that answered with an error status
// carries that status in its signature, as one after a backend call does; an error answer
// earlier in the spec does not.
func TestFailureSignatureHoldsTheLastAnswersStatus(t *testing.T) {
	const failure = "Query Entities with x-ms-version 2019-02-02\nExpected\n    <int>: 400\nto equal\n    <int>: 200"
	cases := []struct {
		name  string
		calls []record.Call
		want  fixtures.Signature
	}{
		{"a raw 400", []record.Call{{Op: "GET", RawStatus: 400, RawCode: "InvalidInput"}}, fixtures.Signature{Status: 400, Code: "InvalidInput"}},
		{"a backend call's 404", []record.Call{{Op: "insert", Status: 404, Code: "TableNotFound"}}, fixtures.Signature{Status: 404, Code: "TableNotFound"}},
		{"a raw 404, then a raw success", []record.Call{{Op: "GET", RawStatus: 404}, {Op: "GET"}}, fixtures.Signature{}},
		{"no call", nil, fixtures.Signature{}},
	}
	for _, c := range cases {
		got := FailureSignature(failure, c.calls)
		if got.Status != c.want.Status || got.Code != c.want.Code || got.Assertion == "" {
			t.Errorf("%s: %+v, want status %d code %q and the assertion", c.name, got, c.want.Status, c.want.Code)
		}
	}
}
