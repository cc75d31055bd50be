package explore

import (
	"os"
	"testing"

	"github.com/tableconform/conform/suites/driver/mutant"
)

// allMutantsEnv, set to "all", runs TestExploreFindsEveryReachableMutant (make test-all).
const allMutantsEnv = "CONFORM_EXPLORE_MUTANTS"

// mutantOps bounds the exploration of one mutant: 3000 operations, a few seconds in process.
const mutantOps = 3000

// unreachable lists the mutants whose fault lies outside what explore draws or compares, each
// with the reason. Mutants that need an HTTP base (SAS, ACLs, raw protocol) and transport
// mutants are left out by their declaration, not listed here.
var unreachable = map[string]string{}

// Every mutant whose fault lies in what explore draws is found within mutantOps operations
// and shrunk to a handful of operations.
func TestExploreFindsEveryReachableMutant(t *testing.T) {
	if os.Getenv(allMutantsEnv) != "all" {
		t.Skipf("set %s=all to explore every mutant (make test-all does; about 15 minutes)", allMutantsEnv)
	}
	for _, m := range mutant.All() {
		switch {
		case m.Base != "":
			continue // it needs an HTTP base: auth, ACLs, the raw protocol
		case m.Transport:
			continue // a transport fault is never a difference
		}
		if why, ok := unreachable[m.Name]; ok {
			t.Logf("%s: not explored: %s", m.Name, why)
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			res := exploreMutant(t, m.Name, mutantOps)
			if len(res.Differences) == 0 {
				t.Fatalf("no difference in %d sequences, %d operations", res.Sequences, res.Operations)
			}
			d := res.Differences[0]
			if len(d.Ops) > maxShrunkOps+1 {
				t.Errorf("shrunk to %d operations:\n%s", len(d.Ops), d.Script(res.Explored, res.Against, res.Config.Tables))
			}
			t.Logf("found after %d operations, shrunk to %d: %s; %s", res.Operations, len(d.Ops), d.Signature, d.Coverage)
		})
	}
}
