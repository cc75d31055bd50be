package archtest

import (
	"sort"
	"strings"
)

// A graph maps each of conform's packages (by its path inside the module, "" for the root)
// to what it imports: conform's packages by their path inside the module, everything else by
// its import path. Only production imports count: a test may reach further (the reference's
// tests drive it through the REST driver) without changing what a program links.
type graph map[string][]string

// A dependency is a package a package reaches, directly or through others.
type dependency struct {
	// Path is conform's package path inside the module, or another module's import path.
	Path string
	// Own says the package is conform's.
	Own bool
	// Via is the chain of imports that reaches it, from the importing package to Path.
	Via []string
}

// stdlib says an outside import path is the standard library's (no dot in its first
// element).
func (d dependency) stdlib() bool {
	return !d.Own && !strings.Contains(strings.Split(d.Path, "/")[0], ".")
}

func (d dependency) chain() string { return strings.Join(d.Via, " -> ") }

// closure returns every package p reaches through the production imports, each with the
// shortest chain that reaches it, ordered by path. Outside packages are leaves: their own
// imports are not conform's concern.
func (g graph) closure(p string) []dependency {
	seen := map[string]bool{p: true}
	var out []dependency
	queue := [][]string{{p}}
	for len(queue) > 0 {
		chain := queue[0]
		queue = queue[1:]
		for _, imp := range g[chain[len(chain)-1]] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			via := append(append([]string(nil), chain...), imp)
			_, own := g[imp]
			out = append(out, dependency{Path: imp, Own: own, Via: via})
			if own {
				queue = append(queue, via)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// A rule forbids the packages it applies to from reaching some packages, directly or
// through others.
type rule struct {
	// Name says whom the rule binds, as doc.go says it.
	Name string
	// AppliesTo selects the packages the rule binds.
	AppliesTo func(pkg string) bool
	// Forbids says a dependency breaks the rule.
	Forbids func(pkg string, dep dependency) bool
	// Why is the layout's promise the rule keeps.
	Why string
}

// A violation is one package reaching one forbidden dependency.
type violation struct {
	Rule string
	Pkg  string
	Dep  dependency
	Why  string
}

func (v violation) String() string {
	return v.Rule + ": " + v.Pkg + " reaches " + v.Dep.Path + " (" + v.Dep.chain() + "): " + v.Why
}

// check returns every violation of rules in g, ordered by package and dependency.
func check(g graph, rules []rule) []violation {
	pkgs := make([]string, 0, len(g))
	for p := range g {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	var out []violation
	for _, p := range pkgs {
		deps := g.closure(p)
		for _, r := range rules {
			if !r.AppliesTo(p) {
				continue
			}
			for _, d := range deps {
				if r.Forbids(p, d) {
					out = append(out, violation{Rule: r.Name, Pkg: p, Dep: d, Why: r.Why})
				}
			}
		}
	}
	return out
}
