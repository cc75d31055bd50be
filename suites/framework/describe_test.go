package framework

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every spec's boolean check says what it checks: Expect(x).To(BeTrue()) fails with
// Gomega's "Expected <bool>: false to be true", which a report cell cannot turn into words
// about the backend (issue 34, item 6). The check needs a description after the matcher.
func TestSpecsDescribeTheirBooleanChecks(t *testing.T) {
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(fset, file, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !assertion[sel.Sel.Name] || len(call.Args) != 1 {
					return true
				}
				m, ok := call.Args[0].(*ast.CallExpr)
				if !ok {
					return true
				}
				if id, ok := m.Fun.(*ast.Ident); ok && (id.Name == "BeTrue" || id.Name == "BeFalse") {
					t.Errorf("%s: %s(%s()) without a description: the report could only say \"false, expected true\"", fset.Position(call.Pos()), sel.Sel.Name, id.Name)
				}
				return true
			})
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("only %d folders under suites/: the spec packages were not found", len(dirs))
	}
}

// assertion are Gomega's methods that take a matcher and an optional description.
var assertion = map[string]bool{"To": true, "NotTo": true, "ToNot": true, "Should": true, "ShouldNot": true}
