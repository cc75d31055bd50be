package spec

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The evidence document and what cites it: every "EVIDENCE.md <section>" and every
// "E-<slug>" anchor cited in the project's Go files and in the rule catalogue must exist in
// docs/EVIDENCE.md, and no anchor may be defined twice.

const evidenceFile = "../../docs/EVIDENCE.md"

// outsideCitation is a document outside the project that its files once cited; the project
// cites its own evidence document instead, which keeps that document's section numbers.
const outsideCitation = "SPEC" + ".md"

var (
	// evidenceHeading is a numbered heading: "## 4. Entity group..." or "### 2.3 Entity...".
	evidenceHeading = regexp.MustCompile(`(?m)^#{2,4} (\d+(?:\.\d+)?)\.? `)
	// evidenceAnchor defines an anchor: <a id="E-slug"></a>.
	evidenceAnchor = regexp.MustCompile(`<a id="(E-[a-z0-9]+(?:-[a-z0-9]+)*)"></a>`)
	// anchorCitation is a cited anchor anywhere in a file.
	anchorCitation = regexp.MustCompile(`\bE-[a-z0-9]+(?:-[a-z0-9]+)*\b`)
	// sectionCitation is "EVIDENCE.md", an optional "section"
	// or "sections", then a list of section numbers and ranges: "2.1, 2.3-2.5, 5.1, 6".
	sectionCitation = regexp.MustCompile(`\b(EVIDENCE)\.md(?: sections?)? ((?:\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?)(?:, \d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?)*)`)
)

// evidenceIndex is what docs/EVIDENCE.md defines.
type evidenceIndex struct {
	sections map[string]bool
	anchors  map[string]int // anchor -> how many times it is defined
}

func indexEvidence(doc string) evidenceIndex {
	ix := evidenceIndex{sections: map[string]bool{}, anchors: map[string]int{}}
	for _, m := range evidenceHeading.FindAllStringSubmatch(doc, -1) {
		ix.sections[m[1]] = true
	}
	for _, m := range evidenceAnchor.FindAllStringSubmatch(doc, -1) {
		ix.anchors[m[1]]++
	}
	return ix
}

// problems lists the duplicate anchors of the document.
func (ix evidenceIndex) problems() []string {
	var out []string
	for a, n := range ix.anchors {
		if n > 1 {
			out = append(out, fmt.Sprintf("anchor %s is defined %d times", a, n))
		}
	}
	sort.Strings(out)
	return out
}

// unresolved lists the citations of text (from where) that name no section or anchor of ix.
func (ix evidenceIndex) unresolved(where, text string) []string {
	var out []string
	for _, a := range anchorCitation.FindAllString(text, -1) {
		if ix.anchors[a] == 0 {
			out = append(out, fmt.Sprintf("%s: cites %s, which docs/EVIDENCE.md does not define", where, a))
		}
	}
	if n := strings.Count(text, outsideCitation); n > 0 {
		out = append(out, fmt.Sprintf("%s: cites %s %d times; cite docs/EVIDENCE.md, the project's own evidence", where, outsideCitation, n))
	}
	for _, m := range sectionCitation.FindAllStringSubmatch(text, -1) {
		for _, item := range strings.Split(m[2], ", ") {
			for _, sec := range strings.Split(item, "-") {
				if !ix.sections[sec] {
					out = append(out, fmt.Sprintf("%s: cites %s.md %s, which docs/EVIDENCE.md has no section %s for", where, m[1], m[2], sec))
				}
			}
		}
	}
	return out
}

// goSources reads every Go file of the module under root, keyed by its path.
func goSources(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		// The tests of the checks plant citations that must not resolve.
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "evidence_test.go") || strings.HasSuffix(path, "strength_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readEvidence(t *testing.T) evidenceIndex {
	t.Helper()
	doc, err := os.ReadFile(evidenceFile)
	if err != nil {
		t.Fatal(err)
	}
	return indexEvidence(string(doc))
}

func TestEvidenceKeepsTheSectionNumbers(t *testing.T) {
	ix := readEvidence(t)
	for _, s := range []string{"0", "1", "1.1", "1.5", "2.3", "3.5", "4", "5.3", "6", "7.2", "8", "9", "10", "11", "11.13", "12", "13", "14"} {
		if !ix.sections[s] {
			t.Errorf("docs/EVIDENCE.md has no section %s", s)
		}
	}
	for _, p := range ix.problems() {
		t.Error(p)
	}
}

func TestEvidenceCitationsResolve(t *testing.T) {
	ix := readEvidence(t)
	for path, text := range goSources(t, "../..") {
		for _, p := range ix.unresolved(path, text) {
			t.Error(p)
		}
	}
	for _, r := range Rules() {
		for _, p := range ix.unresolved("rule "+r.ID, r.Text+" "+r.Source+" "+r.Cosmos.Answer+" "+r.Unbreakable) {
			t.Error(p)
		}
	}
}

// TestEvidenceCheckCatchesBadCitations plants bad citations and a duplicate anchor, so that
// the checks above are known to be able to fail.
func TestEvidenceCheckCatchesBadCitations(t *testing.T) {
	ix := indexEvidence("## 2. Operations\n### 2.3 Entity operations\n<a id=\"E-known\"></a>\n### E-known\n<a id=\"E-twice\"></a><a id=\"E-twice\"></a>\n")
	good := "// see EVIDENCE.md 2.3, 2 and E-known"
	if got := ix.unresolved("good.go", good); len(got) != 0 {
		t.Errorf("good citations reported: %v", got)
	}
	for _, bad := range []string{
		"// (EVIDENCE.md 2.4)",
		"// EVIDENCE.md 2.3, 7.1",
		"// EVIDENCE.md 2.3-2.9",
		"// EVIDENCE.md section 17",
		"// E-unknown-fact",
		"// (" + outsideCitation + " 2.3)",
	} {
		if got := ix.unresolved("bad.go", bad); len(got) != 1 {
			t.Errorf("%q: reported %v, want one problem", bad, got)
		}
	}
	if got := ix.problems(); len(got) != 1 || !strings.Contains(got[0], "E-twice") {
		t.Errorf("duplicate anchor: reported %v", got)
	}
}

// ruleLevelMention is where EVIDENCE.md names a rule with its level: "Rule `id` (MUST".
var ruleLevelMention = regexp.MustCompile("[Rr]ules? `([a-z0-9.-]+)`\\s*\\((MUST|SHOULD|MAY)")

// levelProblems lists where doc and the rules disagree on a rule's level, and the MUST
// rules whose text cites an entry of doc that cannot carry a MUST (its Strength line says sdk
// or open) without listing it as a fact the spec only records: a level never outruns its
// evidence.
func levelProblems(doc string, rules []Rule) []string {
	var out []string
	byID := map[string]Rule{}
	for _, r := range rules {
		byID[r.ID] = r
	}
	for _, m := range ruleLevelMention.FindAllStringSubmatch(doc, -1) {
		if r, ok := byID[m[1]]; ok && string(r.Level) != m[2] {
			out = append(out, fmt.Sprintf("docs/EVIDENCE.md gives rule %s the level %s; the catalogue says %s", m[1], m[2], r.Level))
		}
	}
	entries, _ := parseEvidenceEntries(doc)
	for _, r := range rules {
		if r.Level != Must {
			continue
		}
		recorded := map[string]bool{}
		for _, f := range r.Evidence {
			if f.Recorded {
				recorded[f.Entry()] = true
			}
		}
		for _, a := range anchorCitation.FindAllString(r.Text, -1) {
			if e, ok := entries[a]; ok && !e.strength.SupportsMust() && !recorded[a] {
				out = append(out, fmt.Sprintf("rule %s is a MUST on %s, whose strength is %s", r.ID, a, e.strength))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestEvidenceLevelsMatchTheRules(t *testing.T) {
	doc, err := os.ReadFile(evidenceFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range levelProblems(string(doc), Rules()) {
		t.Error(p)
	}
}

// TestEvidenceLevelCheckCatchesOutrunLevels plants a level the catalogue contradicts and a
// MUST on an open entry, so that the check above is known to be able to fail; an entry whose
// text says "doc" but whose Strength line says open is open.
func TestEvidenceLevelCheckCatchesOutrunLevels(t *testing.T) {
	doc := "<a id=\"E-weak\"></a>\n### E-weak: weak\nStrength: open\n\n- Not documented (doc pages say nothing). Rule `a.weak` (MUST).\n" +
		"<a id=\"E-strong\"></a>\n### E-strong: strong\nStrength: doc\n\n- The page says so. Rule `a.strong` (MAY).\n"
	rules := []Rule{
		{ID: "a.weak", Level: Must, Text: "It MUST (E-weak)."},
		{ID: "a.strong", Level: Must, Text: "It MUST (E-strong)."},
		{ID: "a.recorded", Level: Must, Text: "It MUST (E-strong), and records E-weak.", Evidence: []Fact{{Cite: "E-weak", Strength: Open, Recorded: true}}},
	}
	got := levelProblems(doc, rules)
	if len(got) != 2 || !strings.Contains(got[0], "a.strong") || !strings.Contains(got[1], "a.weak is a MUST on E-weak") {
		t.Errorf("reported %q, want the contradicted level of a.strong and the MUST of a.weak on an open entry", got)
	}
}
