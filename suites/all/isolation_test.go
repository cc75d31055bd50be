package all_test

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tableconform/conform/suites/driver/mutant"
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
	base := &suiteRun{target: mutant.DefaultBase, filter: filter}
	runs := []*suiteRun{base}
	for _, n := range names {
		if _, ok := mutant.Lookup(n); !ok {
			t.Fatalf("no mutant %s", n)
		}
		runs = append(runs, &suiteRun{target: mutant.Prefix + n, filter: filter})
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { runSuite(t.Context(), dir, r) })
	}
	wg.Wait()
	for _, r := range runs {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	for i, n := range names {
		m, _ := mutant.Lookup(n)
		var blamed []string
		for id, o := range runs[i+1].outcomes {
			if failed(o) && passed(base.outcomes[id]) {
				blamed = append(blamed, id)
			}
		}
		sort.Strings(blamed)
		want := slices.Sorted(slices.Values(m.Breaks))
		if !slices.Equal(blamed, want) {
			t.Errorf("mutant %s (%s): the rules that fail are [%s], want exactly [%s]", n, m.Description,
				strings.Join(blamed, ", "), strings.Join(want, ", "))
		}
	}
}
