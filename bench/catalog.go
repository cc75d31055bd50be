package bench

import (
	"path"
	"strings"
)

// Catalog returns every case, in report order: the single operations, YCSB A–F under each
// key distribution, then the design guide's patterns. large selects the larger data sets;
// cases marked Large are included only then.
func Catalog(large bool) []Case {
	var all []Case
	all = append(all, OperationCases(large)...)
	all = append(all, YCSBCases(large)...)
	all = append(all, GuideCases(large)...)
	if large {
		return all
	}
	out := all[:0]
	for _, c := range all {
		if !c.Large {
			out = append(out, c)
		}
	}
	return out
}

// CasesOf returns the cases of one family.
func CasesOf(family string, large bool) []Case {
	var out []Case
	for _, c := range Catalog(large) {
		if c.Family == family {
			out = append(out, c)
		}
	}
	return out
}

// Select returns the cases that match any of patterns: a tag ("ops", "ycsb", "guide"), a
// family ("PointGet"), or a glob over case names ("YCSB/workload=A/*"), compared without
// regard to case. No pattern selects every case.
func Select(cases []Case, patterns []string) []Case {
	if len(patterns) == 0 {
		return cases
	}
	var out []Case
	for _, c := range cases {
		for _, p := range patterns {
			if matches(c, p) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

func matches(c Case, pattern string) bool {
	p := strings.ToLower(strings.TrimSpace(pattern))
	if p == "" {
		return false
	}
	if p == "all" || c.HasTag(p) || p == strings.ToLower(c.Family) {
		return true
	}
	name := strings.ToLower(c.Name())
	if name == p || strings.HasPrefix(name, p+"/") {
		return true
	}
	ok, err := path.Match(p, name)
	return err == nil && ok
}

// ServerInProcess reports whether the backend named target runs its server in the
// benchmark's own process: the reference, in process or behind its HTTP server.
func ServerInProcess(target string) bool {
	return target == "reference" || target == "reference-http"
}
