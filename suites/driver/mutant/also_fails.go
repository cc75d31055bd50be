package mutant

import (
	"fmt"

	"github.com/tableconform/conform/reference/spec"
)

// alsoFailsDeclared gathers what declareAlsoFails was given, in every file of the package;
// init applies it to the registered mutants.
var alsoFailsDeclared []map[string]map[string]string

// declareAlsoFails declares, for mutants written elsewhere in this package, the rules their
// fault breaks besides their Breaks, each with why: over the whole catalogue these may fail
// against the mutant. A rule that fails and is declared nowhere is a failure blamed on a
// rule whose subject the mutant did not break. (A mutant may also set AlsoFails itself.)
// Each file of declarations calls it once, as `var _ = declareAlsoFails(...)`.
func declareAlsoFails(m map[string]map[string]string) bool {
	alsoFailsDeclared = append(alsoFailsDeclared, m)
	return true
}

var _ = declareAlsoFails(map[string]map[string]string{
	"continuation-dropped": {
		"pagination.resume":               "resuming needs the continuation the mutant drops",
		"pagination.resume-after-delete":  "resuming needs the continuation the mutant drops",
		"pagination.resume-after-insert":  "resuming needs the continuation the mutant drops",
		"pagination.resume-reads-current": "resuming needs the continuation the mutant drops",
		"pagination.options-resent":       "the options are resent with a continuation the mutant drops",
		"pattern.impl.saved-continuation": "a saved continuation is one the mutant never sends",
		"pattern.impl.segments":           "a query read in segments follows the continuations the mutant drops",
		"pattern.log-tail.next-page":      "the next page of the log tail is reached by the continuation the mutant drops",
	},
	"top-ignored": {
		"query.top.zero": "$top=0 is an invalid value, which the mutant accepts",
		"query.top.fill": "a page of a query with $top holds more than $top entities",
	},
	"timestamp-local-time": {
		"query.filter.timestamp": "the rule's values are the Timestamps queries return, which the mutant shifts by an hour from the stored ones",
	},
})

func init() {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, declared := range alsoFailsDeclared {
		for name, rules := range declared {
			m, ok := registry[name]
			if !ok {
				panic(fmt.Sprintf("mutant: alsoFails names unknown mutant %q", name))
			}
			if m.AlsoFails == nil {
				m.AlsoFails = map[string]string{}
			}
			for id, why := range rules {
				if _, ok := spec.LookupRule(id); !ok {
					panic(fmt.Sprintf("mutant %s: alsoFails names unknown rule %q", name, id))
				}
				if _, twice := m.AlsoFails[id]; twice {
					panic(fmt.Sprintf("mutant %s: rule %s is declared twice in alsoFails", name, id))
				}
				m.AlsoFails[id] = why
			}
			registry[name] = m
		}
	}
}
