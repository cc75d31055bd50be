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

	// Profile expectations.
	cosmosOrder      = Expectation{Kind: Differs, StorageAllowed: true, Difference: "not sorted"}
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

func failed(s fixtures.Signature) Result { return Result{State: Failed, Signature: s} }

// TestDecide is the decision table: what happened x level x profile expectation x baseline
// entry -> outcome, against the backend, unexpected (exit 1). Each case of issue 20 is
// named.
func TestDecide(t *testing.T) {
	passed := Result{State: Passed}
	chose := Result{State: Passed, Choices: 1}
	blocked := Result{State: BlockedState, BlockedBy: "modify.insert.stores", Signature: sig400}
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
		{"left out by the filter", Result{State: LeftOut}, spec.Must, Storage, nil, Skipped, false, false},
		{"skipped for a capability", Result{State: SkippedState}, spec.Must, Storage, listed400, Skipped, false, false},
		{"the driver cannot send it", Result{State: NotExpressible}, spec.Must, Storage, nil, Skipped, false, false},
		{"interrupted", Result{State: Stopped}, spec.Must, Storage, nil, Interrupted, false, false},
		{"no answer", Result{State: NoAnswer}, spec.Must, Storage, nil, Error, false, false},
		{"no answer, listed in the baseline: still an error", Result{State: NoAnswer}, spec.Must, Storage, listed400, Error, false, false},
		{"no answer, cosmos", Result{State: NoAnswer}, spec.Must, cosmosOrder, nil, Error, false, false},

		// Passes.
		{"pass, MUST", passed, spec.Must, Storage, nil, Pass, false, false},
		{"pass, SHOULD", passed, spec.Should, Storage, nil, Pass, false, false},
		{"MUST with a choice is a pass", chose, spec.Must, Storage, nil, Pass, false, false},
		{"MAY with a choice is information", chose, spec.May, Storage, nil, Info, false, false},
		{"SHOULD with a choice is information", chose, spec.Should, Storage, nil, Info, false, false},
		{"pass of a spec the baseline lists", passed, spec.Must, Storage, listed400, UnexpectedPass, false, true},
		{"pass of a rule-level entry (judged over the rule at the end)", passed, spec.Must, Storage, listedRule400, Pass, false, false},
		{"pass of a flaky entry", passed, spec.Must, Storage, flaky400, Flaky, true, false},
		{"pass of a spec listed as blocked", passed, spec.Must, Storage, blockedInsert, UnexpectedPass, false, true},
		{"cosmos: Storage's answer where Cosmos may differ", passed, spec.Must, cosmosOrder, nil, Pass, false, false},
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
		{"cosmos: the documented shape", failed(sigShape), spec.Must, cosmosOrder, nil, DocumentedDiff, false, false},
		{"cosmos: the documented answer", failed(sig400), spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},
		{"cosmos: another answer than the documented one", failed(sig409), spec.Must, cosmosRequires, nil, Fail, true, true},
		{"item 3: the documented answer, also listed in the baseline", failed(sig400), spec.Must, cosmosRequires, listed400, DocumentedDiff, false, false},
		{"item 3: the documented shape, also listed", failed(sigShape), spec.Must, cosmosOrder, listedShape, DocumentedDiff, false, false},
		{"item 2: 500 listed in the baseline where Cosmos differs", failed(sig500), spec.Must, cosmosOrder,
			&fixtures.ExpectedFailure{Rule: "r", Spec: "s", Signature: sig500}, ExpectedFail, true, false},
		{"cosmos: not supported, refused with 501", failed(sig501), spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"cosmos: not supported, refused with 405", failed(fixtures.Signature{Status: 405, Code: "MethodNotAllowed"}), spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"cosmos: not supported, but a 500", failed(sig500), spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"storage: a 501 is a failure", failed(sig501), spec.Must, Storage, nil, Fail, true, true},
		{"issue 21: not supported, the 501 of a raw exchange before the assertion", Result{State: Failed, Signature: sigShape, Answers: []fixtures.Signature{sig501}}, spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"issue 21: not supported, a raw 501 after a 500", Result{State: Failed, Signature: sigShape, Answers: []fixtures.Signature{sig500, sig501}}, spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 21: not supported, an assertion without the refusal", failed(sigShape), spec.Must, cosmosNoACL, nil, Fail, true, true},
		{"issue 21: the recorded refusal among earlier answers", Result{State: Failed, Signature: sigShape, Answers: []fixtures.Signature{sig409, sig400}}, spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},
		{"issue 21: not promised, any answer but a server error", failed(sig400), spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
		{"issue 21: not promised, a shape", failed(sigShape), spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
		{"issue 21: not promised, a server error fails", failed(sig500), spec.Must, cosmosUnpromised, nil, Fail, true, true},
		{"issue 21: not promised, a raw server error fails", Result{State: Failed, Signature: sigShape, Answers: []fixtures.Signature{sig500}}, spec.Must, cosmosUnpromised, nil, Fail, true, true},

		// Blocks (items 8, 9).
		{"blocked, not listed", blocked, spec.Must, Storage, nil, Blocked, false, true},
		{"blocked as listed", blocked, spec.Must, Storage, blockedInsert, Blocked, false, false},
		{"blocked by another rule than listed", Result{State: BlockedState, BlockedBy: "tables.create.listed"}, spec.Must, Storage, blockedInsert, Blocked, false, true},
		{"blocked where the baseline lists a failure", blocked, spec.Must, Storage, listed400, Blocked, false, true},
		{"blocked, cosmos (by another answer than the profile's)", Result{State: BlockedState, BlockedBy: "modify.insert.stores", Signature: sig409}, spec.Must, cosmosRequires, nil, Blocked, false, true},
		{"issue 21: blocked by the profile's refusal of the feature", Result{State: BlockedState, BlockedBy: "service.acl.roundtrip", Signature: sigShape, Answers: []fixtures.Signature{sig501}}, spec.Must, cosmosNoACL, nil, NotApplicable, false, false},
		{"issue 21: blocked otherwise where the feature is not supported", blocked, spec.Must, cosmosNoACL, nil, Blocked, false, true},
		{"issue 21: blocked by the refusal the profile records", Result{State: BlockedState, BlockedBy: "modify.insert.stores", Signature: sig400}, spec.Must, cosmosRequires, nil, DocumentedDiff, false, false},
		{"issue 21: blocked where the profile promises nothing", blocked, spec.Must, cosmosUnpromised, nil, NotApplicable, false, false},
	}
	for _, c := range cases {
		d := Decide(c.r, c.level, c.exp, c.entry)
		if d.Outcome != c.outcome || d.Against != c.against || d.Unexpected != c.unexpected {
			t.Errorf("%s: got %s against=%v unexpected=%v (%s), want %s against=%v unexpected=%v",
				c.name, d.Outcome, d.Against, d.Unexpected, d.Why, c.outcome, c.against, c.unexpected)
		}
		if d.Selected != (c.r.State != LeftOut) {
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
		{spec.Cosmos{Kind: spec.CosmosDiffers, Accepts: true, StorageToo: true}, "s", Expectation{Kind: Differs, StorageAllowed: true}},
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
			spec.CosmosUnsupported: NotSupported, spec.CosmosUnpromised: NotPromised}[r.Cosmos.KindOrSame()]
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
	}
	for _, c := range cases {
		got := Cell(c.specs)
		if got.Outcome != c.outcome || got.Against != c.against || got.Unexpected != c.unexpected {
			t.Errorf("%s: got %+v", c.name, got)
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
		{"all pass", []RuleCell{cell(core, pass), cell(ext, pass), cell(should, dec(Fail, false, true))}, Backend{}, Conforms, "conforms: all 2 MUST rules ran and passed", "selection"},
		{"item 3: a documented difference conforms", []RuleCell{cell(core, dec(DocumentedDiff, false, false)), cell(ext, pass)}, Backend{}, Conforms, "conforms: all 2", ""},
		{"not applicable is neither passed nor failed", []RuleCell{cell(core, pass), cell(ext, dec(NotApplicable, false, false))}, Backend{}, Conforms, "all 1 applicable MUST rules ran and passed (1 not applicable", ""},
		{"core fails", []RuleCell{cell(core, fail), cell(ext, pass)}, Backend{}, DoesNotConform, "does not conform: 1 MUST rules fail; passed 1 of 2 MUST rules", "selection"},
		{"core fails as the baseline lists", []RuleCell{cell(core, dec(ExpectedFail, true, false)), cell(ext, pass)}, Backend{}, DoesNotConform, "fail, each as its baseline lists", ""},
		{"item 2: a listed failure beside a documented difference", []RuleCell{cell(core, Cell([]Decision{dec(DocumentedDiff, false, false), dec(ExpectedFail, true, false)})), cell(ext, pass)}, Backend{}, DoesNotConform, "does not conform", ""},
		{"only an extended feature fails", []RuleCell{cell(core, pass), cell(ext, fail)}, Backend{}, ConformsToCore,
			"conforms to core: all 1 core MUST rules ran and passed; 1 MUST rules of extended features fail (sas); passed 1 of 2 MUST rules", "selection"},
		{"core and extended fail: how many of each", []RuleCell{cell(core, fail), cell(core2, pass), cell(ext, fail), cell(ext2, fail)}, Backend{}, DoesNotConform,
			"does not conform: 3 MUST rules fail (1 core, 2 of extended features: batch, sas); passed 1 of 4 MUST rules", "conforms"},
		{"errors only", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))}, Backend{Errors: []string{"b: EOF"}}, Inconclusive, "inconclusive", ""},
		{"a failure outweighs errors", []RuleCell{cell(core, fail), cell(ext, dec(Error, false, false))}, Backend{Errors: []string{"b: EOF"}}, DoesNotConform, "does not conform", ""},
		{"item 9: blocked is not judged", []RuleCell{cell(core, pass), cell(ext, dec(Blocked, false, true))}, Backend{}, ConformsOn, "conforms on 1 of 2 MUST rules; 1 selected MUST rules not judged", "selection"},
		{"interrupted", []RuleCell{cell(core, pass), cell(ext, pass)}, Backend{Interrupted: true}, KindStopped, "interrupted: the run stopped before its end; so far conforms", ""},
		{"not started", nil, Backend{StartError: "refused"}, KindNotRun, "not run", ""},
		{"issue 31: stopped answering", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z", Errors: []string{"b: EOF"}}, Inconclusive,
			"inconclusive: the backend stopped answering at 2026-01-02T03:04:05Z, so its run stopped before its end; so far", "not run"},
		{"issue 31: stopped answering after a failure", []RuleCell{cell(core, fail), cell(ext, dec(Error, false, false))}, Backend{StoppedAnswering: "2026-01-02T03:04:05Z"}, Inconclusive,
			"stopped answering at 2026-01-02T03:04:05Z, so its run stopped before its end; so far does not conform", ""},
		{"issue 31: hundreds of errors make a short sentence", []RuleCell{cell(core, pass), cell(ext, dec(Error, false, false))},
			Backend{Errors: []string{strings.Repeat("x", 500), "b", "c", "d"}, ErrorCount: 170}, Inconclusive, "; and 167 more", strings.Repeat("x", 121)},

		// A verdict claims only what ran: core conformance only when every core MUST rule
		// ran and passed, and a selection is said to be one.
		{"filtered", []RuleCell{cell(core, pass), cell(ext, leftOut)}, filtered, ConformsOn,
			"conforms on the 1 selected MUST rules; the verdict covers only the selection, 1 of the catalogue's 2 MUST rules (filter area:x)", ""},
		{"filtered, a selected rule blocked", []RuleCell{cell(core, pass), cell(core2, dec(Blocked, false, true)), cell(ext, leftOut)}, filtered, ConformsOn,
			"conforms on 1 of the 2 selected MUST rules; 1 selected MUST rules not judged (skipped, partial or blocked); the verdict covers only the selection, 2 of the catalogue's 3 MUST rules (filter area:x)", ""},
		{"filtered to an extended feature that fails: no core rule ran, no core claim", []RuleCell{cell(core, leftOut), cell(ext, fail), cell(ext2, leftOut)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 0 of the 1 selected MUST rules; the verdict covers only the selection, 1 of the catalogue's 3 MUST rules (filter area:x)", "core"},
		{"filtered, some core rules ran and passed, an extended one fails: core is not claimed", []RuleCell{cell(core, pass), cell(core2, leftOut), cell(ext, fail)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 1 of the 2 selected MUST rules; the verdict covers only the selection", "core"},
		{"filtered, every core rule ran and passed, an extended one fails", []RuleCell{cell(core, pass), cell(ext, fail), cell(ext2, leftOut)}, filtered, ConformsToCore,
			"conforms to core: all 1 core MUST rules ran and passed; 1 MUST rules of extended features fail (sas); passed 1 of the 2 selected MUST rules; the verdict covers only the selection", ""},
		{"a core rule blocked, an extended one fails: core is not claimed", []RuleCell{cell(core, dec(Blocked, false, true)), cell(ext, fail)}, Backend{}, DoesNotConform,
			"does not conform: 1 MUST rules of extended features fail (sas); passed 0 of 2 MUST rules", "core"},
		{"filtered, a failure of a core rule", []RuleCell{cell(core, fail), cell(ext, leftOut)}, filtered, DoesNotConform,
			"does not conform: 1 MUST rules fail; passed 0 of the 1 selected MUST rules; the verdict covers only the selection", ""},
		{"filtered, errors", []RuleCell{cell(core, dec(Error, false, false)), cell(ext, leftOut)}, Backend{Filter: "area:x", Errors: []string{"a: EOF"}}, Inconclusive,
			"; the verdict covers only the selection, 1 of the catalogue's 2 MUST rules (filter area:x)", ""},
		{"filtered, interrupted", []RuleCell{cell(core, pass), cell(ext, leftOut)}, Backend{Filter: "area:x", Interrupted: true}, KindStopped,
			"so far conforms on the 1 selected MUST rules; the verdict covers only the selection", ""},
		{"a filter of no MUST rule claims nothing", []RuleCell{cell(core, leftOut), cell(ext, leftOut), cell(should, pass)}, Backend{Filter: "level:SHOULD"}, ConformsOn,
			"no MUST rule judged, so no conformance is claimed; the verdict covers only the selection, 0 of the catalogue's 2 MUST rules (filter level:SHOULD)", "conforms on"},
		{"a filter that selects every MUST rule is named", []RuleCell{cell(core, pass), cell(ext, pass), cell(should, leftOut)}, Backend{Filter: "level:MUST"}, Conforms,
			"conforms: all 2 MUST rules ran and passed (filter level:MUST, which selects every MUST rule)", ""},
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
		{"nothing unexpected", []Tally{{}, {}}, false, ExitOK},
		{"an unexpected outcome", []Tally{{}, {Unexpected: 1}}, false, ExitFailed},
		{"a baseline problem", []Tally{{BaselineProblems: 1}}, false, ExitFailed},
		{"errors only", []Tally{{Errors: 2}}, false, ExitInconclusive},
		{"errors and a failure", []Tally{{Errors: 2, Unexpected: 1}}, false, ExitFailed},
		{"updating the baseline", []Tally{{Unexpected: 3}}, true, ExitOK},
		{"updating the baseline, with errors", []Tally{{Unexpected: 3, Errors: 1}}, true, ExitInconclusive},
		{"not started", []Tally{{}, {StartError: true}}, false, ExitUsage},
		{"interrupted", []Tally{{Interrupted: true, Unexpected: 1}}, false, ExitInterrupted},
		{"issue 31: stopped answering", []Tally{{}, {StoppedAnswering: true}}, false, ExitInconclusive},
		{"issue 31: stopped answering after a failure", []Tally{{StoppedAnswering: true, Unexpected: 2, Errors: 5}}, false, ExitInconclusive},
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
		{ExpectedFail, Fail, "", "", Regressed},
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
