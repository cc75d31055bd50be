package report

import (
	"strconv"
	"strings"

	"github.com/tableconform/conform/suites/verdict"
)

// AccountChangesVariable is the environment variable that lets the specs that change
// account-wide settings run against an endpoint that is not the reference or an emulator
// (suites/service); without it they are skipped, with a reason that names it.
const AccountChangesVariable = "CONFORM_ALLOW_ACCOUNT_CHANGES"

// RuleOutcome is a rule and its cell's outcome on one backend, with what the backend did.
type RuleOutcome struct {
	ID, Level string
	Outcome   verdict.Outcome
	Words     string
}

// FailingRules lists, in rule order, the rules whose cell on backend bi counts against it
// or judged nothing (failures, unexpected passes, blocked, no answer, interrupted), and,
// separately, the rules that fail as the baseline expects (known divergences, flaky).
func FailingRules(r Report, bi int) (failing, expected []RuleOutcome) {
	for _, row := range r.Rules {
		c := row.Cells[bi]
		ro := RuleOutcome{ID: row.ID, Level: row.Level, Outcome: c.Outcome}
		if sp, ok := decisiveSpec(c); ok {
			ro.Words = SpecWords(sp)
		}
		switch c.Outcome {
		case verdict.Fail, verdict.UnexpectedPass, verdict.Blocked, verdict.Error, verdict.Interrupted:
			failing = append(failing, ro)
		case verdict.ExpectedFail, verdict.Flaky:
			expected = append(expected, ro)
		}
	}
	return failing, expected
}

// PolicySkippedRules lists the rules of backend bi whose specs were skipped because they
// change account-wide settings and AccountChangesVariable was not set.
func PolicySkippedRules(r Report, bi int) []string {
	var ids []string
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			if s.Outcome == verdict.Skipped && strings.Contains(s.SkipReason, AccountChangesVariable) {
				ids = append(ids, row.ID)
				break
			}
		}
	}
	return ids
}

// PolicySkipSentence says why rules were skipped by policy, for the summary and report.md.
func PolicySkipSentence(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return plural(len(ids), "rule") + " not run: " + strings.Join(ids, ", ") + ". They change account-wide settings (service properties, CORS) and run against this endpoint only with " +
		AccountChangesVariable + "=1 (they put the old settings back)."
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// RulesByLevel says how many rules of each level rules holds, naming each level:
// "64 MUST, 8 SHOULD and 2 MAY rules".
func RulesByLevel(rules []RuleOutcome) string {
	n := map[string]int{}
	for _, r := range rules {
		n[r.Level]++
	}
	var parts []string
	for _, l := range levelsOf(n) {
		parts = append(parts, strconv.Itoa(n[l])+" "+l)
	}
	s := strings.Join(parts, ", ")
	if i := strings.LastIndex(s, ", "); i >= 0 {
		s = s[:i] + " and " + s[i+2:]
	}
	if len(rules) == 1 {
		return s + " rule"
	}
	return s + " rules"
}

// BackendCountsInWords says backend bi's rules (or, with specs, the specs of its rules) per
// level and outcome, each part naming its level: "MUST 302 pass · 14 FAIL; SHOULD 21 pass".
func BackendCountsInWords(r Report, bi int, specs bool) string {
	return byLevelInWords(outcomeOrder(r), backendCountsByLevel(r, bi, specs))
}
