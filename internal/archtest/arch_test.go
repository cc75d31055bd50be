package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tableconform/conform"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

func internal(imp string) (string, bool) {
	if imp == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(imp, module+"/")
	return rest, ok
}

// specAreas are the spec packages: suites/<area> except the infrastructure packages.
var infrastructure = map[string]bool{"driver": true, "provision": true, "framework": true, "matchers": true, "scenario": true, "report": true, "all": true, "replay": true}

func isSpecPackage(rel string) bool {
	rest, ok := strings.CutPrefix(rel, "suites/")
	if !ok {
		return false
	}
	top, _, _ := strings.Cut(rest, "/")
	return !infrastructure[top]
}

func TestDependencyDirections(t *testing.T) {
	for _, p := range listPackages(t) {
		rel, _ := internal(p.ImportPath)
		for _, imp := range p.Imports {
			dep, own := internal(imp)
			if !own {
				if (rel == "reference/spec" || rel == "reference/api") && strings.Contains(strings.Split(imp, "/")[0], ".") {
					t.Errorf("%s is the contract and may import only the standard library; it imports %s", rel, imp)
				}
				continue
			}
			switch {
			case strings.HasPrefix(dep, "cmd/"):
				t.Errorf("%s imports %s: nothing imports a command", rel, dep)
			case rel == "reference/spec" && dep != "":
				t.Errorf("reference/spec imports %s: the contract imports only the standard library", dep)
			case rel == "reference/api" && dep != "reference/spec":
				t.Errorf("reference/api imports %s", dep)
			case isSpecPackage(rel) && (dep == "reference" || strings.HasPrefix(dep, "reference/") && dep != "reference/api" && dep != "reference/spec"):
				t.Errorf("spec package %s imports %s: specs see only the backend interface", rel, dep)
			case isSpecPackage(rel) && isSpecPackage(dep):
				t.Errorf("spec package %s imports spec package %s", rel, dep)
			case isSpecPackage(rel) && (strings.HasPrefix(dep, "suites/provision") || strings.HasPrefix(dep, "suites/driver/")):
				t.Errorf("spec package %s imports %s: specs get their backend from the framework", rel, dep)
			case strings.HasPrefix(rel, "suites/framework") && isSpecPackage(dep):
				t.Errorf("the framework imports spec package %s", dep)
			case strings.HasPrefix(rel, "reference") && strings.HasPrefix(dep, "suites/"):
				t.Errorf("%s imports %s: the reference does not know the suites", rel, dep)
			}
		}
	}
}
