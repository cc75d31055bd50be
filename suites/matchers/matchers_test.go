package matchers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

func TestServiceFailureMatchers(t *testing.T) {
	conflict := &spec.Error{Status: 409, Code: "EntityAlreadyExists", RequestID: "r1"}
	transport := &driver.TransportError{Op: "insert", Err: errors.New("connection reset")}
	for _, tc := range []struct {
		name     string
		m        types.GomegaMatcher
		actual   any
		match    bool
		message  string
		negation string
	}{
		{"HaveFailedWith code", HaveFailedWith(409, "EntityAlreadyExists", "Conflict"), fmt.Errorf("wrapped: %w", conflict), true,
			"the rule expects the backend to fail with 409 EntityAlreadyExists or Conflict, but it failed with 409 EntityAlreadyExists [request id r1]",
			"the rule expects the backend not to fail with 409 EntityAlreadyExists or Conflict, but it failed with 409 EntityAlreadyExists [request id r1]"},
		{"HaveFailedWith other code", HaveFailedWith(409, "TableAlreadyExists"), conflict, false, "", ""},
		{"HaveFailedWith any code", HaveFailedWith(409), conflict, true,
			"the rule expects the backend to fail with 409, but it failed with 409 EntityAlreadyExists [request id r1]", ""},
		{"HaveFailedWith nil", HaveFailedWith(404), nil, false, "the rule expects the backend to fail with 404, but it succeeded", ""},
		{"HaveFailedAs", HaveFailedAs(spec.ErrEntityAlreadyExists, spec.ErrTableNotFound), conflict, true,
			"the rule expects the backend to fail with 409 EntityAlreadyExists or 404 TableNotFound, but it failed with 409 EntityAlreadyExists [request id r1]", ""},
		{"HaveFailedAs transport", HaveFailedAs(spec.ErrEntityAlreadyExists), transport, false,
			"the rule expects the backend to fail with 409 EntityAlreadyExists, but it had a transport error: transport error: insert: connection reset", ""},
		{"HaveFailedWithStatus", HaveFailedWithStatus(400, 409), conflict, true,
			"the rule expects the backend to fail with status 400 or 409, but it failed with 409 EntityAlreadyExists [request id r1]", ""},
		{"BeRefused 4xx", BeRefused(), conflict, true, "",
			"the rule expects the backend to accept the request, but it failed with 409 EntityAlreadyExists [request id r1]"},
		{"BeRefused 501", BeRefused(), &spec.Error{Status: 501, Code: "NotImplemented"}, true, "", ""},
		{"BeRefused 503", BeRefused(), &spec.Error{Status: 503, Code: "ServerBusy"}, false,
			"the rule expects the backend to refuse the request (4xx or 501), but it failed with 503 ServerBusy", ""},
		// Where a rule allows a refusal, only a documented one counts: Azurite's 500 to an
		// empty transaction is a fail, not a choice (issue 11).
		{"BeDocumentedRefusal 4xx", BeDocumentedRefusal(), conflict, true, "", ""},
		{"BeDocumentedRefusal 500", BeDocumentedRefusal(), &spec.Error{Status: 500, Code: "InternalError"}, false,
			"the rule expects the backend to refuse the request with a 4xx status and an error code, but it failed with 500 InternalError", ""},
		{"BeDocumentedRefusal no code", BeDocumentedRefusal(), &spec.Error{Status: 400}, false, "", ""},
	} {
		got, err := tc.m.Match(tc.actual)
		if err != nil || got != tc.match {
			t.Errorf("%s: Match = %v, %v; want %v", tc.name, got, err, tc.match)
		}
		if tc.message != "" {
			if msg := tc.m.FailureMessage(tc.actual); msg != tc.message {
				t.Errorf("%s: FailureMessage = %q\nwant %q", tc.name, msg, tc.message)
			}
		}
		if tc.negation != "" {
			if msg := tc.m.NegatedFailureMessage(tc.actual); msg != tc.negation {
				t.Errorf("%s: NegatedFailureMessage = %q\nwant %q", tc.name, msg, tc.negation)
			}
		}
	}
	for _, m := range []types.GomegaMatcher{HaveFailedWith(409), HaveFailedAs(spec.ErrEntityAlreadyExists), HaveFailedWithStatus(409), BeRefused()} {
		if _, err := m.Match("not an error"); err == nil {
			t.Errorf("%T accepted a string as an error", m)
		}
	}
}

func TestKeyListAbbreviatesLongLists(t *testing.T) {
	if got, want := KeyList([]api.Entity{api.NewEntity("p", "a", nil), api.NewEntity("p", "b", nil)}), `[("p","a") ("p","b")]`; got != want {
		t.Errorf("KeyList = %s, want %s", got, want)
	}
	var es []api.Entity
	for i := range 30 {
		es = append(es, api.NewEntity("p", fmt.Sprint(i), nil))
	}
	got := KeyList(es)
	if want := `("p","19") ... 10 more]`; len(got) < len(want) || got[len(got)-len(want):] != want {
		t.Errorf("KeyList of 30 = %s, want it to end with %s", got, want)
	}
}
