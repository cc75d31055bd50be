package verdict

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/spec"
)

// The passing and the failing sentences count over one denominator, the applicable MUST
// rules, and say how many the profile does not support (issue 31, item 12).
func TestSentencesShareTheApplicableDenominator(t *testing.T) {
	core, core2, ext := mustRule("a", ""), mustRule("d", spec.Core), mustRule("b", "sas")
	cell := func(r spec.Rule, d Decision) RuleCell { return RuleCell{Rule: r, Cell: d} }
	na := dec(NotApplicable, false, false)
	failing := Judge([]RuleCell{cell(core, dec(Pass, false, false)), cell(core2, dec(Fail, true, true)), cell(ext, na)}, Backend{})
	if want := "passed 1 of 2 applicable MUST rules (1 not applicable to the profile)"; !strings.Contains(failing.Sentence, want) {
		t.Errorf("failing: %q, want it to say %q", failing.Sentence, want)
	}
	passing := Judge([]RuleCell{cell(core, dec(Pass, false, false)), cell(core2, dec(Pass, false, false)), cell(ext, na)}, Backend{})
	if want := "conforms: all 2 applicable MUST rules ran and passed (1 not applicable to the profile)"; passing.Sentence != want {
		t.Errorf("passing: %q, want %q", passing.Sentence, want)
	}
}

// A MUST rule that passed where its baseline expected a failure behaved as the rule says:
// it is passed, never explained as skipped, partly run or blocked (issue 31, item 12); the
// stale baseline fails the run through Exit.
func TestAnUnexpectedPassIsAPassOfTheRule(t *testing.T) {
	core, ext := mustRule("a", ""), mustRule("b", "sas")
	v := Judge([]RuleCell{{Rule: core, Cell: dec(Pass, false, false)}, {Rule: ext, Cell: dec(UnexpectedPass, false, true)}}, Backend{})
	if v.Kind != Conforms || v.Coverage.Passed != 2 || v.Coverage.Unjudged != 0 || strings.Contains(v.Sentence, "skipped") {
		t.Errorf("got %s %q, coverage %+v", v.Kind, v.Sentence, v.Coverage)
	}
	if Exit([]Tally{{Unexpected: 1}}, false) != ExitFailed {
		t.Error("an unexpected pass must still fail the run")
	}
}

// No verdict sentence contradicts its own counts: over every combination of outcomes of
// three MUST rules, with and without a filter, an interruption and a transport error, the
// numbers a sentence says are the coverage's, and passed, failing and not judged add up to
// the applicable rules it counts over.
func TestNoSentenceContradictsItsCounts(t *testing.T) {
	rules := []spec.Rule{mustRule("a", ""), mustRule("d", spec.Core), mustRule("b", "sas")}
	outcomes := []Decision{
		dec(Pass, false, false), dec(Fail, true, true), dec(ExpectedFail, true, false), dec(Blocked, false, true),
		dec(NotApplicable, false, false), dec(UnexpectedPass, false, true), dec(Skipped, false, false),
		dec(DocumentedDiff, false, false), dec(Partial, false, false), dec(Error, false, false), {Outcome: Skipped},
	}
	backends := []Backend{{}, {Filter: "area:x"}, {Interrupted: true}, {Errors: []string{"a: EOF"}}}
	n := len(outcomes)
	for i := 0; i < n*n*n; i++ {
		cells := []RuleCell{{rules[0], outcomes[i%n]}, {rules[1], outcomes[i/n%n]}, {rules[2], outcomes[i/n/n]}}
		for _, b := range backends {
			v := Judge(cells, b)
			if err := sentenceAgrees(v); err != nil {
				t.Fatalf("%v: %s %q, coverage %+v", err, v.Kind, v.Sentence, v.Coverage)
			}
		}
	}
}

var (
	passedOf      = regexp.MustCompile(`(?:passed|conforms on) (\d+) of (?:the )?(\d+) (?:selected )?applicable MUST rules`)
	allOf         = regexp.MustCompile(`(?:conforms: all|conforms on the) (\d+) (?:selected )?applicable MUST rules`)
	notJudged     = regexp.MustCompile(`(\d+) applicable MUST rules not judged`)
	notApplicable = regexp.MustCompile(`\((\d+) not applicable to the profile\)`)
	leftOut       = regexp.MustCompile(`(\d+) left out by the filter`)
)

// sentenceAgrees checks the numbers of a verdict's sentence against its coverage.
func sentenceAgrees(v Verdict) error {
	c, s := v.Coverage, v.Sentence
	number := func(re *regexp.Regexp, group int) (int, bool) {
		m := re.FindStringSubmatch(s)
		if m == nil {
			return 0, false
		}
		x, _ := strconv.Atoi(m[group])
		return x, true
	}
	applicable := c.Selected - c.NotApplicable
	passed, ok := number(passedOf, 1)
	of, _ := number(passedOf, 2)
	if !ok {
		if all, found := number(allOf, 1); found {
			passed, of, ok = all, all, true
		}
	}
	switch {
	case !ok && !(c.Passed == 0 && c.Unjudged == 0 && c.Failing == 0 && strings.Contains(s, "no MUST rule judged")):
		return fmt.Errorf("the sentence says no passed count")
	case ok && (passed != c.Passed || of != applicable):
		return fmt.Errorf("says %d of %d, the coverage %d of %d applicable", passed, of, c.Passed, applicable)
	case c.Passed+c.Failing+c.Unjudged != applicable:
		return fmt.Errorf("the coverage does not add up")
	case strings.Contains(s, "skipped, partial or blocked"):
		return fmt.Errorf("an old explanation")
	}
	if x, found := number(notJudged, 1); x != c.Unjudged || found != (c.Unjudged > 0) {
		return fmt.Errorf("says %d not judged, the coverage %d", x, c.Unjudged)
	}
	if x, found := number(notApplicable, 1); x != c.NotApplicable || found != (c.NotApplicable > 0) {
		return fmt.Errorf("says %d not applicable, the coverage %d", x, c.NotApplicable)
	}
	if x, found := number(leftOut, 1); found != (c.Partial() && c.Filter != "") || found && x != c.MustRules-c.Selected {
		return fmt.Errorf("says %d left out by the filter, the coverage %d of %d selected", x, c.Selected, c.MustRules)
	}
	return nil
}
