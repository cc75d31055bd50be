package all_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tableconform/conform/suites/driver/mutant"
	"github.com/tableconform/conform/suites/verdict"
)

// raceCatchRuns is how many times TestRaceRulesCatchUnlockedReadModifyWrite runs the race
// rules' specs against each base; CONFORM_RACE_RUNS changes it.
const raceCatchRuns = 100

// raceCatchRequired is how many of raceCatchRuns runs must catch the mutant: a rule about
// races that passes by luck says nothing.
const raceCatchRequired = 99

// raceAttemptsChoice is what the race specs record their attempts as.
const raceAttemptsChoice = "race attempts"

// TestRaceRulesCatchUnlockedReadModifyWrite runs the specs of the rules about concurrent
// updates raceCatchRuns times against the unlocked-read-modify-write mutant, over the
// reference in process and over HTTP, one process each run, and requires every one of
// those rules to fail in at least raceCatchRequired of them (and to pass on the base).
func TestRaceRulesCatchUnlockedReadModifyWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the race specs a hundred times per base; skipped with -short")
	}
	if os.Getenv("CONFORM_MUTANTS") == "0" {
		t.Skip("CONFORM_MUTANTS=0")
	}
	if focused() {
		t.Skip("a Ginkgo label filter or focus selects specs: this run is about them, not about the mutants")
	}
	runs := raceCatchRuns
	if v := os.Getenv("CONFORM_RACE_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CONFORM_RACE_RUNS=%q: want a positive number of runs", v)
		}
		runs = n
	}
	m, ok := mutant.Lookup("unlocked-read-modify-write")
	if !ok {
		t.Fatal("mutant unlocked-read-modify-write is not registered")
	}
	filter := strings.Join(m.Breaks, " || ")
	dir := t.TempDir()
	for _, base := range []string{"reference", "reference-http"} {
		t.Run(base, func(t *testing.T) {
			baseRun := &suiteRun{target: base, filter: filter}
			runSuite(t.Context(), dir, baseRun)
			if baseRun.err != nil {
				t.Fatal(baseRun.err)
			}
			for _, id := range m.Breaks {
				if o := baseRun.outcomes[id]; !passed(o) {
					t.Fatalf("rule %s is %s on the base %s: the mutant cannot be measured against it", id, o, base)
				}
				// The report says how many times each spec raced.
				for _, s := range baseRun.specs[id] {
					if !slices.ContainsFunc(s.Choices, func(c string) bool { return strings.HasPrefix(c, raceAttemptsChoice+": ") }) {
						t.Errorf("spec %q of %s records no %q: the report cannot say how many times it raced (choices %q)", s.Text, id, raceAttemptsChoice, s.Choices)
					}
				}
			}
			caught := map[string]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			sem := make(chan struct{}, mutationParallel)
			for range runs {
				wg.Go(func() {
					sem <- struct{}{}
					defer func() { <-sem }()
					r := &suiteRun{target: mutant.Prefix + m.Name + "@" + base, filter: filter}
					runSuite(t.Context(), dir, r)
					mu.Lock()
					defer mu.Unlock()
					if r.err != nil {
						t.Error(r.err)
						return
					}
					for _, id := range m.Breaks {
						if r.outcomes[id] == verdict.Fail {
							caught[id]++
						}
					}
				})
			}
			wg.Wait()
			need := (raceCatchRequired*runs + raceCatchRuns - 1) / raceCatchRuns
			for _, id := range m.Breaks {
				t.Logf("%s caught %s over %s in %d of %d runs", id, m.Name, base, caught[id], runs)
				if caught[id] < need {
					t.Errorf("%s caught %s over %s in only %d of %d runs (at least %d required): its race is sampled by luck, not caught",
						id, m.Name, base, caught[id], runs, need)
				}
			}
		})
	}
}
