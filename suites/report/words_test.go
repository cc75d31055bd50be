package report

import (
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

// A cell that did not pass says what the backend did in the spec that decided it, never
// the words of a spec of the rule that passed, and in one short line (issue 24, found 6).
func TestCellSaysWhatTheBackendDidInTheFailingSpec(t *testing.T) {
	body := strings.Repeat(`{"odata.metadata":"x","value":[]}`, 80)
	for _, c := range []struct {
		name string
		cell Cell
		want string
	}{
		{"the failing spec's answer, not the passing spec's choice", Cell{Outcome: verdict.Fail, Specs: []SpecResult{
			{Text: "refuses a write", Outcome: verdict.Pass, Choices: []string{"answer: 403 AuthorizationPermissionMismatch"}},
			{Text: "allows a read", Outcome: verdict.Fail, Failure: "the rule expects the backend to succeed, but it failed with 403 AuthorizationFailure (\"no\") [request id 1]"},
		}}, "FAIL: refused with 403 AuthorizationFailure"},
		{"the first detail of an announcing message", Cell{Outcome: verdict.Fail, Specs: []SpecResult{
			{Outcome: verdict.Fail, Failure: "table cfabcdefghp1t7 does not hold what the rule expects:\n  entity (\"p\",\"r\"): property V: want Edm.Int32(1), got Edm.Int32(2)\n  more"},
		}}, `FAIL: entity ("p","r"): property V: want Edm.Int32(1), got Edm.Int32(2)`},
		{"an expected failure by its failure", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{
			{Outcome: verdict.ExpectedFail, Failure: "the rule expects the backend to fail with 409 EntityAlreadyExists, but it succeeded"},
		}}, "known divergence: accepted"},
		{"an expected failure by its baseline evidence", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{
			{Outcome: verdict.ExpectedFail, Evidence: "the rule expects the backend to fail with 400, but it failed with 500 InternalError"},
		}}, "known divergence: server error 500 InternalError"},
		{"a blocked spec names the rule", Cell{Outcome: verdict.Blocked, Specs: []SpecResult{{Outcome: verdict.Blocked, BlockedBy: "tables.create.basic"}}},
			"blocked: blocked by tables.create.basic"},
		{"gomega's own message", Cell{Outcome: verdict.Fail, Specs: []SpecResult{{Outcome: verdict.Fail, Failure: "Expected\n    <int>: 2\nto equal\n    <int>: 1"}}},
			"FAIL: 2, expected 1"},
		{"gomega's message after what the spec checked", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{{Outcome: verdict.ExpectedFail,
			Failure: "the refusal's Preference-Applied\nExpected\n    <string>: \nto equal\n    <string>: return-no-content"}}},
			"known divergence: the refusal's Preference-Applied: (empty), expected return-no-content"},
		{"gomega's message after an announcing line", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{{Outcome: verdict.ExpectedFail,
			Failure: "a server error for a change set without operations: \nExpected\n    <int>: 500\nnot to be >=\n    <int>: 500"}}},
			"known divergence: a server error for a change set without operations: 500, expected < 500"},
		{"gomega's message after a quoted body", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{{Outcome: verdict.ExpectedFail,
			Failure: "status: <?xml version=\"1.0\"?>\n<Error>\n  <Code>AuthorizationFailure</Code>\n</Error>\nExpected\n    <int>: 403\nto equal\n    <int>: 401"}}},
			"known divergence: status 403, expected 401"},
		{"the step before an announcing message", Cell{Outcome: verdict.Fail, Specs: []SpecResult{{Outcome: verdict.Fail,
			Failure: "Get Entity after Update and Merge\nthe entity that came back differs from what was stored:\n  property W: want Edm.Boolean(true), got Edm.Int32(1)"}}},
			"FAIL: Get Entity after Update and Merge: property W: want Edm.Boolean(true), got Edm.Int32(1)"},
		{"a quoted code without the request id", Cell{Outcome: verdict.ExpectedFail, Specs: []SpecResult{{Outcome: verdict.ExpectedFail,
			Failure: "the rule expects the answer to POST /devstoreaccount1/t to be 403 with code AuthenticationFailed, but it was 403 \"AuthorizationFailure\" [request id e1e9ac6f]"}}},
			"known divergence: refused with 403 AuthorizationFailure"},
		{"a passing cell's choices without their bodies", Cell{Outcome: verdict.Pass, Specs: []SpecResult{{Outcome: verdict.Pass, Choices: []string{
			`answer: DELETE cfabcdefghp1t301(PartitionKey='p',RowKey='r') answered 400 (x-ms-error-code "InvalidInput") {"odata.error":{"code":"InvalidInput"}}`}}}},
			`pass: DELETE <table>(PartitionKey='p',RowKey='r') answered 400 (x-ms-error-code "InvalidInput")`},
		{"a raw body is cut", Cell{Outcome: verdict.Fail, Specs: []SpecResult{{Outcome: verdict.Fail, Failure: "the answer's body is " + body}}}, ""},
	} {
		got := CellSummary(RuleRow{}, c.cell)
		if c.want != "" && got != c.want {
			t.Errorf("%s: cell says %q, want %q", c.name, got, c.want)
		}
		if len(got) > cellWordsLimit+30 {
			t.Errorf("%s: cell says %d bytes: %q", c.name, len(got), got)
		}
	}
}
