package explore

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver/mutant"
)

func TestScratchAccuracy(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("SCRATCH_LOG"))
	if err != nil {
		t.Skip()
	}
	run := regexp.MustCompile(`=== RUN   TestExploreFindsEveryReachableMutant/(\S+)`)
	found := regexp.MustCompile(`found after (\d+) operations, shrunk to (\d+): .*; (rule (\S+) covers this|no rule covers this; area (\S+))`)
	name := ""
	var exact, also, other, none, n int
	var wrong []string
	for _, line := range strings.Split(string(data), "\n") {
		if m := run.FindStringSubmatch(line); m != nil {
			name = m[1]
			continue
		}
		m := found.FindStringSubmatch(line)
		if m == nil || name == "" {
			continue
		}
		n++
		mu, _ := mutant.Lookup(name)
		rule := m[4]
		switch {
		case rule == "":
			none++
		case slices.Contains(mu.Breaks, rule):
			exact++
		case mu.AlsoFails[rule] != "":
			also++
		default:
			other++
			wrong = append(wrong, name+": "+rule+" (breaks "+strings.Join(mu.Breaks, ",")+")")
		}
	}
	t.Logf("%d found: %d matched a rule the mutant breaks, %d a rule it also fails, %d another rule, %d no rule", n, exact, also, other, none)
	for _, w := range wrong {
		t.Log(w)
	}
}
