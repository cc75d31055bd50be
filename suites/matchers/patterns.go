package matchers

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"github.com/tableconform/conform/reference/api"
)

// Matchers for the design-guide pattern and relationship specs: query results compared with
// the entities a pattern promises, keys and properties alike.

type matchEntities struct {
	want      []api.Entity
	inOrder   bool
	problem   string
	roundTrip string // the round-trip rule the differences are faults of, if any
}

// MatchEntities succeeds when a []api.Entity holds exactly the wanted entities in the given
// order, each with the wanted keys and exactly the wanted custom properties (types and
// values; Timestamp and ETag ignored).
func MatchEntities(want ...api.Entity) types.GomegaMatcher {
	return &matchEntities{want: want, inOrder: true}
}

// ConsistOfEntities is MatchEntities in any order: each wanted entity once, nothing else.
func ConsistOfEntities(want ...api.Entity) types.GomegaMatcher {
	return &matchEntities{want: want}
}

func (m *matchEntities) Match(actual any) (bool, error) {
	got, ok := actual.([]api.Entity)
	if !ok {
		return false, fmt.Errorf("MatchEntities expects []api.Entity, got %T", actual)
	}
	m.problem, m.roundTrip = "", ""
	if m.inOrder {
		for i := range max(len(got), len(m.want)) {
			switch {
			case i >= len(got):
				m.problem = fmt.Sprintf("entity %d %s is missing", i, m.want[i])
			case i >= len(m.want):
				m.problem = fmt.Sprintf("entity %d %s is not expected", i, got[i])
			default:
				if d := EntityDiff(m.want[i], got[i]); len(d) > 0 {
					m.problem = fmt.Sprintf("entity %d differs: %s", i, strings.Join(d, "; "))
					if rule, ok := roundTripRule(m.want[i], got[i]); ok && len(got) == len(m.want) && m.restMatch(got, i) {
						m.roundTrip = rule
					}
				}
			}
			if m.problem != "" {
				return false, nil
			}
		}
		return true, nil
	}
	byKey := make(map[api.Key]api.Entity, len(m.want))
	for _, w := range m.want {
		byKey[w.Key()] = w
	}
	seen := map[api.Key]bool{}
	var problems []string
	for _, g := range got {
		w, expected := byKey[g.Key()]
		switch {
		case !expected:
			problems = append(problems, fmt.Sprintf("%s is not expected", g))
		case seen[g.Key()]:
			problems = append(problems, fmt.Sprintf("(%q,%q) came back twice", g.PartitionKey, g.RowKey))
		default:
			if d := EntityDiff(w, g); len(d) > 0 {
				problems = append(problems, fmt.Sprintf("(%q,%q) differs: %s", g.PartitionKey, g.RowKey, strings.Join(d, "; ")))
			}
		}
		seen[g.Key()] = true
	}
	for _, w := range m.want {
		if !seen[w.Key()] {
			problems = append(problems, fmt.Sprintf("%s is missing", w))
		}
	}
	if len(problems) > 6 {
		problems = append(problems[:6], fmt.Sprintf("... %d more", len(problems)-6))
	}
	m.problem = strings.Join(problems, "\n  ")
	if m.problem != "" {
		m.roundTrip, _ = entitiesRoundTripRule(m.want, got)
	}
	return m.problem == "", nil
}

// restMatch reports whether the entities after i match those wanted there, or differ only
// by round-trip faults.
func (m *matchEntities) restMatch(got []api.Entity, i int) bool {
	for j := i + 1; j < len(got); j++ {
		if len(EntityDiff(m.want[j], got[j])) > 0 {
			if _, ok := roundTripRule(m.want[j], got[j]); !ok {
				return false
			}
		}
	}
	return true
}

func (m *matchEntities) FailureMessage(actual any) string {
	order := "in any order"
	if m.inOrder {
		order = "in this order"
	}
	return noteRoundTripFault(m.roundTrip, fmt.Sprintf("the rule expects exactly %d entities %s %s; got %s:\n  %s",
		len(m.want), order, KeyList(m.want), KeyList(actual.([]api.Entity)), m.problem))
}

func (m *matchEntities) NegatedFailureMessage(any) string {
	return "expected other entities than " + KeyList(m.want)
}
