package srcmutate

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Operator names a standard mutation operator (the names follow the usual mutation-testing
// vocabulary, as in PIT and Gremlins).
type Operator string

// The operators. Each rewrites one token (or removes one), so that a mutant is a one-token
// change of the source.
const (
	// ConditionalsBoundary moves a comparison's boundary: < ↔ <=, > ↔ >=.
	ConditionalsBoundary Operator = "conditionals-boundary"
	// ConditionalsNegation negates a comparison: == ↔ !=, < ↔ >=, > ↔ <=.
	ConditionalsNegation Operator = "conditionals-negation"
	// ArithmeticBase swaps arithmetic: + ↔ -, * ↔ /, % → *.
	ArithmeticBase Operator = "arithmetic-base"
	// IncrementDecrement swaps ++ and --.
	IncrementDecrement Operator = "increment-decrement"
	// InvertLogical swaps && and ||.
	InvertLogical Operator = "invert-logical"
	// InvertNegatives removes a unary minus.
	InvertNegatives Operator = "invert-negatives"
	// RemoveNot removes a logical not.
	RemoveNot Operator = "remove-not"
	// InvertBool swaps the literals true and false.
	InvertBool Operator = "invert-bool"
)

// Operators lists every operator, in the order mutants of one position are numbered.
var Operators = []Operator{ConditionalsBoundary, ConditionalsNegation, ArithmeticBase, IncrementDecrement,
	InvertLogical, InvertNegatives, RemoveNot, InvertBool}

// replacements maps an operator and a token to the token it becomes.
var replacements = map[Operator]map[string]string{
	ConditionalsBoundary: {"<": "<=", "<=": "<", ">": ">=", ">=": ">"},
	ConditionalsNegation: {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"},
	ArithmeticBase:       {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
	IncrementDecrement:   {"++": "--", "--": "++"},
	InvertLogical:        {"&&": "||", "||": "&&"},
	InvertNegatives:      {"-": ""},
	RemoveNot:            {"!": ""},
	InvertBool:           {"true": "false", "false": "true"},
}

// Mutant is one change of one file: the text Old at byte Offset becomes New.
type Mutant struct {
	// ID numbers the mutant within its enumeration (files in path order, then positions,
	// then operators), so that a sample names the same mutants on every machine.
	ID       int      `json:"id"`
	File     string   `json:"file"` // slash-separated, relative to the module root
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Offset   int      `json:"offset"`
	Operator Operator `json:"operator"`
	Old      string   `json:"old"`
	New      string   `json:"new"`
	// Context is the mutated source line, before and after, for the person judging a survivor.
	Before string `json:"before"`
	After  string `json:"after"`
}

// String names the mutant as file:line:column operator old → new.
func (m Mutant) String() string {
	return fmt.Sprintf("#%d %s:%d:%d %s %q → %q", m.ID, m.File, m.Line, m.Column, m.Operator, m.Old, m.New)
}

// Apply returns src with the mutant's change made. It refuses a source whose text at the
// mutant's offset is not the mutant's Old text (the file changed since enumeration).
func Apply(src []byte, m Mutant) ([]byte, error) {
	end := m.Offset + len(m.Old)
	if m.Offset < 0 || end > len(src) || string(src[m.Offset:end]) != m.Old {
		return nil, fmt.Errorf("mutant %s: the source no longer has %q at offset %d", m, m.Old, m.Offset)
	}
	out := make([]byte, 0, len(src)+len(m.New))
	out = append(out, src[:m.Offset]...)
	out = append(out, m.New...)
	return append(out, src[end:]...), nil
}

// Enumerate lists the mutants of the non-test Go files directly in each of dirs (relative to
// root, slash-separated). A directory ending in "/..." includes its subdirectories. Files are
// visited in path order, so IDs are stable for a given source.
func Enumerate(root string, dirs []string) ([]Mutant, error) {
	var files []string
	for _, d := range dirs {
		recursive := strings.HasSuffix(d, "/...")
		d = strings.TrimSuffix(d, "/...")
		base := filepath.Join(root, filepath.FromSlash(d))
		if _, err := os.Stat(base); err != nil && recursive && errors.Is(err, fs.ErrNotExist) {
			continue // an optional subtree, such as internal/... where there is none yet
		}
		err := filepath.WalkDir(base, func(path string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if path != base && (!recursive || e.Name() == "testdata" || strings.HasPrefix(e.Name(), ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", d, err)
		}
	}
	sort.Strings(files)
	files = slices.Compact(files)
	var all []Mutant
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		ms, err := FileMutants(f, src)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			m.ID = len(all) + 1
			all = append(all, m)
		}
	}
	return all, nil
}

// FileMutants lists the mutants of one file's source, in source order. Generated files have
// none. Mutants that cannot compile for want of types (a string concatenation turned into a
// subtraction) are left out where the syntax shows it; the rest are discarded when a mutant
// fails to build.
func FileMutants(name string, src []byte) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []Mutant
	add := func(pos token.Pos, old string, ops ...Operator) {
		p := fset.Position(pos)
		for _, op := range ops {
			repl, ok := replacements[op][old]
			if !ok {
				continue
			}
			m := Mutant{File: name, Line: p.Line, Column: p.Column, Offset: p.Offset, Operator: op, Old: old, New: repl}
			line := lineAt(src, p.Offset)
			m.Before = strings.TrimSpace(string(line.text))
			mutated, _ := Apply(src, m)
			m.After = strings.TrimSpace(string(lineAt(mutated, line.start).text))
			out = append(out, m)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			// Constants and imports are data; their mutants mostly change a limit the
			// catalogue states once, or do not compile.
			return n.Tok != token.CONST && n.Tok != token.IMPORT
		case *ast.ArrayType:
			return false // array lengths must stay constant and non-negative
		case *ast.BinaryExpr:
			if (n.Op == token.ADD) && (isStringLit(n.X) || isStringLit(n.Y)) {
				return true
			}
			add(n.OpPos, n.Op.String(), ConditionalsBoundary, ConditionalsNegation, ArithmeticBase, InvertLogical)
		case *ast.IncDecStmt:
			add(n.TokPos, n.Tok.String(), IncrementDecrement)
		case *ast.UnaryExpr:
			switch n.Op {
			case token.SUB:
				add(n.OpPos, "-", InvertNegatives)
			case token.NOT:
				add(n.OpPos, "!", RemoveNot)
			}
		case *ast.Ident:
			if n.Name == "true" || n.Name == "false" {
				add(n.NamePos, n.Name, InvertBool)
			}
		}
		return true
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, nil
}

func isStringLit(e ast.Expr) bool {
	b, ok := ast.Unparen(e).(*ast.BasicLit)
	return ok && (b.Kind == token.STRING || b.Kind == token.CHAR)
}

type sourceLine struct {
	start int
	text  []byte
}

func lineAt(src []byte, offset int) sourceLine {
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := bytes.IndexByte(src[offset:], '\n')
	if end < 0 {
		end = len(src) - offset
	}
	return sourceLine{start: start, text: src[start : offset+end]}
}

// Sample picks n of ms at random with the given seed, returned in ID order. The same ms,
// n and seed give the same sample on every machine and Go version (math/rand/v2's PCG).
// n <= 0 or n >= len(ms) returns all of ms.
func Sample(ms []Mutant, n int, seed uint64) []Mutant {
	if n <= 0 || n >= len(ms) {
		return slices.Clone(ms)
	}
	rng := rand.New(rand.NewPCG(seed, 0x636f6e666f726d)) // second word: "conform"
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	// Fisher-Yates written out: rand.Shuffle's algorithm is not promised to stay the same.
	for i := len(idx) - 1; i > 0; i-- {
		j := int(rng.Uint64() % uint64(i+1))
		idx[i], idx[j] = idx[j], idx[i]
	}
	picked := idx[:n]
	sort.Ints(picked)
	out := make([]Mutant, n)
	for i, k := range picked {
		out[i] = ms[k]
	}
	return out
}
