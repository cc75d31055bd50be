package archtest

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tableconform/conform"

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// moduleGraph lists conform's packages with go list and returns their production imports.
func moduleGraph(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := graph{}
	dec := json.NewDecoder(out)
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		imports := make([]string, len(p.Imports))
		for i, imp := range p.Imports {
			imports[i] = inModule(imp)
		}
		g[inModule(p.ImportPath)] = imports
		watch(t, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return g
}

// watch reads the package's directory and its files' metadata, so that go test's cache,
// which sees the files a test opens but not what go list read, runs the test again when
// a file is added, removed or changed.
func watch(t *testing.T, p listedPackage) {
	t.Helper()
	if _, err := os.ReadDir(p.Dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range p.GoFiles {
		if _, err := os.Stat(filepath.Join(p.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
}

// inModule returns a conform import path's path inside the module ("" for the module's
// root), and any other import path unchanged.
func inModule(imp string) string {
	if imp == module {
		return ""
	}
	if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
		return rest
	}
	return imp
}

func TestDependencyDirections(t *testing.T) {
	g := moduleGraph(t)
	if len(g) < 10 {
		t.Fatalf("go list found %d packages", len(g))
	}
	for _, v := range check(g, rules) {
		t.Error(v)
	}
}

// TestCheckerFollowsImportChains checks the checker on a made-up module: a rule broken only
// through a chain of imports is reported with the chain, and a permitted chain is not.
func TestCheckerFollowsImportChains(t *testing.T) {
	g := graph{
		"suites/tables":            {"fmt", "suites/scenario"},
		"suites/scenario":          {"suites/matchers"},
		"suites/matchers":          {"github.com/onsi/gomega", "suites/framework", "reference/wire"},
		"reference/wire":           {"reference/api", "net/http"},
		"reference/api":            {"reference/spec"},
		"reference/spec":           {"fmt"},
		"suites/driver":            {"reference/api"},
		"suites/framework":         {"suites/driver", "github.com/onsi/ginkgo/v2"},
		"suites/driver/record":     {"suites/driver"},
		"suites/report":            {"suites/framework"},
		"reference":                {"reference/api", "reference/odata", "reference/internal/store"},
		"reference/internal/store": {"reference/api", "github.com/tidwall/btree", "reference/odata"},
		"reference/persist":        {"reference", "reference/internal/store"},
		"reference/odata":          {"reference/spec", "github.com/example/leak"},
		"suites/driver/inproc":     {"reference"},
		"suites/driver/mutant":     {"reference/odata"},
		"suites/driver/notmodel":   {"suites/driver/inproc"},
	}
	got := map[string]string{}
	for _, v := range check(g, rules) {
		got[v.Rule+" "+v.Pkg+" "+v.Dep.Path] = v.Dep.chain()
	}
	want := map[string]string{
		// suites/tables imports nothing forbidden itself; it reaches the protocol through
		// two helpers, and each helper on the way is reported too.
		"spec packages suites/tables reference/wire": "suites/tables -> suites/scenario -> suites/matchers -> reference/wire",
		"scenario suites/scenario reference/wire":    "suites/scenario -> suites/matchers -> reference/wire",
		"matchers suites/matchers reference/wire":    "suites/matchers -> reference/wire",
		// A leaf over the contract imports an outside module; the model, which may, reaches
		// it through the leaf and is not reported.
		"leaves over the contract reference/odata github.com/example/leak": "reference/odata -> github.com/example/leak",
		// The storage engine imports a package beyond the contract's shapes, and a package
		// other than the reference imports the engine; the reference and what reaches the
		// engine through it are not reported.
		"storage engine reference/internal/store reference/odata":             "reference/internal/store -> reference/odata",
		"storage engine reference/internal/store github.com/example/leak":     "reference/internal/store -> reference/odata -> github.com/example/leak",
		"storage engine importers reference/persist reference/internal/store": "reference/persist -> reference/internal/store",
		// A driver reaches the model through inproc.
		"drivers suites/driver/notmodel reference": "suites/driver/notmodel -> suites/driver/inproc -> reference",
		// Matchers reach Ginkgo and the framework.
		"matchers suites/matchers suites/framework":          "suites/matchers -> suites/framework",
		"matchers suites/matchers github.com/onsi/ginkgo/v2": "suites/matchers -> suites/framework -> github.com/onsi/ginkgo/v2",
		// Not reported: the framework reaching Ginkgo, a spec package reaching the framework
		// through the helpers, inproc and the mutant reaching the model and odata.
	}
	for k, chain := range want {
		if got[k] != chain {
			t.Errorf("want violation %q via %q; got via %q", k, chain, got[k])
		}
	}
	for k, chain := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected violation %q via %q", k, chain)
		}
	}
}
