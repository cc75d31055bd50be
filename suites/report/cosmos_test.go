package report

import (
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver/record"
)

// The cosmos profile's judgement, as a table: outcome as written x Cosmos expectation x
// what the backend answered.
func TestJudgeCosmos(t *testing.T) {
	refusal := spec.Cosmos{Kind: spec.CosmosDiffers, Statuses: []int{400}, Code: "PropertiesNeedValue", Answer: "400"}
	accepts := spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, Answer: "accepted"}
	unsupported := spec.Cosmos{Kind: spec.CosmosUnsupported, Statuses: []int{501, 405}, Answer: "501"}
	unpromised := spec.Cosmos{Kind: spec.CosmosUnpromised, Answer: "no order"}
	sig := func(status int, code string) *fixtures.Signature {
		return &fixtures.Signature{Status: status, Code: code}
	}
	assertion := &fixtures.Signature{Assertion: "expected 400, got 201"}
	for _, tc := range []struct {
		name      string
		c         spec.Cosmos
		asWritten Outcome
		sig       *fixtures.Signature
		want      Outcome
		answers   []record.Answer
	}{
		{"same: pass stays", spec.Cosmos{Kind: spec.CosmosSame}, Pass, nil, Pass, nil},
		{"same: failure stays", spec.Cosmos{}, Fail, sig(500, "InternalError"), Fail, nil},
		{"differs: Cosmos's refusal passes", refusal, Fail, sig(400, "PropertiesNeedValue"), Pass, nil},
		{"differs: Storage's answer fails", refusal, Pass, nil, Fail, nil},
		{"differs: a wrong code fails", refusal, Fail, sig(400, "InvalidInput"), Fail, nil},
		{"differs: a server error fails", refusal, Fail, sig(500, "InternalError"), Fail, nil},
		{"differs: an assertion is not the refusal", refusal, Fail, assertion, Fail, nil},
		{"differs: blocked by Cosmos's refusal passes", refusal, Blocked, sig(400, "PropertiesNeedValue"), Pass, nil},
		{"differs, accepted: Cosmos's acceptance passes", accepts, Fail, assertion, Pass, nil},
		{"differs, accepted: Storage's refusal fails", accepts, Pass, nil, Fail, nil},
		{"differs, accepted: an error answer fails", accepts, Fail, sig(500, "InternalError"), Fail, nil},
		{"differs: information as written is Storage's answer", accepts, Info, nil, Fail, nil},
		{"unsupported: Cosmos's 501 is not applicable", unsupported, Fail, sig(501, "NotImplemented"), NotApplicable, nil},
		{"unsupported: 405 too", unsupported, Blocked, sig(405, "MethodNotAllowed"), NotApplicable, nil},
		{"unsupported: serving the feature fails", unsupported, Pass, nil, Fail, nil},
		{"unsupported: a 500 fails", unsupported, Fail, sig(500, "InternalError"), Fail, nil},
		{"unsupported: an assertion fails", unsupported, Fail, assertion, Fail, nil},
		{"unpromised: any answer is not applicable", unpromised, Fail, assertion, NotApplicable, nil},
		{"unpromised: a pass is not applicable, never passed", unpromised, Pass, nil, NotApplicable, nil},
		{"unpromised: a 4xx is not applicable", unpromised, Fail, sig(400, "InvalidInput"), NotApplicable, nil},
		{"unpromised: a server error fails", unpromised, Fail, sig(503, "ServerBusy"), Fail, nil},
		{"no answer stays an error", refusal, Error, nil, Error, nil},
		{"skipped stays skipped", unsupported, Skipped, nil, Skipped, nil},
		{"interrupted stays", unpromised, Interrupted, nil, Interrupted, nil},
		{"an expected failure stays", refusal, ExpectedFail, sig(400, "X"), ExpectedFail, nil},
		{"unsupported: a raw exchange's 501 is not applicable", unsupported, Fail, assertion, NotApplicable, []record.Answer{{Status: 501, Code: "NotImplemented"}}},
		{"unsupported: a raw 501 after a server error fails", unsupported, Fail, assertion, Fail, []record.Answer{{Status: 500, Code: "InternalError"}, {Status: 501}}},
		{"differs: a raw refusal among earlier expected errors passes", refusal, Fail, assertion, Pass, []record.Answer{{Status: 409, Code: "EntityAlreadyExists"}, {Status: 400, Code: "PropertiesNeedValue"}}},
		{"differs, accepted: a raw server error fails", accepts, Fail, assertion, Fail, []record.Answer{{Status: 503, Code: "ServerBusy"}}},
		{"unsupported: 501 alone is the refusal, not a server error", unsupported, Fail, sig(501, "NotImplemented"), NotApplicable, []record.Answer{{Status: 501, Code: "NotImplemented"}}},
		{"unpromised: a raw server error fails", unpromised, Fail, assertion, Fail, []record.Answer{{Status: 500}}},
	} {
		got, note := judgeCosmos(tc.c, tc.asWritten, tc.sig, tc.answers)
		if got != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got, note, tc.want)
		}
		if got != tc.asWritten && note == "" {
			t.Errorf("%s: changed the outcome without a note", tc.name)
		}
	}
}

// A MUST rule not applicable to the profile is neither passed nor failing, and leaves the
// verdict "conforms" when everything that applies passed.
func TestNotApplicableIsNeverPassed(t *testing.T) {
	rules := []spec.Rule{
		{ID: "a.applies", Level: spec.Must, Area: spec.AreaTables},
		{ID: "a.unsupported", Level: spec.Must, Area: spec.AreaTables},
	}
	cells := map[string][]Cell{
		"a.applies":     {{Outcome: Pass, Specs: []SpecResult{{Outcome: Pass}}}},
		"a.unsupported": {{Outcome: NotApplicable, Specs: []SpecResult{{Outcome: NotApplicable}}}},
	}
	b := Backend{Profile: ProfileCosmos}
	judge(&b, rules, cells, 0, false)
	if b.VerdictKind != Conforms || b.Coverage.Passed != 1 || b.Coverage.MustRules != 1 || b.Coverage.NotApplicable != 1 {
		t.Errorf("verdict %q %+v", b.Verdict, b.Coverage)
	}
	var c Counts
	count(&c, SpecResult{Outcome: NotApplicable})
	if c.Passed != 0 || c.Run != 0 || c.NotApplicable != 1 {
		t.Errorf("counts %+v", c)
	}
}
