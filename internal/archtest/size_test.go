package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The line budgets of production code: a file or a function past its budget most often
// does several things, and is split so that each file and function has one reason to
// change, unless oversized says why it is not.
const (
	maxFileLines = 600
	maxFuncLines = 100
)

// oversized lists the production files (by path from the module's root) and functions
// ("path:Name" or "path:Recv.Name") allowed past their budget, each with the reason. An
// entry that no longer exceeds its budget, or names nothing, fails the test too, so that
// the list only shrinks with the code.
var oversized = map[string]string{
	// Being changed elsewhere at the time of the budget; split along the lines issue 37
	// names once those changes land.
	"cmd/conform/runbackend.go:runOneBackend": "to split with run.go (issue 37)",
	"suites/report/write.go:WriteMarkdown":    "one section of the Markdown report after another: to split by section (issue 37)",
	"suites/report/matrix.go:BuildMatrix":     "to split with the report's writers (issue 37)",
	"bench/run.go":                            "the load generator and its workloads: to split when bench/ is next reworked",
	"bench/run.go:Load.Run":                   "the load generator's loop with its pacing and repeats: to split when bench/ is next reworked",
	"bench/report.go:Report.Markdown":         "one table after another: to split when bench/ is next reworked",
	"bench/report.go:Report.SVG":              "one chart, drawn in one pass: to split when bench/ is next reworked",
	"cmd/conform/bench.go":                    "conform bench's command, growth mode, shards and merge: to split with bench/",
	"cmd/conform/bench.go:runBench":           "checks, plans and runs conform bench: to split with bench/",

	// The tuned wire and storage code: each file has one reason (one format, one
	// direction), written as a few hand-tuned loops that the benchmarks and the
	// differential tests hold; splitting them would scatter one format across files.
	"reference/wire/decode.go:document.entityOf": "one entity's members read in one pass, keys, annotations and values together",
	"reference/wire/scan.go":                     "the JSON scanner under decode.go: objects, strings, numbers",
	"reference/wire/flat.go:readFlatEntity":      "the flat entity reader's one loop over an object's members (issue 37 item 1 decides whether it stays)",
	"reference/internal/store/codec.go":          "the stored entity's binary encoding: writing, reading and stamping one body",

	// Drivers and the framework, not split yet.
	"suites/driver/mutant/entities.go": "the mutants that break entities, one small decorator each: to split by rule area",
	"suites/driver/record/record.go":   "the recording driver and what it tells the verdict (writes, retries, answers): to split those apart",
	"suites/framework/framework.go":    "run tables, rule labels, preconditions and the failure handler: to split those apart",
}

// ruleData reports whether path holds rule data (reference/spec/rules_*.go): one AddRules
// call per area, as long as its rules, outside the budgets.
func ruleData(path string) bool {
	return strings.HasPrefix(path, "reference/spec/rules_")
}

// measured is the size of one production file and of each of its functions.
type measured struct {
	path  string
	lines int
	funcs map[string]int // by name, Recv.Name for a method
}

// measure reads the sizes of the Go source src, named path.
func measure(path string, src []byte) (measured, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return measured{}, err
	}
	m := measured{path: path, lines: strings.Count(string(src), "\n"), funcs: map[string]int{}}
	if len(src) > 0 && src[len(src)-1] != '\n' {
		m.lines++
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			name = receiverName(fd.Recv.List[0].Type) + "." + name
		}
		m.funcs[name] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
	}
	return m, nil
}

// receiverName is the name of a method's receiver type, without pointer or type parameters.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// overBudget returns the files and functions of ms past their budget that allowed does not
// list, and the entries of allowed that name nothing past its budget.
func overBudget(ms []measured, allowed map[string]string) []string {
	var found []string
	over := map[string]bool{}
	for _, m := range ms {
		if ruleData(m.path) {
			continue
		}
		if m.lines > maxFileLines {
			over[m.path] = true
			if _, ok := allowed[m.path]; !ok {
				found = append(found, fmt.Sprintf("%s has %d lines (budget %d): split it, or say in oversized why not", m.path, m.lines, maxFileLines))
			}
		}
		for name, n := range m.funcs {
			key := m.path + ":" + name
			if n > maxFuncLines {
				over[key] = true
				if _, ok := allowed[key]; !ok {
					found = append(found, fmt.Sprintf("%s has %d lines (budget %d): split it, or say in oversized why not", key, n, maxFuncLines))
				}
			}
		}
	}
	for key := range allowed {
		if !over[key] {
			found = append(found, fmt.Sprintf("oversized lists %s, which is within its budget or gone: remove the entry", key))
		}
	}
	slices.Sort(found)
	return found
}

// productionFiles measures the module's Go files that are not tests, testdata or generated.
func productionFiles(t *testing.T, root string) []measured {
	t.Helper()
	var ms []measured
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		m, err := measure(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestSizeBudgets(t *testing.T) {
	ms := productionFiles(t, filepath.Join("..", ".."))
	if len(ms) < 100 {
		t.Fatalf("found %d production files", len(ms))
	}
	for _, v := range overBudget(ms, oversized) {
		t.Error(v)
	}
}

// TestSizeBudgetsCatchWhatIsUnlisted checks the checker on made-up sources: a file and a
// function past their budgets are reported unless listed, and a listed entry within its
// budget is reported as stale.
func TestSizeBudgetsCatchWhatIsUnlisted(t *testing.T) {
	long := "package p\n\nfunc Long() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines-1) + "}\n\nfunc (*T) Short() {}\n\ntype T struct{}\n"
	big := "package p\n" + strings.Repeat("// a line\n", maxFileLines)
	var ms []measured
	for path, src := range map[string]string{"a/long.go": long, "a/big.go": big, "reference/spec/rules_x.go": big} {
		m, err := measure(path, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	if n := ms[0].funcs["Long"] + ms[1].funcs["Long"] + ms[2].funcs["Long"]; n != maxFuncLines+1 {
		t.Fatalf("Long measured %d lines, want %d", n, maxFuncLines+1)
	}
	got := overBudget(ms, map[string]string{"a/small.go": "gone"})
	want := []string{
		"a/big.go has 601 lines (budget 600): split it, or say in oversized why not",
		"a/long.go:Long has 101 lines (budget 100): split it, or say in oversized why not",
		"oversized lists a/small.go, which is within its budget or gone: remove the entry",
	}
	if !slices.Equal(got, want) {
		t.Errorf("overBudget:\n got %q\nwant %q", got, want)
	}
	if got := overBudget(ms, map[string]string{"a/big.go": "why", "a/long.go:Long": "why"}); len(got) != 0 {
		t.Errorf("listed entries reported: %q", got)
	}
}
