package all_test

import (
	"testing"
)

// TestSpecsJudgeOnlyWhatTheyCreated runs the specs of tables and auth (but the ones that
// wait for a deleted table's name) against backends whose fault shows only beside other
// clients' tables or writes, and against their base, and requires that exactly the rules
// each mutant breaks fail (issue 30, items 1 and 2): a Query Tables that also lists tables
// no spec created fails only the rule of its filter, not every rule whose spec lists
// tables; a failed transaction that puts a neighbouring table back fails the isolation
// rule.
func TestSpecsJudgeOnlyWhatTheyCreated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the specs of two areas once per backend")
	}
	if focused() {
		t.Skip("a Ginkgo label filter or focus selects specs")
	}
	filter := "(area:tables || area:auth)"
	for _, id := range slowRules {
		filter += " && !" + id
	}
	names := []string{"tables-filter-ignored", "batch-failure-rolls-back-account"}
	base, runs := runMutantsBesideBase(t, filter, names)
	for i, n := range names {
		expectBlamedExactly(t, n, base, runs[i])
	}
}
