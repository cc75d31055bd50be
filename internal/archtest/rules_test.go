package archtest

import "strings"

// The rules of conform's layout, each checked against everything a package reaches through
// its production imports, not only what it imports itself.

// under says p is the package prefix or one below it.
func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }

func oneOf(names ...string) func(string) bool {
	return func(p string) bool {
		for _, n := range names {
			if p == n {
				return true
			}
		}
		return false
	}
}

// infrastructure are the packages under suites/ that are not spec packages.
var infrastructure = map[string]bool{"driver": true, "provision": true, "framework": true, "matchers": true, "scenario": true, "report": true, "all": true, "replay": true, "verdict": true}

// isSpecPackage says p is a spec package: suites/<area> other than the infrastructure.
func isSpecPackage(p string) bool {
	rest, ok := strings.CutPrefix(p, "suites/")
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(rest, "/")
	return !infrastructure[top]
}

// storageEngine is the reference's storage engine.
const storageEngine = "reference/internal/store"

// beyondContract says d is a reference package other than the contract (reference/api,
// reference/spec): the model, its protocol, its server, its storage.
func beyondContract(d dependency) bool {
	return d.Own && under(d.Path, "reference") && d.Path != "reference/api" && d.Path != "reference/spec"
}

// driverImplementation says d is a backend implementation or decorator under suites/driver,
// other than the recorder every backend is wrapped in by the framework.
func driverImplementation(d dependency) bool {
	return d.Own && strings.HasPrefix(d.Path, "suites/driver/") && !under(d.Path, "suites/driver/record")
}

func own(d dependency, packages ...string) bool {
	if !d.Own {
		return false
	}
	for _, p := range packages {
		if under(d.Path, p) {
			return true
		}
	}
	return false
}

var rules = []rule{
	{
		Name:      "commands",
		AppliesTo: func(string) bool { return true },
		Forbids:   func(_ string, d dependency) bool { return own(d, "cmd") },
		Why:       "nothing imports a command",
	},
	{
		Name:      "test seeds",
		AppliesTo: func(string) bool { return true },
		Forbids:   func(_ string, d dependency) bool { return own(d, "internal/testseed") },
		Why:       "only tests take a seed from internal/testseed",
	},
	{
		Name:      "contract reference/spec",
		AppliesTo: oneOf("reference/spec"),
		Forbids:   func(_ string, d dependency) bool { return !d.stdlib() },
		Why:       "the contract imports only the standard library",
	},
	{
		Name:      "contract reference/api",
		AppliesTo: oneOf("reference/api"),
		Forbids:   func(_ string, d dependency) bool { return !d.stdlib() && d.Path != "reference/spec" },
		Why:       "the contract imports only the standard library and reference/spec",
	},
	{
		Name:      "leaves over the contract",
		AppliesTo: oneOf("reference/odata", "reference/wire", "fixtures", "suites/driver"),
		Forbids: func(_ string, d dependency) bool {
			return !d.stdlib() && d.Path != "reference/api" && d.Path != "reference/spec"
		},
		Why: "the filter grammar, the wire protocol, the fixtures and the backend interface import only the standard library and the contract, so that any side may use them",
	},
	{
		Name:      "reference",
		AppliesTo: func(p string) bool { return under(p, "reference") },
		Forbids:   func(_ string, d dependency) bool { return own(d, "suites", "bench", "internal") },
		Why:       "the reference does not know the suites, the benchmarks or the project's tools",
	},
	{
		Name:      "storage engine",
		AppliesTo: oneOf(storageEngine),
		Forbids: func(_ string, d dependency) bool {
			if d.stdlib() || d.Path == "github.com/tidwall/btree" || d.Path == "reference/api" {
				return false
			}
			return d.Path != "reference/spec" || len(d.Via) == 2 // the contract's data only through api
		},
		Why: "the storage engine decides no rule: it imports only the standard library, tidwall/btree and the shapes of the contract (reference/api)",
	},
	{
		Name:      "storage engine importers",
		AppliesTo: func(p string) bool { return p != "reference" },
		Forbids:   func(_ string, d dependency) bool { return d.Path == storageEngine && len(d.Via) == 2 },
		Why:       "the storage engine lies behind the reference's rules: only package reference imports it",
	},
	{
		Name:      "spec packages",
		AppliesTo: isSpecPackage,
		Forbids: func(p string, d dependency) bool {
			return beyondContract(d) || driverImplementation(d) ||
				own(d, "suites/provision", "suites/report", "suites/all") ||
				d.Own && isSpecPackage(d.Path) && !under(d.Path, p)
		},
		Why: "specs see only the backend interface, get their backend from the framework, and do not depend on each other",
	},
	{
		Name:      "framework",
		AppliesTo: func(p string) bool { return under(p, "suites/framework") },
		Forbids: func(_ string, d dependency) bool {
			return beyondContract(d) || driverImplementation(d) || d.Own && isSpecPackage(d.Path) ||
				own(d, "suites/provision", "suites/report", "suites/scenario", "suites/matchers", "suites/all")
		},
		Why: "the framework runs specs against a backend it is given: it neither opens nor implements one, and knows no spec, helper or report",
	},
	{
		Name:      "matchers",
		AppliesTo: func(p string) bool { return under(p, "suites/matchers") },
		Forbids: func(_ string, d dependency) bool {
			return beyondContract(d) || driverImplementation(d) || d.Own && isSpecPackage(d.Path) ||
				own(d, "suites/provision", "suites/report", "suites/scenario", "suites/framework", "suites/all") ||
				strings.HasPrefix(d.Path, "github.com/onsi/ginkgo")
		},
		Why: "matchers judge values and errors with Gomega: they declare, run and open nothing",
	},
	{
		Name:      "scenario",
		AppliesTo: func(p string) bool { return under(p, "suites/scenario") },
		Forbids: func(_ string, d dependency) bool {
			return beyondContract(d) || driverImplementation(d) || d.Own && isSpecPackage(d.Path) ||
				own(d, "suites/provision", "suites/report", "suites/all")
		},
		Why: "scenario helpers drive the backend interface for specs: they see what specs see",
	},
	{
		Name:      "report",
		AppliesTo: func(p string) bool { return under(p, "suites/report") },
		Forbids: func(_ string, d dependency) bool {
			return beyondContract(d) || driverImplementation(d) || d.Own && isSpecPackage(d.Path) ||
				own(d, "suites/provision", "suites/scenario", "suites/matchers", "suites/all")
		},
		Why: "the report reads outcomes and the catalogue: it runs, opens and judges no backend",
	},
	{
		Name:      "verdict",
		AppliesTo: func(p string) bool { return under(p, "suites/verdict") },
		Forbids: func(_ string, d dependency) bool {
			return !d.stdlib() && d.Path != "reference/spec" && d.Path != "reference/api" && d.Path != "fixtures"
		},
		Why: "the verdict is pure functions over the contract and the baselines: it runs, opens and records nothing",
	},
	{
		Name:      "explore",
		AppliesTo: func(p string) bool { return under(p, "explore") },
		Forbids: func(_ string, d dependency) bool {
			return !d.stdlib() && d.Path != "pgregory.net/rapid" && !own(d, "reference/api", "reference/spec", "fixtures", "suites/driver", "explore") ||
				driverImplementation(d)
		},
		Why: "explore drives backends through the backend interface and draws with rapid: it opens, implements and records none",
	},
	{
		Name:      "drivers",
		AppliesTo: func(p string) bool { return strings.HasPrefix(p, "suites/driver/") },
		Forbids: func(p string, d dependency) bool {
			model := d.Own && d.Path == "reference" && p != "suites/driver/inproc"
			return model || own(d, "reference/tableserver", "reference/persist", "reference/linearizability") ||
				d.Own && isSpecPackage(d.Path) ||
				own(d, "suites/framework", "suites/provision", "suites/report", "suites/scenario", "suites/matchers", "suites/all")
		},
		Why: "a driver speaks to a backend through the contract and the protocol packages; only inproc holds the model, and no driver knows the suites",
	},
}
