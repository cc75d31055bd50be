package srcmutate

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteMarkdown writes a run's summary for people: the score, every mutant's status, the
// survivors with their changed line (to be judged equivalent or a gap in the suite), and
// kills per spec.
func WriteMarkdown(w io.Writer, s Summary) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Source mutation run\n\n")
	p("Mutated: %s. %d mutants enumerated", strings.Join(s.Dirs, ", "), s.Total)
	if s.Sample > 0 {
		p("; a sample of %d with seed %d", len(s.Results), s.Seed)
	}
	p(". Took %.0f s.\n\n", s.Seconds)
	p("**Score: %d killed of %d viable mutants (%.0f%%)**; %d survived, %d not viable (did not compile, discarded).\n\n",
		s.Killed, s.Killed+s.Survived, 100*s.Score(), s.Survived, s.NotViable)
	if len(s.BaseFailures) > 0 {
		p("Specs that failed on the unmutated source (they kill nothing): %s\n\n", strings.Join(s.BaseFailures, "; "))
	}
	p("| # | where | operator | change | status | seconds | killed by |\n|---:|---|---|---|---|---:|---|\n")
	for _, r := range s.Results {
		m := r.Mutant
		by := ""
		if len(r.KilledBy) > 0 {
			by = fmt.Sprintf("%d specs, e.g. `%s`", len(r.KilledBy), mdCell(r.KilledBy[0]))
		}
		p("| %d | `%s:%d` | %s | `%s` → `%s` | %s | %.0f | %s |\n", m.ID, m.File, m.Line, m.Operator, mdCell(m.Old), mdCell(m.New),
			r.Status, r.Seconds, by)
	}
	var survivors []Result
	for _, r := range s.Results {
		if r.Status == Survived {
			survivors = append(survivors, r)
		}
	}
	if len(survivors) > 0 {
		p("\n## Survivors\n")
		for _, r := range survivors {
			m := r.Mutant
			p("\n### #%d %s:%d (%s)\n\n```diff\n- %s\n+ %s\n```\n", m.ID, m.File, m.Line, m.Operator, m.Before, m.After)
		}
	}
	if rules := s.KillsPerRule(); len(rules) > 0 {
		ids := make([]string, 0, len(rules))
		for id := range rules {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool {
			if rules[ids[i]] != rules[ids[j]] {
				return rules[ids[i]] > rules[ids[j]]
			}
			return ids[i] < ids[j]
		})
		p("\n## Kills per rule\n\n%d rules killed at least one mutant.\n\n| mutants killed | rule |\n|---:|---|\n", len(ids))
		for _, id := range ids {
			p("| %d | `%s` |\n", rules[id], id)
		}
	}
	kills := s.KillsPerSpec()
	if len(kills) > 0 {
		specs := make([]string, 0, len(kills))
		for k := range kills {
			specs = append(specs, k)
		}
		sort.Slice(specs, func(i, j int) bool {
			if kills[specs[i]] != kills[specs[j]] {
				return kills[specs[i]] > kills[specs[j]]
			}
			return specs[i] < specs[j]
		})
		p("\n## Kills per spec\n\n| mutants killed | spec |\n|---:|---|\n")
		for _, k := range specs {
			p("| %d | %s |\n", kills[k], mdCell(k))
		}
	}
	return nil
}

func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ", "`", "'").Replace(s)
}
