package spec

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestRuleLevelsDoNotOutrunTheirEvidence: a MUST names the facts it rests on, each an entry
// of docs/EVIDENCE.md, and rests only on recorded traffic (or a quoted live answer) or on
// documentation, for every fact it asserts (issue 20, item 17; issue 31, item 15).
func TestRuleLevelsDoNotOutrunTheirEvidence(t *testing.T) {
	for _, r := range Rules() {
		if p := r.LevelOutrunsEvidence(); p != "" {
			t.Error(p)
		}
	}
}

// TestEveryMustRuleNamesAFact: no MUST rests on its Source URL alone; its strength is never
// read from a host name.
func TestEveryMustRuleNamesAFact(t *testing.T) {
	n := 0
	for _, r := range Rules() {
		if r.Level != Must {
			continue
		}
		n++
		asserted := 0
		for _, f := range r.Evidence {
			if !f.Recorded && f.Entry() != "" {
				asserted++
			}
		}
		if asserted == 0 {
			t.Errorf("rule %s is a MUST and names no entry of docs/EVIDENCE.md it asserts (Rule.Evidence)", r.ID)
		}
	}
	if n == 0 {
		t.Error("the catalogue has no MUST rule")
	}
}

func TestLevelOutrunsEvidenceCatchesAMustOnAnOpenFact(t *testing.T) {
	cases := []struct {
		rule  Rule
		flags bool
	}{
		{Rule{ID: "query.compare.mismatch", Level: Must, Source: SrcQueryingTables, Evidence: []Fact{open("E-filter-open")}}, true},
		{Rule{ID: "query.compare.mismatch", Level: May, Source: SrcQueryingTables, Evidence: []Fact{open("E-filter-open")}}, false},
		// A MUST on a documentation page alone names no fact: its strength is not read from
		// the URL's host.
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryingTables}, true},
		{Rule{ID: "x.y", Level: Must, Source: SrcTraffic}, true},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryingTables, Evidence: []Fact{{Cite: SrcQueryingTables, Strength: Doc}}}, true},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryingTables, Evidence: []Fact{doc("3.1")}}, false},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryEntities, Evidence: []Fact{traffic("E-top-over-max"), {Cite: "EVIDENCE.md 11.8", Strength: Open, Recorded: true}}}, false},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryEntities, Evidence: []Fact{{Cite: "EVIDENCE.md 11.8", Strength: Open, Recorded: true}}}, true},
		{Rule{ID: "x.y", Level: Must, Source: SrcVersionInvalid, Evidence: []Fact{traffic("E-version-invalid"), open("E-version-invalid")}}, true},
		{Rule{ID: "x.y", Level: Must, Source: srcLegacyNodeSDK}, true},
	}
	for _, c := range cases {
		if got := c.rule.LevelOutrunsEvidence() != ""; got != c.flags {
			t.Errorf("%s %s on %v: flagged %v, want %v", c.rule.ID, c.rule.Level, c.rule.Facts(), got, c.flags)
		}
	}
	for _, id := range []string{"query.compare.mismatch", "protocol.version.invalid", "query.top.negative"} {
		r, _ := LookupRule(id)
		r.Level = Must
		if r.LevelOutrunsEvidence() == "" {
			t.Errorf("%s as a MUST on %v is not flagged", id, r.Facts())
		}
	}
}

// evidenceEntry is one entry of docs/EVIDENCE.md: a heading with an id (a section number or
// an anchor "E-<slug>") and the strength its first line states.
type evidenceEntry struct {
	id       string
	strength Strength // "" when the entry states none
	line     int
	part     bool // a heading without a Strength line whose next heading is deeper: it introduces its entries
}

var (
	// entryHeading is the heading of an entry: "### 3.3 `$top`", "## 4. Entity group ...",
	// "### E-top-zero: ...".
	entryHeading = regexp.MustCompile(`^(#{2,4}) (?:(\d+(?:\.\d+)?)\.? |(E-[a-z0-9]+(?:-[a-z0-9]+)*):)`)
	// anyHeading is any Markdown heading.
	anyHeading = regexp.MustCompile(`^(#{1,6}) `)
	// strengthLine is an entry's machine-readable strength, the first line of its text.
	strengthLine = regexp.MustCompile(`^Strength: ([a-z]+)$`)
)

// parseEvidenceEntries reads the entries of an evidence document and the problems of its
// form: an entry without a valid Strength line, an id given twice, an anchor that names no
// entry's heading.
func parseEvidenceEntries(doc string) (map[string]evidenceEntry, []string) {
	lines := strings.Split(doc, "\n")
	type heading struct {
		level, line int
		id          string
	}
	var hs []heading
	for i, l := range lines {
		if m := anyHeading.FindStringSubmatch(l); m != nil {
			h := heading{level: len(m[1]), line: i}
			if e := entryHeading.FindStringSubmatch(l); e != nil {
				h.id = e[2] + e[3]
			}
			hs = append(hs, h)
		}
	}
	entries := map[string]evidenceEntry{}
	var problems []string
	for k, h := range hs {
		if h.id == "" {
			continue
		}
		end := len(lines)
		if k+1 < len(hs) {
			end = hs[k+1].line
		}
		e := evidenceEntry{id: h.id, line: h.line + 1}
		first := ""
		for _, l := range lines[h.line+1 : end] {
			if t := strings.TrimSpace(l); t != "" && !evidenceAnchor.MatchString(t) {
				first = t
				break
			}
		}
		if m := strengthLine.FindStringSubmatch(first); m != nil {
			e.strength = Strength(m[1])
			if !e.strength.Valid() {
				problems = append(problems, fmt.Sprintf("line %d: entry %s: unknown strength %q", e.line, h.id, m[1]))
			}
		} else if k+1 < len(hs) && hs[k+1].level > h.level {
			e.part = true
		} else {
			problems = append(problems, fmt.Sprintf("line %d: entry %s has no \"Strength: <traffic|doc|sdk|open>\" line first", e.line, h.id))
		}
		if _, dup := entries[h.id]; dup {
			problems = append(problems, fmt.Sprintf("line %d: entry %s is defined twice", e.line, h.id))
		}
		entries[h.id] = e
	}
	for _, m := range evidenceAnchor.FindAllStringSubmatch(doc, -1) {
		if _, ok := entries[m[1]]; !ok {
			problems = append(problems, fmt.Sprintf("anchor %s names no entry's heading (### %s: ...)", m[1], m[1]))
		}
	}
	sort.Strings(problems)
	return entries, problems
}

// factProblems lists the facts of rules that name no entry of the document, or whose
// strength is not exactly the entry's.
func factProblems(entries map[string]evidenceEntry, rules []Rule) []string {
	var out []string
	for _, r := range rules {
		for _, f := range r.Evidence {
			id := f.Entry()
			e, ok := entries[id]
			switch {
			case id == "":
				out = append(out, fmt.Sprintf("rule %s: fact %s names no entry of docs/EVIDENCE.md (a section number or an anchor, not a URL)", r.ID, f))
			case !ok:
				out = append(out, fmt.Sprintf("rule %s: fact %s: docs/EVIDENCE.md has no entry %s", r.ID, f, id))
			case e.part:
				out = append(out, fmt.Sprintf("rule %s: fact %s: %s only introduces its entries; cite the entry that states the fact", r.ID, f, id))
			case e.strength != f.Strength:
				out = append(out, fmt.Sprintf("rule %s: fact %s: docs/EVIDENCE.md gives entry %s the strength %s", r.ID, f, id, e.strength))
			}
		}
	}
	sort.Strings(out)
	return out
}

func readEvidenceEntries(t *testing.T) (map[string]evidenceEntry, []string) {
	t.Helper()
	data, err := os.ReadFile(evidenceFile)
	if err != nil {
		t.Fatal(err)
	}
	return parseEvidenceEntries(string(data))
}

// TestEveryEvidenceEntryHasAStrength: each entry of docs/EVIDENCE.md states its strength
// in its first line, and each anchor is an entry's heading.
func TestEveryEvidenceEntryHasAStrength(t *testing.T) {
	entries, problems := readEvidenceEntries(t)
	for _, p := range problems {
		t.Error(p)
	}
	if len(entries) < 50 {
		t.Errorf("docs/EVIDENCE.md has %d entries; the parser no longer finds them", len(entries))
	}
}

// TestFactsMatchTheEvidenceDocument: every fact names an entry of docs/EVIDENCE.md by its
// id, and its strength is exactly the one the entry's Strength line states.
func TestFactsMatchTheEvidenceDocument(t *testing.T) {
	entries, _ := readEvidenceEntries(t)
	for _, p := range factProblems(entries, Rules()) {
		t.Error(p)
	}
}

// TestEvidenceEntryChecksCanFail plants entries and facts the checks above must refuse: a
// "not documented" entry does not support a doc fact, whatever letters its text holds.
func TestEvidenceEntryChecksCanFail(t *testing.T) {
	document := "## 3. Query\n\n### 3.2 Comparison semantics\nStrength: doc\n\n- Documented.\n\n" +
		"<a id=\"E-undocumented\"></a>\n### E-undocumented: not documented\nStrength: open\n\nThis is not documented (doc pages say nothing).\n\n" +
		"### 3.3 `$top`\n\n- No strength line.\n\n" +
		"### E-odd: a strength that is no strength\nStrength: documentation\n\n" +
		"<a id=\"E-loose\"></a>\n- an anchor without a heading\n"
	entries, problems := parseEvidenceEntries(document)
	want := []string{"entry 3.3 has no", "entry E-odd: unknown strength", "anchor E-loose names no entry"}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d", problems, len(want))
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem says %q: %q", w, problems)
		}
	}
	if entries["3"].part != true || entries["3.2"].strength != Doc || entries["E-undocumented"].strength != Open {
		t.Errorf("entries read as %+v", entries)
	}
	rules := []Rule{
		{ID: "a.good", Evidence: []Fact{doc("3.2"), open("E-undocumented")}},
		{ID: "a.undocumented", Evidence: []Fact{doc("E-undocumented")}},
		{ID: "a.missing", Evidence: []Fact{traffic("E-nowhere")}},
		{ID: "a.url", Evidence: []Fact{{Cite: SrcQueryingTables, Strength: Doc}}},
		{ID: "a.part", Evidence: []Fact{doc("3")}},
	}
	got := factProblems(entries, rules)
	if len(got) != 4 || !strings.HasPrefix(got[0], "rule a.missing") || !strings.HasPrefix(got[1], "rule a.part") ||
		!strings.HasPrefix(got[2], "rule a.undocumented") || !strings.HasPrefix(got[3], "rule a.url") {
		t.Errorf("fact problems %q, want a.missing, a.part, a.undocumented and a.url", got)
	}
}
