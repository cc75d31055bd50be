package explore

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tableconform/conform/explore/gen"
	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

// Difference is one distinct difference: the minimal sequence that shows it, both backends'
// answers to each of its steps, and where it falls in the catalogue.
type Difference struct {
	// Signature tells distinct differences apart: the operation, what differed and the
	// answers' errors.
	Signature string `json:"signature"`
	// Summary says the difference in one line.
	Summary string `json:"summary"`
	// Seed is the seed of the sequence that found it: conform explore --seed Seed draws that
	// sequence first.
	Seed uint64 `json:"seed"`
	// Ops is the minimal sequence; Steps its answers, the last one the difference.
	Ops   []gen.Op     `json:"-"`
	Steps []StepResult `json:"steps"`
	// ShrunkFrom is the length of the sequence first found; ShrinkRuns the sequences run to
	// shrink it.
	ShrunkFrom int `json:"shrunkFrom"`
	ShrinkRuns int `json:"shrinkRuns"`
	// Flaky is set when the difference did not show again on the same sequence, so it was
	// not shrunk.
	Flaky bool `json:"flaky,omitempty"`
	// Area is the catalogue area the difference belongs to; Rule the rule that covers it,
	// empty when none does; Coverage says so in words.
	Area     spec.Area `json:"area"`
	Rule     string    `json:"rule,omitempty"`
	Coverage string    `json:"coverage"`
	// Known is set when the explored backend's baseline lists the rule with this answer, or
	// when the rule that covers it is a MAY rule, which allows either answer (unless one is a
	// server fault or unreadable).
	Known     bool   `json:"known,omitempty"`
	KnownNote string `json:"knownNote,omitempty"`
	// Files are the reproduction's files, relative to the report, once written.
	Files []string `json:"files,omitempty"`
}

// Last is the step that differs.
func (d Difference) Last() StepResult { return d.Steps[len(d.Steps)-1] }

// what classifies how two answers to one step differ.
func what(s StepResult) string {
	e, a := s.Explored, s.Against
	switch {
	case e.Error != a.Error && e.Error != "" && a.Error != "" &&
		atIndex.ReplaceAllString(e.Error, "") == atIndex.ReplaceAllString(a.Error, ""):
		return "failed operation index"
	case e.Error != a.Error:
		return "status"
	case sameLinesInAnotherOrder(e.Lines, a.Lines):
		return "order"
	case s.ReadBack:
		return "stored entities"
	}
	for i := 0; i < max(len(e.Lines), len(a.Lines)); i++ {
		var le, la string
		if i < len(e.Lines) {
			le = e.Lines[i]
		}
		if i < len(a.Lines) {
			la = a.Lines[i]
		}
		if le == la {
			continue
		}
		switch {
		case sameKeys(le, la):
			return "property values"
		case strings.Contains(le, "continuation") || strings.Contains(la, "continuation"):
			return "continuation"
		case strings.HasPrefix(le, "result ") && strings.HasPrefix(la, "result "):
			fe, fa := strings.Fields(le), strings.Fields(la)
			switch {
			case len(fe) > 2 && len(fa) > 2 && fe[2] != fa[2]:
				return "batch result status"
			case strings.Contains(le, "(") != strings.Contains(la, "("):
				return "batch result entity"
			case strings.Contains(le, "ETag") || strings.Contains(la, "ETag"):
				return "ETag"
			}
			return "batch results"
		case strings.HasSuffix(le, " results"):
			return "batch results"
		case strings.Contains(le, "ETag") || strings.Contains(la, "ETag"):
			return "ETag"
		case strings.HasPrefix(le, "page ") || strings.HasPrefix(la, "page "):
			if slices.Equal(continuationLines(e.Lines), continuationLines(a.Lines)) {
				return "entities"
			}
			return "continuation"
		case strings.HasPrefix(le, "tables: "):
			return "tables listed"
		}
		return "entities"
	}
	return "entities"
}

// continuationLines are the lines of a query's answer that say whether a page had a
// continuation.
func continuationLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasSuffix(l, "continuation") {
			out = append(out, l)
		}
	}
	return out
}

// keysOfLine matches the keys of an entity line (entityLine).
var keysOfLine = regexp.MustCompile(`\(PartitionKey=("(?:[^"\\]|\\.)*"|absent), RowKey=("(?:[^"\\]|\\.)*"|absent)`)

// sameKeys reports whether two lines show the same entity with other properties.
func sameKeys(a, b string) bool {
	ka, kb := keysOfLine.FindString(a), keysOfLine.FindString(b)
	return ka != "" && ka == kb && a != b
}

func sameLinesInAnotherOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for i := range a {
		count[a[i]]++
		count[b[i]]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}

var atIndex = regexp.MustCompile(` at operation \d+$`)

// features names what an operation used that a rule may be about.
func features(op gen.Op) []string {
	var out []string
	switch op.Kind {
	case gen.Query:
		if op.Query.Filter != "" {
			out = append(out, "$filter")
		}
		if op.Query.Top.IsSet() {
			out = append(out, "$top")
		}
		if op.Query.Select != nil {
			out = append(out, "$select")
		}
	case gen.Get:
		if op.Select != nil {
			out = append(out, "$select")
		}
	case gen.Upsert, gen.Update:
		out = append(out, op.Mode.String())
	case gen.Batch:
		kinds := map[string]bool{}
		for _, s := range op.Steps {
			kinds[s.Kind.String()] = true
		}
		for k := range kinds {
			out = append(out, k)
		}
		sort.Strings(out)
	}
	return out
}

// signature is what tells one difference from another.
func signature(s StepResult) string {
	kind := "read-back"
	if !s.ReadBack {
		kind = string(s.Op.Kind)
		if f := features(s.Op); len(f) > 0 {
			kind += "[" + strings.Join(f, ",") + "]"
		}
	}
	sig := kind + " " + what(s)
	if s.Explored.Error != s.Against.Error {
		sig += fmt.Sprintf(": %s vs %s", orOK(atIndex.ReplaceAllString(s.Explored.Error, "")), orOK(atIndex.ReplaceAllString(s.Against.Error, "")))
	}
	return sig
}

func orOK(e string) string {
	if e == "" {
		return "ok"
	}
	return e
}

func (x *Explorer) difference(run sequenceRun, seed uint64, firstLen, shrinkRuns int) Difference {
	steps := run.steps[:run.diffAt+1]
	d := Difference{Seed: seed, Steps: steps, ShrunkFrom: firstLen, ShrinkRuns: shrinkRuns}
	for _, s := range steps {
		if !s.ReadBack {
			d.Ops = append(d.Ops, s.Op)
		}
	}
	last := d.Last()
	d.Signature = signature(last)
	d.Summary = fmt.Sprintf("%s: %s answered %s, %s answered %s", clip(last.Line), x.ExploredName, clip(last.Explored.Text()), x.AgainstName, clip(last.Against.Text()))
	if last.ReadBack {
		d.Summary = fmt.Sprintf("after %d operations the tables hold different entities (%s vs %s)", len(d.Ops), x.ExploredName, x.AgainstName)
	}
	d.Area, d.Rule = Match(d)
	if r, ok := spec.LookupRule(d.Rule); ok && r.Level == spec.May && !serverFault(last.Explored) && !serverFault(last.Against) {
		d.Coverage = "rule " + d.Rule + " covers this, a MAY rule: either answer is allowed"
		d.Known, d.KnownNote = true, "the MAY rule "+d.Rule+" allows either answer"
	} else if d.Rule != "" {
		d.Coverage = "rule " + d.Rule + " covers this"
	} else {
		d.Coverage = "no rule covers this; area " + string(d.Area)
	}
	return d
}

// serverFault reports an answer no MAY rule allows: a 5xx or an unreadable answer.
func serverFault(a Answer) bool { return a.Status >= 500 || a.Code == "malformed" }

func clip(s string) string {
	if len(s) > 240 {
		cut := 240
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "..."
	}
	return s
}

// areasOf lists the areas a difference on an operation may belong to, the likeliest first.
func areasOf(op gen.Op, readBack bool, whatDiffered string) []spec.Area {
	switch {
	case whatDiffered == "order" && (readBack || op.Kind != gen.Batch):
		return []spec.Area{spec.AreaOrdering, spec.AreaQuery, spec.AreaPagination}
	case whatDiffered == "property values" && op.Kind != gen.Query:
		return []spec.Area{spec.AreaTypes, spec.AreaEntities, spec.AreaModification, spec.AreaBatch}
	}
	switch op.Kind {
	case gen.CreateTable, gen.DeleteTable, gen.ListTables:
		return []spec.Area{spec.AreaTables}
	case gen.Insert:
		if readBack {
			return []spec.Area{spec.AreaModification, spec.AreaEntities, spec.AreaTypes}
		}
		return []spec.Area{spec.AreaEntities, spec.AreaTypes, spec.AreaLimits, spec.AreaModification, spec.AreaQuery}
	case gen.Get:
		return []spec.Area{spec.AreaEntities, spec.AreaTypes, spec.AreaLimits, spec.AreaModification, spec.AreaQuery}
	case gen.Upsert, gen.Update, gen.Delete:
		return []spec.Area{spec.AreaModification, spec.AreaConcurrency, spec.AreaEntities, spec.AreaTypes, spec.AreaLimits}
	case gen.Batch:
		return []spec.Area{spec.AreaBatch, spec.AreaLimits}
	case gen.Query:
		if whatDiffered == "continuation" {
			return []spec.Area{spec.AreaPagination, spec.AreaQuery}
		}
		return []spec.Area{spec.AreaQuery, spec.AreaOrdering, spec.AreaTypes, spec.AreaPagination}
	}
	return []spec.Area{spec.AreaProtocol}
}

// subject is the operation a difference is about: the step that differs, or, when what the
// tables hold differs, the last operation that wrote.
func subject(d Difference) gen.Op {
	last := d.Last()
	if !last.ReadBack {
		return last.Op
	}
	for i := len(d.Ops) - 1; i >= 0; i-- {
		if d.Ops[i].Writes() {
			return d.Ops[i]
		}
	}
	return gen.Op{}
}

// topics adds the words for the edges an operation's data reaches: forbidden or oversized
// keys, unusual property names, values and entities at the limits, empty and oversized
// batches, $top outside its range.
func topics(op gen.Op, add func(...string)) {
	entities := []api.Entity{op.Entity}
	for _, st := range op.Steps {
		entities = append(entities, st.Entity)
	}
	for _, e := range entities {
		for _, k := range []string{e.PartitionKey, e.RowKey} {
			if strings.ContainsAny(k, "/\\#?") || strings.IndexFunc(k, func(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }) >= 0 {
				add("forbidden", "character")
			}
			if len(k) > 500 {
				add("key.size", "1 kib", "key size")
			}
		}
		if len(e.Properties) > 200 {
			add("properties.count", "255")
		}
		for n, v := range e.Properties {
			if !slices.Contains(gen.PropertyNames, n) && !strings.HasPrefix(n, "W") {
				add("property-name", "property name", "name")
				if len(n) > 200 {
					add("name.length", "255 characters")
				}
			}
			if len(v.Str) > 30000 {
				add("string.size", "64 kib", "size")
			}
			if v.Type == api.EdmDateTime && !v.Null && v.Time().Year() < 1601 {
				add("before-1601", "1601")
			}
		}
	}
	switch {
	case op.Kind == gen.Batch && len(op.Steps) == 0:
		add("batch.empty", "no operations", "empty")
	case op.Kind == gen.Batch && len(op.Steps) > 100:
		add("limit.operations", "100 operations")
	}
	if f := op.Query.Filter; strings.Contains(f, "PartitionKey eq ") && strings.Contains(f, "RowKey eq ") {
		add("point")
	}
	if n, ok := op.Query.Top.Value(); ok && (n < 0 || n > 1000) {
		add("top.range", "1000", "1,000")
	}
}

// words are what a difference is about, each with the spellings rules use.
func words(d Difference) [][]string {
	last := d.Last()
	var w wordList
	sameError := what(last) == "failed operation index" // the code is not what differs
	if !sameError {
		w.answerWords(last)
	}
	op := subject(d)
	w.operationWords(op)
	// The edges the data reaches and what differed name the subject: they count twice.
	topics(op, w.addTwice)
	whatDiffered := what(last)
	for _, f := range features(op) {
		if whatDiffered == "continuation" && f == "$filter" {
			continue // the filter chose the entities; the paging is what differs
		}
		switch f {
		case "$filter":
			w.add("filter", "comparison", "compare")
		case "$top":
			w.add("$top", "top")
		case "$select":
			w.add("$select", "select", "projection")
		default:
			w.add(f)
		}
	}
	if last.ReadBack {
		for _, st := range d.Steps {
			if st.Op.Kind == gen.Batch && !st.ReadBack && st.Against.Error != "" {
				w.addTwice("atomic", "all or none", "rolled back")
			}
		}
	}
	if f := op.Query.Filter; f == "true" || f == "false" {
		w.addTwice("bare-constant", "constant")
	}
	w.differedWords(whatDiffered)
	text := strings.Join(last.Explored.Lines, " ") + " " + strings.Join(last.Against.Lines, " ")
	for _, t := range api.AllEdmTypes {
		if strings.Contains(text, t.String()) || strings.Contains(op.String(), t.String()) {
			w.add(strings.ToLower(strings.TrimPrefix(t.String(), "Edm.")))
		}
	}
	if strings.Contains(op.String(), "(null)") {
		w.add("null")
	}
	return w
}

// wordList is the words that name a difference's subject, each group one vote (words).
type wordList [][]string

func (w *wordList) add(words ...string)      { *w = append(*w, words) }
func (w *wordList) addTwice(words ...string) { *w = append(*w, words, words) }

// answerWords are the error codes and statuses of the last step's answers.
func (w *wordList) answerWords(last StepResult) {
	for _, c := range []string{last.Explored.Code, last.Against.Code} {
		if c != "" && c != "malformed" {
			w.add(c)
		}
	}
	for _, s := range []int{last.Explored.Status, last.Against.Status} {
		if s != 0 {
			w.add(strconv.Itoa(s))
		}
	}
	if last.Against.Code == "ResourceNotFound" || last.Explored.Code == "ResourceNotFound" {
		w.add("missing")
	}
}

// operationWords name the operation that differed.
func (w *wordList) operationWords(op gen.Op) {
	switch op.Kind {
	case gen.Insert:
		w.add("insert")
	case gen.Upsert:
		w.add("insert-or-"+op.Mode.String(), "insert or "+op.Mode.String(), "upsert")
	case gen.Update:
		w.add(op.Mode.String())
		if op.IfMatch != gen.MatchAny {
			w.add("etag", "if-match")
		}
	case gen.Delete:
		w.add("delete")
		if op.IfMatch == gen.MatchNone {
			w.add("if-match")
		}
	case gen.Get:
		w.add("point", "retrieve", "get")
	case gen.Batch:
		w.add("batch", "transaction")
		if len(op.Steps) > 100 {
			w.add("100 operations", "limit.operations")
		}
	case gen.CreateTable:
		w.add("create")
	case gen.DeleteTable:
		w.add("delete")
	case gen.ListTables:
		w.add("list", "query tables")
	}
}

// differedWords name what differed between the answers.
func (w *wordList) differedWords(whatDiffered string) {
	switch whatDiffered {
	case "batch result status":
		w.addTwice("insert-status", "status")
	case "batch result entity":
		w.addTwice("retrieve")
	case "continuation":
		w.addTwice("continuation", "page")
	case "property values":
		w.addTwice("round-trip", "round trip", "same type", "value")
	case "ETag":
		w.addTwice("etag")
	case "batch results":
		w.addTwice("results")
	case "order":
		w.addTwice("order", "sorted")
		w.addTwice("partitionkey", "rowkey", "key")
	case "failed operation index":
		w.addTwice("failure.index", "index")
	case "stored entities":
		w.addTwice("stores", "removes", "keeps", "merges", "replaces")
	}
}

// Match finds the area of a difference and the rule of the catalogue that covers it, if any:
// over the areas the operation and what differed make likely (the likeliest first), the rule
// whose id and text name most of what the difference is about: its error codes and statuses,
// its operation, the edges its data reaches, the query options, the types involved. A rule
// is named only when it names two of these, and, for a difference of status, the error code,
// the status or, in its id, the subject.
func Match(d Difference) (spec.Area, string) {
	last := d.Last()
	whatDiffered := what(last)
	areas := areasOf(subject(d), last.ReadBack, whatDiffered)
	ws := words(d)
	// An error code named is strong evidence, a bare status weaker.
	codes := map[string]int{}
	for _, a := range []Answer{last.Explored, last.Against} {
		if a.Code != "" && a.Code != "malformed" {
			codes[a.Code] = 6
		}
		if a.Status != 0 {
			codes[strconv.Itoa(a.Status)] = 2
		}
	}
	best, bestScore := "", 0
	for rank, area := range areas {
		for _, r := range spec.Rules() {
			if r.Area != area {
				continue
			}
			id, text := strings.ToLower(r.ID), strings.ToLower(r.Text)
			score, hits, codeHit, idHit := 0, 0, false, false
			for _, w := range ws {
				for _, spelling := range w {
					s := strings.ToLower(spelling)
					if strings.Contains(id, s) || strings.Contains(text, s) {
						hits++
						score += 2
						w, isCode := codes[spelling]
						if strings.Contains(id, s) {
							score += 4 // a rule's id names its subject
							idHit = idHit || !isCode
						}
						if isCode {
							codeHit = true
							score += w
						}
						break
					}
				}
			}
			if whatDiffered == "status" && !codeHit && !idHit {
				continue
			}
			if hits < 2 {
				continue
			}
			// The areas come likeliest first.
			if score -= 2 * rank; score > bestScore {
				best, bestScore = r.ID, score
			}
		}
	}
	if best != "" {
		r, _ := spec.LookupRule(best)
		return r.Area, best
	}
	return areas[0], ""
}

// knownDivergence reports whether b lists the difference: an entry for its rule whose
// answer (status and code, when it records them) is the explored backend's.
func knownDivergence(b fixtures.Baseline, d Difference) (bool, string) {
	if d.Rule == "" {
		return false, ""
	}
	got := d.Last().Explored
	for _, e := range b.Expected {
		if e.Rule != d.Rule {
			continue
		}
		if e.Code != "" && e.Code != got.Code {
			continue
		}
		return true, fmt.Sprintf("the %s %s baseline lists %s: %s", b.Backend, b.Version, e.Rule, clip(e.Evidence))
	}
	return false, ""
}
