package explore

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/reference/api"
)

// Script is the difference as a short script: each step with both backends' answers, the
// one that differs marked.
func (d Difference) Script(explored, against string, tables int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", d.Summary)
	fmt.Fprintf(&b, "# %s vs %s; found by conform explore --seed %d (shrunk from %d operations)\n", explored, against, d.Seed, d.ShrunkFrom)
	fmt.Fprintf(&b, "# %s\n", d.Coverage)
	if d.Known {
		fmt.Fprintf(&b, "# known: %s\n", d.KnownNote)
	}
	if d.Flaky {
		b.WriteString("# flaky: the sequence did not show the difference again, so it was not shrunk\n")
	}
	fmt.Fprintf(&b, "# tables t0..t%d are created first; every answer below is after that\n", tables-1)
	for i, s := range d.Steps {
		mark := " "
		if s.Differs() {
			mark = "!"
		}
		fmt.Fprintf(&b, "%s%d. %s\n", mark, i+1, s.Line)
		fmt.Fprintf(&b, "     %-9s %s\n", explored+":", s.Explored.Text())
		fmt.Fprintf(&b, "     %-9s %s\n", against+":", s.Against.Text())
	}
	return b.String()
}

// GoTest is the difference as a Go test: the minimal sequence as data, run with RunOne
// against the backend under test and compared with the answers of the backend it was
// explored against.
func (d Difference) GoTest(name string, against string, tables int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n// %s; found by conform explore --seed %d.\n", d.Summary, d.Coverage, d.Seed)
	fmt.Fprintf(&b, "// It expects the answers of %s. newBackend is yours: the backend under test.\n", against)
	fmt.Fprintf(&b, "func Test%s(t *testing.T) {\n\tops := []gen.Op{\n", name)
	for _, op := range d.Ops {
		fmt.Fprintf(&b, "\t\t%s,\n", goOp(op))
	}
	b.WriteString("\t}\n\twant := []string{\n")
	for _, s := range d.Steps {
		fmt.Fprintf(&b, "\t\t%s,\n", strconv.Quote(s.Against.Text()))
	}
	fmt.Fprintf(&b, "\t}\n\tgot, err := explore.RunOne(context.Background(), newBackend(t), \"cfexplore\", %d, ops)\n", tables)
	b.WriteString("\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n")
	b.WriteString("\tfor i := range want {\n\t\tif i >= len(got) || got[i].Text() != want[i] {\n")
	b.WriteString("\t\t\tt.Fatalf(\"step %d: want %s\", i+1, want[i])\n\t\t}\n\t}\n}\n")
	return b.String()
}

func goOp(op gen.Op) string {
	parts := []string{"Kind: gen." + kindName(op.Kind)}
	if op.Table != 0 {
		parts = append(parts, "Table: "+strconv.Itoa(op.Table))
	}
	switch op.Kind {
	case gen.Insert, gen.Upsert, gen.Update, gen.Delete, gen.Get:
		parts = append(parts, "Entity: "+goEntity(op.Entity))
	}
	if op.Mode == api.Merge {
		parts = append(parts, "Mode: api.Merge")
	}
	if op.IfMatch != gen.MatchNone {
		parts = append(parts, "IfMatch: "+strconv.Quote(string(op.IfMatch)))
	}
	if op.Select != nil {
		parts = append(parts, "Select: "+goStrings(op.Select))
	}
	if op.Kind == gen.Query {
		q := []string{"Pages: " + strconv.Itoa(op.Query.Pages)}
		if op.Query.Filter != "" {
			q = append(q, "Filter: "+strconv.Quote(op.Query.Filter))
		}
		if n, ok := op.Query.Top.Value(); ok {
			q = append(q, "Top: api.TopOf("+strconv.Itoa(n)+")")
		}
		if op.Query.Select != nil {
			q = append(q, "Select: "+goStrings(op.Query.Select))
		}
		parts = append(parts, "Query: gen.QuerySpec{"+strings.Join(q, ", ")+"}")
	}
	if op.Kind == gen.Batch {
		steps := make([]string, len(op.Steps))
		for i, s := range op.Steps {
			st := "{Kind: api.BatchOpKind(" + strconv.Itoa(int(s.Kind)) + "), Entity: " + goEntity(s.Entity)
			if s.IfMatch != gen.MatchNone {
				st += ", IfMatch: " + strconv.Quote(string(s.IfMatch))
			}
			steps[i] = st + "}"
		}
		parts = append(parts, "Steps: []gen.Step{"+strings.Join(steps, ", ")+"}")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func kindName(k gen.Kind) string {
	var b strings.Builder
	up := true
	for _, c := range string(k) {
		if c == '-' {
			up = true
			continue
		}
		if up {
			c -= 'a' - 'A'
			up = false
		}
		b.WriteRune(c)
	}
	return b.String()
}

func goStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = goString(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

// goString writes s as Go source: a run of one character as strings.Repeat.
func goString(s string) string {
	if len(s) > 64 && strings.Count(s, s[:1]) == len(s) {
		return fmt.Sprintf("strings.Repeat(%q, %d)", s[:1], len(s))
	}
	return strconv.Quote(s)
}

func goEntity(e api.Entity) string {
	if len(e.Properties) == 0 {
		return fmt.Sprintf("api.NewEntity(%s, %s, nil)", goString(e.PartitionKey), goString(e.RowKey))
	}
	props := make([]string, 0, len(e.Properties))
	for _, n := range e.PropertyNames() {
		props = append(props, goString(n)+": "+goValue(e.Properties[n]))
	}
	return fmt.Sprintf("api.NewEntity(%s, %s, map[string]api.Value{%s})", goString(e.PartitionKey), goString(e.RowKey), strings.Join(props, ", "))
}

func goValue(v api.Value) string {
	if v.Null {
		if v.Type == 0 {
			return "api.Null(0)"
		}
		return "api.Null(api." + strings.ReplaceAll(v.Type.String(), ".", "") + ")"
	}
	switch v.Type {
	case api.EdmString:
		return "api.String(" + goString(v.Str) + ")"
	case api.EdmBinary:
		return "api.BinaryString(" + goString(v.Str) + ")"
	case api.EdmBoolean:
		return "api.Bool(" + strconv.FormatBool(v.Bool) + ")"
	case api.EdmDateTime:
		return "api.DateTimeTicks(" + strconv.FormatInt(v.DateTimeTicks(), 10) + ")"
	case api.EdmDouble:
		return fmt.Sprintf("api.Double(math.Float64frombits(%#x))", math.Float64bits(v.Float()))
	case api.EdmGuid:
		return "api.Guid(" + strconv.Quote(v.Str) + ")"
	case api.EdmInt32:
		return "api.Int32(" + strconv.FormatInt(v.Int(), 10) + ")"
	case api.EdmInt64:
		return "api.Int64(" + strconv.FormatInt(v.Int(), 10) + ")"
	}
	return "api.Null(0)"
}

// WriteFiles writes each difference's script and Go test beside the report in dir and adds
// their names to Files.
func (r *Result) WriteFiles(dir string) error {
	for i := range r.Differences {
		d := &r.Differences[i]
		base := fmt.Sprintf("difference-%d", i+1)
		files := map[string]string{
			base + ".txt":         d.Script(r.Explored, r.Against, r.Config.Tables),
			base + "_test.go.txt": d.GoTest(fmt.Sprintf("ExploreDifference%d", i+1), r.Against, r.Config.Tables),
		}
		names := make([]string, 0, len(files))
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
				return err
			}
		}
		d.Files = append(names, d.Files...)
	}
	return nil
}

// WriteJSON writes the result as indented JSON.
func (r Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Sentence is the run in one line: what ran and what it found.
func (r Result) Sentence() string {
	s := fmt.Sprintf("explored %s against %s: %d sequences, %d operations in %s (%s), %d distinct differences",
		r.Explored, r.Against, r.Sequences, r.Operations, r.Elapsed.Round(100_000_000), r.Stopped, len(r.Differences))
	if r.Known > 0 {
		s += fmt.Sprintf(" (%d known from the baseline or allowed by a MAY rule, %d new)", r.Known, r.New())
	}
	if r.Inconclusive > 0 {
		s += fmt.Sprintf("; %d sequences ended on a call without an answer", r.Inconclusive)
	}
	return s
}

// WriteMarkdown writes the report: the run, then each difference with its minimal
// reproduction.
func (r Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# conform explore: %s against %s\n\n", r.Explored, r.Against)
	fmt.Fprintf(&b, "%s.\n\nSeed %d reproduces the run (`conform explore --seed %d`); each difference's own seed draws its sequence first.\n\n", r.Sentence(), r.Seed, r.Seed)
	if len(r.Differences) == 0 {
		b.WriteString("No difference found.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("| # | difference | operations | catalogue | known | files |\n|---|---|---|---|---|---|\n")
	for i, d := range r.Differences {
		known := ""
		if d.Known {
			known = "known"
		}
		fmt.Fprintf(&b, "| %d | %s | %d (from %d) | %s | %s | %s |\n", i+1, mdCell(d.Summary), len(d.Ops), d.ShrunkFrom, mdCell(d.Coverage), known, mdCell(strings.Join(d.Files, ", ")))
	}
	for i, d := range r.Differences {
		fmt.Fprintf(&b, "\n## %d. %s\n\n%s.", i+1, mdCell(d.Signature), d.Coverage)
		if d.Known {
			fmt.Fprintf(&b, " Known: %s.", mdCell(d.KnownNote))
		}
		fmt.Fprintf(&b, "\n\n```\n%s```\n", d.Script(r.Explored, r.Against, r.Config.Tables))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
