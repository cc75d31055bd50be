package verdict

import (
	"strings"
	"testing"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/spec"
)

var (
	sig400   = fixtures.Signature{Status: 400, Code: "InvalidInput"}
	sig409   = fixtures.Signature{Status: 409, Code: "EntityAlreadyExists"}
	sig500   = fixtures.Signature{Status: 500, Code: "InternalError"}
	sig501   = fixtures.Signature{Status: 501, Code: "NotImplemented"}
	sigShape = fixtures.Signature{Assertion: "expected the entities in key order, but got r2 before r1"}
	sig404   = fixtures.Signature{Status: 404, Code: "ResourceNotFound"}

	// Profile expectations.
	cosmosOrder      = Expectation{Kind: OrderNotPromised, Check: spec.CheckOrder, Difference: "not sorted"}
	cosmosHeader     = Expectation{Kind: Differs, Check: spec.CheckVersionHeader, Difference: "no x-ms-version"}
	cosmosMayHeader  = Expectation{Kind: Differs, StorageAllowed: true, Check: spec.CheckRequestIDHeader, Difference: "no x-ms-request-id"}
	cosmosNotFound   = Expectation{Kind: Differs, Answer: fixtures.Signature{Status: 404}, Difference: "case-sensitive names"}
	cosmosRequires   = Expectation{Kind: Differs, Answer: sig400, Difference: "400 InvalidInput"}
	cosmosNoACL      = Expectation{Kind: NotSupported, Difference: "no table ACL"}
	cosmosUnpromised = Expectation{Kind: NotPromised, Difference: "not sorted"}

	// Baseline entries.
	listed400     = &fixtures.ExpectedFailure{Rule: "r", Spec: "s", Evidence: "refused with 400", Signature: sig400}
	listedRule400 = &fixtures.ExpectedFailure{Rule: "r", Evidence: "refused with 400", Signature: sig400}
	flaky400      = &fixtures.ExpectedFailure{Rule: "r", Evidence: "sometimes 400", Signature: sig400, Flaky: true, Reason: "a race"}
	flakyNoSig    = &fixtures.ExpectedFailure{Rule: "r", Evidence: "sometimes", Flaky: true, Reason: "a race"}
	listedShape   = &fixtures.ExpectedFailure{Rule: "r", Spec: "s", Evidence: "unsorted", Signature: sigShape}
	blockedInsert = &fixtures.ExpectedFailure{Rule: "r", Spec: "s", Evidence: "setup refused", Blocked: "modify.insert.stores", Signature: sig400}
)

func failed(s fixtures.Signature) Result { return Result{State: StateFailed, Signature: s} }

// failedCheck is a failure of the spec's check named check (F.Check).
func failedCheck(s fixtures.Signature, check string) Result {
	return Result{State: StateFailed, Signature: s, Check: check}
}

// TestDecide is the decision table: what happened x level x profile expectation x baseline
// entry -> outcome, against the backend, unexpected (exit 1). Each case of issue 20 is
// named.
func TestDecide(t *testing.T) {
	passed := Result{State: StatePassed}
	chose := Result{State: StatePassed, Choices: 1}
	blocked := Result{State: StateBlocked, BlockedBy: "modify.insert.stores", Signature: sig400}
	cases := []struct {
		name       string
		r          Result
		level      spec.Level
		exp        Expectation
		entry      *fixtures.ExpectedFailure
		outcome    Outcome
		against    bool
		unexpected bool
	}{
		// Not judged: whatever the level, profile or baseline.
		{"left out by the filter", Result{State: StateLeftOut}, spec.Must, Storage, nil, Skipped, false, false},
		{"skipped for a capability", Result{State: StateSkipped}, spec.Must, Storage, listed400, Skipped, false, false},
		{"the driver cannot send it", Result{State: StateNotExpressible}, spec.Must, Storage, nil, Skipped, false, false},
		{"interrupted", Result{State: StateInterrupted}, spec.Must, Storage, nil, Interrupted, false, false},
		{"issue 31: selected, not started (the run stopped first): not run", Result{State: StateNotStarted}, spec.Must, Storage, listed400, NotRun, false, false},
		{"no answer", Result{State: StateNoAnswer}, spec.Must, Storage, nil, Error, false, false},
		{"no answer, listed in the baseline: still an error", Result{State: StateNoAnswer}, spec.Must, Storage, listed400, Error, false, false},
		{"no answer, cosmos", Result{State: StateNoAnswer}, spec.Must, cosmosOrder, nil, Error, false, false},

		// Passes.
		{"pass, MUST", passed, spec.Must, Storage, nil, Pass, false, false},
		{"pass, SHOULD", passed, spec.Should, Storage, nil, Pass, false, false},
		{"MUST with a choice is a pass", chose, spec.Must, Storage, nil, Pass, false, false},
		{"MAY with a choice is information", chose, spec.May, Storage, nil, Info, false, false},
		{"SHOULD with a choice is information", chose, spec.Should, Storage, nil, Info, false, false},
		{"pass of a spec the baseline lists", passed, spec.Must, Storage, listed400, UnexpectedPass, false, true},
		{"pass of a rule-level entry (judged over the rule at the end)", passed, spec.Must, Storage, listedRule400, Pass, false, false},
		{"issue 31, item 10: a pass of a flaky entry is a pass, never a failing MUST rule", passed, spec.Must, Storage, flaky400, Pass, false, false},
		{"pass of a spec listed as blocked", passed, spec.Must, Storage, blockedInsert, UnexpectedPass, false, true},
		{"cosmos: Storage's answer where Cosmos may differ", passed, spec.Must, cosmosMayHeader, nil, Pass, false, false},
		{"issue 31: a pass where the order is not promised is a pass", passed, spec.Must, cosmosOrder, nil, Pass, false, false},
		{"cosmos: Storage's answer where Cosmos requires another", passed, spec.Must, cosmosRequires, nil, Fail, true, true},
		{"issue 21: serving a feature the profile does not support is not Cosmos's answer", passed, spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 21: a pass where the profile promises nothing is not counted as passed", passed, spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},

		// Failures, storage profile.
		{"fail, MUST, not listed", failed(sig400), spec.Must, Storage, nil, Fail, true, true},
		{"fail, SHOULD, not listed: unexpected, not against", failed(sig400), spec.Should, Storage, nil, Fail, false, true},
		{"fail as listed", failed(sig400), spec.Must, Storage, listed400, ExpectedFail, true, false},
		{"fail as listed, SHOULD", failed(sig400), spec.Should, Storage, listed400, ExpectedFail, false, false},
		{"fail as a rule-level entry lists", failed(sig400), spec.Must, Storage, listedRule400, ExpectedFail, true, false},
		{"fail differently from the listing", failed(sig500), spec.Must, Storage, listed400, Fail, true, true},
		{"item 5: a later assertion after an expected 409 is not the listed 409", failed(sigShape), spec.Must, Storage,
			&fixtures.ExpectedFailure{Rule: "r", Spec: "s", Signature: sig409}, Fail, true, true},
		{"flaky failure as listed", failed(sig400), spec.Must, Storage, flaky400, Flaky, true, false},
		{"item 5: flaky failure, another way", failed(sig500), spec.Must, Storage, flaky400, Fail, true, true},
		{"item 5: flaky entry without a signature accepts no failure", failed(sig500), spec.Must, Storage, flakyNoSig, Fail, true, true},
		{"fail where the baseline lists a block", failed(sig400), spec.Must, Storage, blockedInsert, Fail, true, true},

		// Failures, cosmos profile (items 1, 2, 3).
		{"item 1: 500 where Cosmos differs in shape is a failure", failed(sig500), spec.Must, cosmosOrder, nil, Fail, true, true},
		{"item 1: 500 where Cosmos answers 400 is a failure", failed(sig500), spec.Must, cosmosRequires, nil, Fail, true, true},
		{"cosmos: the documented shape", failedCheck(sigShape, spec.CheckVersionHeader), spec.Must, cosmosHeader, nil, DocumentedDiff, false, false},
		{"cosmos: the documented answer", failed(sig400), spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},
		{"cosmos: another answer than the documented one", failed(sig409), spec.Must, cosmosRequires, nil, Fail, true, true},
		{"item 3: the documented answer, also listed in the baseline", failed(sig400), spec.Must, cosmosRequires, listed400, DocumentedDiff, false, false},
		{"item 3: the documented shape, also listed", failedCheck(sigShape, spec.CheckVersionHeader), spec.Must, cosmosHeader, listedShape, DocumentedDiff, false, false},
		{"item 2: 500 listed in the baseline where Cosmos differs", failed(sig500), spec.Must, cosmosOrder,
			&fixtures.ExpectedFailure{Rule: "r", Spec: "s", Signature: sig500}, ExpectedFail, true, false},
		{"cosmos: not supported, refused with 501", failed(sig501), spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"cosmos: not supported, refused with 405", failed(fixtures.Signature{Status: 405, Code: "MethodNotAllowed"}), spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"cosmos: not supported, but a 500", failed(sig500), spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"storage: a 501 is a failure", failed(sig501), spec.Must, Storage, nil, Fail, true, true},
		{"issue 21: not supported, the 501 of the raw exchange the assertion is about", Result{State: StateFailed, Signature: fixtures.Signature{Status: 501, Code: "NotImplemented", Assertion: "Expected 501 to equal 200"}, Answers: []fixtures.Signature{sig501}}, spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"issue 21: not supported, a raw 501 after a 500", Result{State: StateFailed, Signature: sig501, Answers: []fixtures.Signature{sig500, sig501}}, spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 31: not supported, a 501 seen before an assertion on a success", Result{State: StateFailed, Signature: sigShape, Answers: []fixtures.Signature{sig501}}, spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 21: not supported, an assertion without the refusal", failed(sigShape), spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 21: the recorded refusal as the failing call's answer", Result{State: StateFailed, Signature: sig400, Answers: []fixtures.Signature{sig409, sig400}}, spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},

		// Issue 31, item 8: a difference of shape names the check it excuses.
		{"issue 31: a difference of shape excuses a failure of the check it names", failedCheck(sigShape, spec.CheckVersionHeader), spec.Must, cosmosHeader, nil, DocumentedDiff, false, false},
		{"issue 31: a difference of shape does not excuse an assertion outside any check", failed(sigShape), spec.Must, cosmosHeader, nil, Fail, true, true},
		{"issue 31: a difference of shape does not excuse another check", failedCheck(sigShape, spec.CheckOrder), spec.Must, cosmosHeader, nil, Fail, true, true},
		{"issue 31: a difference of shape that names no check excuses nothing", failedCheck(sigShape, spec.CheckVersionHeader), spec.Must, Expectation{Kind: Differs}, nil, Fail, true, true},
		{"issue 31: the named check may fail on an error answer the spec asked for", failedCheck(fixtures.Signature{Status: 400, Assertion: "the x-ms-error-code header"}, spec.CheckVersionHeader), spec.Must, cosmosHeader, nil, DocumentedDiff, false, false},
		{"issue 31: the named check, after a server error, fails", Result{State: StateFailed, Signature: sigShape, Check: spec.CheckVersionHeader, Answers: []fixtures.Signature{sig500}}, spec.Must, cosmosHeader, nil, Fail, true, true},
		// Item 8: raw statuses are in the signature; a raw refusal is not a shape.
		{"issue 31: Expected 400 to equal 200 after a raw 400 is not a difference of shape", Result{State: StateFailed,
			Signature: fixtures.Signature{Status: 400, Assertion: "Expected 400 to equal 200"}, Answers: []fixtures.Signature{{Status: 400}}}, spec.Must, cosmosHeader, nil, Fail, true, true},
		{"issue 31: Expected 400 to equal 200, a raw 400 left out of the signature, is not a difference of shape", Result{State: StateFailed,
			Signature: fixtures.Signature{Assertion: "Expected 400 to equal 200"}, Answers: []fixtures.Signature{{Status: 400}}}, spec.Must, cosmosHeader, nil, Fail, true, true},
		// Item 8: the recorded refusal is the answer of the call the spec failed on.
		{"issue 31: a 404 seen earlier does not excuse a data assertion", Result{State: StateFailed,
			Signature: fixtures.Signature{Assertion: "expected V 1, but it has V 2"}, Answers: []fixtures.Signature{sig404}}, spec.Must, cosmosNotFound, nil, Fail, true, true},
		{"issue 31: the 404 of the call the spec failed on is the recorded refusal", Result{State: StateFailed,
			Signature: fixtures.Signature{Status: 404, Code: "ResourceNotFound", Assertion: "Insert Entity into T"}, Answers: []fixtures.Signature{sig404}}, spec.Must, cosmosNotFound, nil, DocumentedDiff, false, false},
		{"issue 31: an earlier refusal, then a 409 on the failing call", Result{State: StateFailed, Signature: sig409, Answers: []fixtures.Signature{sig400, sig409}}, spec.Must, cosmosRequires, nil, Fail, true, true},

		// Issue 31, item 9: order not promised is not the rule not promised.
		{"issue 31: order not promised, the order check fails", failedCheck(sigShape, spec.CheckOrder), spec.Must, cosmosOrder, nil, DocumentedDiff, false, false},
		{"issue 31: order not promised, a wrong set of entities fails", failed(fixtures.Signature{Assertion: "missing (p, c)"}), spec.Must, cosmosOrder, nil, Fail, true, true},
		{"issue 31: order not promised, another check fails", failedCheck(sigShape, spec.CheckRefusal), spec.Must, cosmosOrder, nil, Fail, true, true},
		{"issue 31: order not promised, a refusal fails", failed(sig400), spec.Must, cosmosOrder, nil, Fail, true, true},
		{"issue 31: order not promised, a server error in the order check fails", Result{State: StateFailed, Signature: sig500, Check: spec.CheckOrder, Answers: []fixtures.Signature{sig500}}, spec.Must, cosmosOrder, nil, Fail, true, true},
		{"issue 31: order not promised, blocked is blocked", blocked, spec.Must, cosmosOrder, nil, Blocked, false, true},
		{"issue 21: not promised, any answer but a server error", failed(sig400), spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
		{"issue 21: not promised, a shape", failed(sigShape), spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
		{"issue 21: not promised, a server error fails", failed(sig500), spec.Must, cosmosUnpromised, nil, Fail, true, true},
		{"issue 21: not promised, a raw server error fails", Result{State: StateFailed, Signature: sigShape, Answers: []fixtures.Signature{sig500}}, spec.Must, cosmosUnpromised, nil, Fail, true, true},

		// Blocks (items 8, 9).
		{"blocked, not listed", blocked, spec.Must, Storage, nil, Blocked, false, true},
		{"blocked as listed", blocked, spec.Must, Storage, blockedInsert, Blocked, false, false},
		{"blocked by another rule than listed", Result{State: StateBlocked, BlockedBy: "tables.create.listed"}, spec.Must, Storage, blockedInsert, Blocked, false, true},
		{"blocked where the baseline lists a failure", blocked, spec.Must, Storage, listed400, Blocked, false, true},
		{"blocked, cosmos (by another answer than the profile's)", Result{State: StateBlocked, BlockedBy: "modify.insert.stores", Signature: sig409}, spec.Must, cosmosRequires, nil, Blocked, false, true},
		{"issue 21: blocked by the profile's refusal of the feature", Result{State: StateBlocked, BlockedBy: "service.acl.roundtrip", Signature: sig501, Answers: []fixtures.Signature{sig501}}, spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"issue 21: blocked otherwise where the feature is not supported", blocked, spec.Must, cosmosNoACL, nil, Blocked, false, true},
		{"issue 21: blocked by the refusal the profile records", Result{State: StateBlocked, BlockedBy: "modify.insert.stores", Signature: sig400}, spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},
		{"issue 21: blocked where the profile promises nothing", blocked, spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
	}
	for _, c := range cases {
		d := Decide(c.r, c.level, c.exp, c.entry)
		if d.Outcome != c.outcome || d.Against != c.against || d.Unexpected != c.unexpected {
			t.Errorf("%s: got %s against=%v unexpected=%v (%s), want %s against=%v unexpected=%v",
				c.name, d.Outcome, d.Against, d.Unexpected, d.Why, c.outcome, c.against, c.unexpected)
		}
		if d.Selected != (c.r.State != StateLeftOut) {
			t.Errorf("%s: selected %v", c.name, d.Selected)
		}
	}
}

// A changed failure says what the baseline listed and what came now.
func TestDecideSaysWhatChanged(t *testing.T) {
	d := Decide(failed(sig500), spec.Must, Storage, listed400)
	if !strings.Contains(d.Why, "400 InvalidInput") || !strings.Contains(d.Why, "500 InternalError") {
		t.Errorf("why: %q", d.Why)
	}
}

func TestExpectationOf(t *testing.T) {
	r := spec.Rule{ID: "x", Level: spec.Must, Cosmos: spec.Cosmos{Kind: spec.CosmosDiffers, Statuses: []int{400}, Code: "PropertiesNeedValue",
		Answer: "refused", Evidence: "E-cosmos-empty-keys", Strength: spec.CosmosByTraffic}}
	if ExpectationOf(r, ProfileStorage, "s") != Storage || ExpectationOf(r, "", "s") != Storage {
		t.Error("storage profile")
	}
	if e := ExpectationOf(r, ProfileCosmos, "s"); e.Kind != Differs || e.StorageAllowed || e.Answer != (fixtures.Signature{Status: 400, Code: "PropertiesNeedValue"}) ||
		!strings.Contains(e.Difference, "E-cosmos-empty-keys") {
		t.Errorf("cosmos, a recorded refusal: %+v", e)
	}
	for _, c := range []struct {
		cosmos spec.Cosmos
		text   string
		want   Expectation
	}{
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true}, "s", Expectation{Kind: Differs}},
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, Check: spec.CheckRefusal}, "s", Expectation{Kind: Differs, Check: spec.CheckRefusal}},
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, StorageToo: true}, "s", Expectation{Kind: Differs, StorageAllowed: true}},
		{spec.Cosmos{Kind: spec.CosmosOrderUnpromised, Check: spec.CheckOrder}, "s", Expectation{Kind: OrderNotPromised, Check: spec.CheckOrder}},
		{spec.Cosmos{Kind: spec.CosmosUnsupported, Statuses: []int{501}, Code: "NotImplemented"}, "s", Expectation{Kind: NotSupported, Answer: sig501}},
		{spec.Cosmos{Kind: spec.CosmosUnsupported, Statuses: []int{501, 405}}, "s", Expectation{Kind: NotSupported}},
		{spec.Cosmos{Kind: spec.CosmosUnpromised}, "s", Expectation{Kind: NotPromised}},
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, Specs: []string{"one over"}}, "at exactly 252", Storage},
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, Specs: []string{"one over"}}, "one over, at 253", Expectation{Kind: Differs}},
		{spec.Cosmos{}, "s", Storage},
	} {
		got := ExpectationOf(spec.Rule{ID: "y", Cosmos: c.cosmos}, ProfileCosmos, c.text)
		got.Difference = ""
		if got != c.want {
			t.Errorf("%+v on %q: %+v, want %+v", c.cosmos, c.text, got, c.want)
		}
	}
	// Every rule of the catalogue: its expectation under the cosmos profile is the kind its
	// Cosmos entry says.
	for _, r := range spec.Rules() {
		want := map[spec.CosmosKind]ExpectationKind{spec.CosmosSame: SameAsStorage, spec.CosmosDiffers: Differs,
			spec.CosmosUnsupported: NotSupported, spec.CosmosUnpromised: NotPromised, spec.CosmosOrderUnpromised: OrderNotPromised}[r.Cosmos.KindOrSame()]
		if len(r.Cosmos.Specs) == 0 && ExpectationOf(r, ProfileCosmos, "").Kind != want {
			t.Errorf("%s: %s, want %s", r.ID, ExpectationOf(r, ProfileCosmos, "").Kind, want)
		}
	}
}

func dec(o Outcome, against, unexpected bool) Decision {
	return Decision{Outcome: o, Against: against, Unexpected: unexpected, Selected: true}
}

func TestCell(t *testing.T) {
	leftOut := Decision{Outcome: Skipped}
	cases := []struct {
		name                string
		specs               []Decision
		outcome             Outcome
		against, unexpected bool
	}{
		{"no spec", nil, NotRun, false, false},
		{"all left out", []Decision{leftOut}, Skipped, false, false},
		{"pass", []Decision{dec(Pass, false, false), leftOut}, Pass, false, false},
		{"pass and skipped: partial", []Decision{dec(Pass, false, false), dec(Skipped, false, false)}, Partial, false, false},
		{"worst wins", []Decision{dec(Pass, false, false), dec(Fail, true, true)}, Fail, true, true},
		{"item 2: an expected failure outranks a documented difference", []Decision{dec(DocumentedDiff, false, false), dec(ExpectedFail, true, false)}, ExpectedFail, true, false},
		{"an expected failure outranks an error", []Decision{dec(Error, false, false), dec(ExpectedFail, true, false)}, ExpectedFail, true, false},
		{"an unexpected pass beside an expected failure still counts against", []Decision{dec(UnexpectedPass, false, true), dec(ExpectedFail, true, false)}, UnexpectedPass, true, true},
		{"blocked beside a pass", []Decision{dec(Pass, false, false), dec(Blocked, false, true)}, Blocked, false, true},
		{"not applicable", []Decision{dec(NotApplicable, false, false)}, NotApplicable, false, false},
		// Issue 31, item 7: a selected spec that did not run leaves the rule partial.
		{"item 7: pass, documented difference, skipped: partial", []Decision{dec(Pass, false, false), dec(DocumentedDiff, false, false), dec(Skipped, false, false)}, Partial, false, false},
		{"item 7: documented difference and skipped: partial", []Decision{dec(DocumentedDiff, false, false), dec(Skipped, false, false)}, Partial, false, false},
		{"item 7: not applicable and skipped: partial", []Decision{dec(NotApplicable, false, false), dec(Skipped, false, false)}, Partial, false, false},
		{"item 7: pass and not run: partial", []Decision{dec(Pass, false, false), dec(NotRun, false, false)}, Partial, false, false},
		{"item 7: pass and interrupted: interrupted", []Decision{dec(Pass, false, false), dec(Interrupted, false, false)}, Interrupted, false, false},
		{"item 7: only not run, selected: not run", []Decision{dec(NotRun, false, false), leftOut}, NotRun, false, false},
		{"item 7: a failure beside a spec not run stays a failure", []Decision{dec(Fail, true, true), dec(NotRun, false, false)}, Fail, true, true},
	}
	for _, c := range cases {
		got := Cell(c.specs)
		if got.Outcome != c.outcome || got.Against != c.against || got.Unexpected != c.unexpected {
			t.Errorf("%s: got %+v", c.name, got)
		}
		if v := Judge([]RuleCell{{Rule: mustRule("r", ""), Cell: got}}, Backend{}); got.Outcome == Partial && v.Coverage.Passed != 0 {
			t.Errorf("%s: a partial cell counted as passed: %+v", c.name, v.Coverage)
		}
	}
}

func mustRule(id string, feature spec.Feature) spec.Rule {
	return spec.Rule{ID: id, Level: spec.Must, Feature: feature}
}

func TestJudge(t *testing.T) {
	core, ext := mustRule("a", ""), mustRule("b", "sas")
	core2, ext2 := mustRule("d", spec.Core), mustRule("e", "batch")
	should := spec.Rule{ID: "c", Level: spec.Should}
	cell := func(r spec.Rule, d Decision) RuleCell { return RuleCell{Rule: r, Cell: d} }
	pass, fail, leftOut := dec(Pass, false, false), dec(Fail, true, true), Decision{Outcome: Skipped}
	filtered := Backend{Filter: "area:x"}
	cases := []struct {
		name  string
		cells []RuleCell
		b     Backend
		kind  Kind
		says  string
		never string // what the sentence must not say
	}{
		{"all pass", []RuleCell{cell(core, pass), cell(ext, pass), cell(should, dec(Fail, false, true))}, Backend{}, Conforms, "conforms: all 2 applicable MUST rules ran and passed", "selection"},
		{"item 3: a documented difference conforms", []RuleCell{cell(core, dec(DocumentedDiff, false, false)), cell(ext, pass)}, Backend{}, Conforms, "conforms: all 2", ""},
		{"not applicable is neither passed nor failed", []RuleCell{cell(core, pass), cell(ext, dec(NotApplicable, false, false))}, Backend{}, Conforms, "all 1 applicable MUST rules ran and passed (1 not applicable", ""},
		{"core fails", []RuleCell{cell(core, fail), cell(ext, pass)}, Backend{}, DoesNotConform, "does not conform: 1 MUST rules fail; passed 1 of 2 applicable MUST rules", "selection"},
		{"core fails as the baseline lists", []RuleCell{cell(core, dec(ExpectedFail, true, false)), cell(ext, pass)}, Backend{}, DoesNotConform, "fail, each as its baseline lists", ""},
		{"item 2: a listed failure beside a documented difference", []RuleCell{cell(core, Cell([]Decision{dec(DocumentedDiff, false, false), dec(ExpectedFail, true, false)})), cell(ext, pass)}, Backend{}, DoesNotConform, "does not conform", ""},
		{"only an extended feature fails", []RuleCell{cell(core, pass), cell(ext, fail)}, Backend{}, ConformsToCore,
			"conforms to core: all 1 core MUST rules ran and passed; 1 MUST rules of extended features fail (sas); passed 1 of 2 applicable MUST rules", "selection"},
		{"core and extended fail: how many of each", []RuleCell{cell(core, fail), cell(core2, pass), cell(ext, fail), cell(ext2, fail)}, Backend{}, DoesNotConform,
			"does not conform: 3 MUST rules fail (1 core, 2 of extended features: batch, sas); passed 1 of 4 applicable MUST rules", "conforms"},
		{"errors only", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))}, Backend{Errors: []string{"b: EOF"}}, Inconclusive, "inconclusive", ""},
		{"a failure outweighs errors", []RuleCell{cell(core, fail), cell(ext, dec(Error, false, false))}, Backend{Errors: []string{"b: EOF"}}, DoesNotConform, "does not conform", ""},
		{"item 9: blocked is not judged", []RuleCell{cell(core, pass), cell(ext, dec(Blocked, false, true))}, Backend{}, ConformsOn, "conforms on 1 of 2 applicable MUST rules; 1 applicable MUST rules not judged (skipped, partly run or blocked)", "selection"},
		{"interrupted", []RuleCell{cell(core, pass), cell(ext, pass)}, Backend{Interrupted: true}, KindInterrupted, "interrupted: the run stopped before its end; so far conforms", ""},
		{"issue 31, item 2: cut by the suite timeout", []RuleCell{cell(core, pass), cell(ext, dec(NotRun, false, false))}, Backend{Interrupted: true, StoppedBy: []string{"Suite Timeout Elapsed"}}, KindInterrupted,
			"interrupted (Suite Timeout Elapsed): the run stopped before its end; so far conforms on 1 of 2 applicable MUST rules", ""},
		{"issue 34, item 10: unfiltered, interrupted before some rules' specs were reported", []RuleCell{cell(core, pass), cell(ext, Decision{Outcome: NotRun})}, Backend{Interrupted: true}, KindInterrupted,
			"so far conforms on 1 of 2 applicable MUST rules; 1 applicable MUST rules not judged", "selection"},
		{"issue 34, item 10: unfiltered, stopped answering before some rules' specs were reported", []RuleCell{cell(core, pass), cell(ext, Decision{Outcome: NotRun})}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z"}, Inconclusive,
			"conforms on 1 of 2 applicable MUST rules", "selection"},
		{"not started", nil, Backend{StartError: "refused"}, KindNotRun, "not run", ""},
		{"issue 31: stopped answering", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z", Errors: []string{"b: EOF"}}, Inconclusive,
			"inconclusive: the backend stopped answering at 2026-01-02T03:04:05Z, so its run stopped before its end; so far", "not run"},
		{"issue 31: stopped answering after a failure", []RuleCell{cell(core, fail), cell(ext, dec(Error, false, false))}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z"}, Inconclusive,
			"stopped answering at 2026-01-02T03:04:05Z, so its run stopped before its end; so far does not conform", ""},
		{"issue 31: stopped answering, the specs it left not run", []RuleCell{cell(core, pass), cell(ext, dec(NotRun, false, false))}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z", Interrupted: true}, Inconclusive,
			"inconclusive: the backend stopped answering at 2026-01-02T03:04:05Z", ""},
		{"issue 31: hundreds of errors make a short sentence", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))},
			Backend{Errors: []string{strings.Repeat("x", 500), "b", "c", "d"}, ErrorCount: 170}, Inconclusive, "; and 167 more", strings.Repeat("x", 121)},

		// A verdict claims only what ran: core conformance only when every core MUST rule
		// ran and passed, and a selection is said to be one.
		{"filtered", []RuleCell{cell(core, pass), cell(ext, leftOut)}, filtered, ConformsOn,
			"conforms on the 1 selected applicable MUST rules; the verdict covers only the selection, 1 of the catalogue's 2 MUST rules (filter area:x); 1 left out by the filter", "skipped"},
		{"filtered, a selected rule blocked", []RuleCell{cell(core, pass), cell(core2, dec(Blocked, false, true)), cell(ext, leftOut)}, filtered, ConformsOn,
			"conforms on 1 of the 2 selected applicable MUST rules; 1 applicable MUST rules not judged (skipped, partly run or blocked); the verdict covers only the selection, 2 of the catalogue's 3 MUST rules (filter area:x); 1 left out by the filter", ""},
		{"filtered to an extended feature that fails: no core rule ran, no core claim", []RuleCell{cell(core, leftOut), cell(ext, fail), cell(ext2, leftOut)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 0 of the 1 selected applicable MUST rules; the verdict covers only the selection, 1 of the catalogue's 3 MUST rules (filter area:x); 2 left out by the filter", "core"},
		{"filtered, some core rules ran and passed, an extended one fails: core is not claimed", []RuleCell{cell(core, pass), cell(core2, leftOut), cell(ext, fail)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 1 of the 2 selected applicable MUST rules; the verdict covers only the selection", "core"},
		{"filtered, every core rule ran and passed, an extended one fails", []RuleCell{cell(core, pass), cell(ext, fail), cell(ext2, leftOut)}, filtered, ConformsToCore,
			"conforms to core: all 1 core MUST rules ran and passed; 1 MUST rules of extended features fail (sas); passed 1 of the 2 selected applicable MUST rules; the verdict covers only the selection", ""},
		{"a core rule blocked, an extended one fails: core is not claimed", []RuleCell{cell(core, dec(Blocked, false, true)), cell(ext, fail)}, Backend{}, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 0 of 2 applicable MUST rules; 1 applicable MUST rules not judged (skipped, partly run or blocked)", "core"},
		{"filtered, a failure of a core rule", []RuleCell{cell(core, fail), cell(ext, leftOut)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules fail; passed 0 of the 1 selected applicable MUST rules; the verdict covers only the selection", ""},
		{"filtered, errors", []RuleCell{cell(core, dec(Error, false, false)), cell(ext, leftOut)}, Backend{Filter: "area:x", Errors: []string{"a: EOF"}}, Inconclusive,
			"; the verdict covers only the selection, 1 of the catalogue's 2 MUST rules (filter area:x)", ""},
		{"filtered, interrupted", []RuleCell{cell(core, pass), cell(ext, leftOut)}, Backend{Filter: "area:x", Interrupted: true}, KindInterrupted,
			"so far conforms on the 1 selected applicable MUST rules; the verdict covers only the selection", ""},
		{"a filter of no MUST rule claims nothing", []RuleCell{cell(core, leftOut), cell(ext, leftOut), cell(should, pass)}, Backend{Filter: "level:SHOULD"}, ConformsOn,
			"no MUST rule judged, so no conformance is claimed; the verdict covers only the selection, 0 of the catalogue's 2 MUST rules (filter level:SHOULD)", "conforms on"},
		{"a filter that selects every MUST rule is named", []RuleCell{cell(core, pass), cell(ext, pass), cell(should, leftOut)}, Backend{Filter: "level:MUST"}, Conforms,
			"conforms: all 2 applicable MUST rules ran and passed (filter level:MUST, which selects every MUST rule)", ""},
	}
	for _, c := range cases {
		v := Judge(c.cells, c.b)
		if v.Kind != c.kind || !strings.Contains(v.Sentence, c.says) || (c.never != "" && strings.Contains(v.Sentence, c.never)) {
			t.Errorf("%s: got %s %q", c.name, v.Kind, v.Sentence)
		}
		if v.Coverage.Partial() != strings.Contains(v.Sentence, "covers only the selection") {
			t.Errorf("%s: the sentence says the selection %v, the coverage %+v", c.name, !v.Coverage.Partial(), v.Coverage)
		}
	}
}

// TestExit: the exit status agrees with the decisions (issue 20, item 3: a documented
// difference, which the verdict does not count, does not fail the run either).
func TestExit(t *testing.T) {
	cases := []struct {
		name   string
		b      []Tally
		update bool
		want   int
	}{
		{"nothing unexpected", []Tally{{Kind: Conforms}, {Kind: ConformsOn}}, false, ExitOK},
		{"an unexpected outcome", []Tally{{}, {Unexpected: 1}}, false, ExitFailed},
		{"a baseline problem", []Tally{{BaselineProblems: 1}}, false, ExitFailed},
		{"errors only", []Tally{{Kind: Inconclusive, Errors: 2}}, false, ExitInconclusive},
		{"errors and a failure", []Tally{{Errors: 2, Unexpected: 1}}, false, ExitFailed},
		{"updating the baseline", []Tally{{Unexpected: 3}}, true, ExitOK},
		{"updating the baseline, with errors", []Tally{{Unexpected: 3, Errors: 1}}, true, ExitInconclusive},
		{"not started", []Tally{{}, {Kind: KindNotRun}}, false, ExitUsage},
		{"interrupted", []Tally{{Kind: KindInterrupted, Unexpected: 1}}, false, ExitInterrupted},
		{"issue 31, item 3: a verdict that did not finish never exits 0", []Tally{{Kind: Conforms}, {Kind: KindInterrupted}}, false, ExitInterrupted},
		{"an inconclusive verdict never exits 0", []Tally{{Kind: Inconclusive}}, false, ExitInconclusive},
		{"issue 31: stopped answering", []Tally{{}, {Kind: Inconclusive, StoppedAnswering: true}}, false, ExitInconclusive},
		{"issue 31: stopped answering after a failure", []Tally{{Kind: Inconclusive, StoppedAnswering: true, Unexpected: 2, Errors: 5}}, false, ExitInconclusive},
	}
	for _, c := range cases {
		if got := Exit(c.b, c.update); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}

// TestReplayExit: issue 20, item 4: a replay that stopped early or compared nothing never
// exits 0.
func TestReplayExit(t *testing.T) {
	cases := []struct {
		r    Replay
		want int
	}{
		{Replay{Agree: 5}, ExitOK},
		{Replay{Agree: 5, Disagree: 1}, ExitFailed},
		{Replay{}, ExitInconclusive},
		{Replay{Agree: 3, Stopped: "no answer in 2 recordings in a row"}, ExitInconclusive},
		{Replay{Disagree: 1, Stopped: "x"}, ExitFailed},
	}
	for _, c := range cases {
		if got := ReplayExit(c.r); got != c.want {
			t.Errorf("%+v: exit %d, want %d", c.r, got, c.want)
		}
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		old, new Outcome
		ow, nw   string
		want     Change
	}{
		{Pass, Pass, "pass", "pass", Same},
		{Pass, Fail, "", "", Regressed},
		{Fail, Pass, "", "", Improved},
		{ExpectedFail, Fail, "refused with 400 InvalidInput", "server error 500", Regressed},
		// Issue 34, item 10: the backend did the same; only its baseline changed.
		{ExpectedFail, Fail, "refused with 400 InvalidInput", "refused with 400 InvalidInput", BaselineEdited},
		{Fail, ExpectedFail, "refused with 400 InvalidInput", "refused with 400 InvalidInput", BaselineEdited},
		{Fail, Flaky, "accepted", "accepted", BaselineEdited},
		{UnexpectedPass, Pass, "passed, where the baseline expects a failure", "", BaselineEdited},
		{Fail, ExpectedFail, "refused with 400 InvalidInput", "server error 500", Improved},
		{Info, Info, "refused with 400", "accepted", ChangedChoice},
		{Pass, Error, "", "", Incomparable},
		{Blocked, Pass, "", "", Incomparable},
		{DocumentedDiff, NotApplicable, "", "", ChangedChoice},
	}
	for _, c := range cases {
		if got := Compare(c.old, c.new, c.ow, c.nw); got != c.want {
			t.Errorf("%s -> %s: %s, want %s", c.old, c.new, got, c.want)
		}
	}
}

// TestCosmosCatalogueDecisions: issue 31, items 8 and 9, on the catalogue's own Cosmos
// expectations: a difference of shape excuses only the check it names, a raw refusal is no
// shape, a recorded 404 must be the failing call's answer, and an order not promised leaves
// the rest of an ordering rule judged.
func TestCosmosCatalogueDecisions(t *testing.T) {
	rawRefusal := fixtures.Signature{Status: 400, Code: "InvalidInput", Assertion: "Expected 400 to equal 200"}
	cases := []struct {
		rule, spec string
		r          Result
		outcome    Outcome
	}{
		{"protocol.version.echo", "s", Result{State: StateFailed, Signature: rawRefusal, Answers: []fixtures.Signature{{Status: 400, Code: "InvalidInput"}}}, Fail},
		{"protocol.error.code-header", "s", Result{State: StateFailed, Signature: rawRefusal, Answers: []fixtures.Signature{{Status: 400, Code: "InvalidInput"}}}, Fail},
		{"tables.name.case-insensitive", "s", Result{State: StateFailed, Signature: rawRefusal, Answers: []fixtures.Signature{{Status: 400, Code: "InvalidInput"}}}, Fail},
		{"protocol.version.echo", "s", failedCheck(fixtures.Signature{Assertion: "the answer's x-ms-version"}, spec.CheckVersionHeader), DocumentedDiff},
		{"protocol.version.echo", "s", failed(fixtures.Signature{Assertion: "Expected 400 to equal 200"}), Fail},
		{"protocol.error.code-header", "s", failedCheck(fixtures.Signature{Status: 404, Code: "ResourceNotFound", Assertion: "the x-ms-error-code header"}, spec.CheckErrorCodeHeader), DocumentedDiff},
		{"tables.name.case-insensitive", "s", failedCheck(fixtures.Signature{Assertion: "expected the backend to refuse"}, spec.CheckRefusal), DocumentedDiff},
		{"tables.name.case-insensitive-access", "s", Result{State: StateFailed, Signature: fixtures.Signature{Assertion: "expected V 1, but it has V 2"},
			Answers: []fixtures.Signature{{Status: 404, Code: "ResourceNotFound"}}}, Fail},
		{"tables.name.case-insensitive-access", "s", Result{State: StateFailed, Signature: fixtures.Signature{Status: 404, Code: "ResourceNotFound", Assertion: "Insert Entity"},
			Answers: []fixtures.Signature{{Status: 404, Code: "ResourceNotFound"}}}, DocumentedDiff},
		{"ordering.filtered", "s", failed(fixtures.Signature{Assertion: "expected exactly the keys (p,b) (p,c), but it has (p,b)"}), Fail},
		{"ordering.filtered", "s", failedCheck(sigShape, spec.CheckOrder), DocumentedDiff},
		{"ordering.filtered", "s", Result{State: StatePassed}, Pass},
		{"pattern.log-tail.newest-first", "s", failed(fixtures.Signature{Assertion: "10 claims, but it has 9"}), Fail},
		// A limit Cosmos documents otherwise and never was recorded at stays not promised.
		{"limits.key.size", "s", failed(sig400), NotApplicable},
		{"limits.entity.size", "s", Result{State: StatePassed}, NotApplicable},
	}
	for _, c := range cases {
		r, ok := spec.LookupRule(c.rule)
		if !ok {
			t.Fatalf("no rule %s", c.rule)
		}
		exp := ExpectationOf(r, ProfileCosmos, c.spec)
		if d := Decide(c.r, r.Level, exp, nil); d.Outcome != c.outcome {
			t.Errorf("%s, %+v: %s (%s), want %s", c.rule, c.r, d.Outcome, d.Why, c.outcome)
		}
	}
}

// The summary's line about unexpected specs says what Exit does with them: they fail the
// run, except in a run that rewrites the baselines (issue 34, item 10).
func TestUnexpectedSentenceAgreesWithExit(t *testing.T) {
	for _, updating := range []bool{false, true} {
		fails := Exit([]Tally{{Kind: DoesNotConform, Unexpected: 2}}, updating) != ExitOK
		says := UnexpectedSentence(2, updating)
		if strings.Contains(says, "each fails the run") != fails || !strings.HasPrefix(says, "2 specs not as the baseline") {
			t.Errorf("updating the baseline %v: exit fails %v, the summary says %q", updating, fails, says)
		}
	}
	if got := UnexpectedSentence(1, false); !strings.HasPrefix(got, "1 spec not") {
		t.Errorf("one spec: %q", got)
	}
}
