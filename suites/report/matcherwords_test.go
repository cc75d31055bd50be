package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

// gomegaTypeWords finds a type as Gomega writes it: "<int>", "<*driver.TransportError | 0x1>".
var gomegaTypeWords = regexp.MustCompile(`<[\w.*\[\]]+(>| \|)`)

// Gomega's messages, as they reached report cells, ERROR lines and report --diff before
// (issue 34, item 6), read in words.
func TestFailureInWordsSaysGomegasMessagesInWords(t *testing.T) {
	for _, c := range []struct{ name, msg, want string }{
		{"a status check after the refusal's body",
			"status: <?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Error>\n  <Code>AuthorizationFailure</Code>\n</Error>\nExpected\n    <int>: 403\nto equal\n    <int>: 401",
			"status 403, expected 401"},
		{"a bare BeTrue",
			"Expected\n    <bool>: false\nto be true",
			"false, expected true"},
		{"a BeTrue with its description",
			"the continuation token names a later row\nExpected\n    <bool>: false\nto be true",
			"the continuation token names a later row: false, expected true"},
		{"an unexpected transport error",
			"Unexpected error:\n    <*driver.TransportError | 0x3813672a4f60>: \n    transport error: POST /$batch: EOF\n    {Op: \"POST /$batch\", Err: <*errors.errorString | 0x1>{s: \"EOF\"}}\noccurred",
			"transport error: POST /$batch: EOF"},
		{"an unexpected error of another kind after its step",
			"Insert Entity\nUnexpected error:\n    <*errors.errorString | 0xc0001>: \n    the answer has no ETag\n    {s: \"the answer has no ETag\"}\noccurred",
			"Insert Entity: unexpected error: the answer has no ETag"},
		{"a negated comparison",
			"a server error: \nExpected\n    <int>: 503\nnot to be >=\n    <int>: 500",
			"a server error: 503, expected < 500"},
		{"a substring",
			"Expected\n    <string>: {\"odata.error\":{}}\nto contain substring\n    <string>: InvalidInput",
			"{\"odata.error\":{}}, expected to contain substring InvalidInput"},
		{"no error where one was expected",
			"the second insert\nExpected an error to have occurred.  Got:\n    <nil>: nil",
			"the second insert: no error, where one was expected"},
	} {
		_, got := FailureInWords(c.msg)
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if cell := CellSummary(RuleRow{}, Cell{Outcome: verdict.Fail, Specs: []SpecResult{{Outcome: verdict.Fail, Failure: c.msg}}}); gomegaTypeWords.MatchString(cell) || strings.Contains(cell, "Expected") {
			t.Errorf("%s: the cell still says Gomega's types: %q", c.name, cell)
		}
	}
	// Lines outside Gomega's blocks stay as they are.
	if got, block := FailureInWords("table t does not hold what the rule expects:\n  entity (\"p\",\"r\"): missing"); block != "" || !strings.Contains(got, "  entity") {
		t.Errorf("a message without Gomega's blocks changed: %q (block %q)", got, block)
	}
}

// A spec without an answer says the transport error's message, never Gomega's type and
// address (the summary's "no answer:" lines and the cell).
func TestErrorWordsNameTheTransportError(t *testing.T) {
	msg := "Unexpected error:\n    <*driver.TransportError | 0x3813672a4f60>: \n    transport error: GET /Tables: dial tcp 127.0.0.1:1: connect: connection refused\n    {Op: \"GET /Tables\"}\noccurred"
	got := SpecWords(SpecResult{Outcome: verdict.Error, Failure: msg})
	if !strings.HasPrefix(got, "transport error: GET /Tables: dial tcp") || strings.Contains(got, "0x") {
		t.Errorf("SpecWords of an error = %q", got)
	}
}

// report --diff's Markdown says the cells in words, without HTML entities for Gomega's
// types ("&lt;int&gt;").
func TestDiffMarkdownHasNoGomegaEntities(t *testing.T) {
	failing := func(code string) Report {
		b := Backend{}
		b.Name = "b"
		return Report{Backends: []Backend{b}, Rules: []RuleRow{{ID: "r", Level: "MUST", Cells: []Cell{{Outcome: verdict.Fail, Specs: []SpecResult{{Outcome: verdict.Fail,
			Failure: "status: {\"odata.error\":{}}\nExpected\n    <int>: " + code + "\nto equal\n    <int>: 401"}}}}}}}
	}
	var out bytes.Buffer
	if err := WriteDiffMarkdown(&out, Diff(failing("403"), failing("500"), "old", "new")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "&lt;") || !strings.Contains(out.String(), "status 500, expected 401") {
		t.Errorf("report --diff:\n%s", out.String())
	}
}
