package spec

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRuleLevelsDoNotOutrunTheirEvidence: a MUST rests only on recorded traffic (or a
// quoted live answer) or on documentation, for every fact it asserts (issue 20, item 17).
func TestRuleLevelsDoNotOutrunTheirEvidence(t *testing.T) {
	for _, r := range Rules() {
		if p := r.LevelOutrunsEvidence(); p != "" {
			t.Error(p)
		}
	}
}

// The levels the four rules had before their evidence was recorded outrun it.
func TestLevelOutrunsEvidenceCatchesAMustOnAnOpenFact(t *testing.T) {
	open := []Fact{{Cite: "EVIDENCE.md 3.2", Strength: Open}}
	cases := []struct {
		rule  Rule
		flags bool
	}{
		{Rule{ID: "query.compare.mismatch", Level: Must, Source: SrcQueryingTables, Evidence: open}, true},
		{Rule{ID: "query.compare.mismatch", Level: May, Source: SrcQueryingTables, Evidence: open}, false},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryingTables}, false},
		{Rule{ID: "x.y", Level: Must, Source: "https://example.com/emulator-notes"}, true},
		{Rule{ID: "x.y", Level: Must, Source: SrcQueryEntities, Evidence: []Fact{{Cite: "EVIDENCE.md 3.3", Strength: Traffic}, {Cite: "EVIDENCE.md 11.8", Strength: Open, Recorded: true}}}, false},
		{Rule{ID: "x.y", Level: Must, Source: SrcVersionInvalid, Evidence: []Fact{{Cite: "E-version-invalid", Strength: Traffic}, {Cite: "E-version-invalid", Strength: Open}}}, true},
		{Rule{ID: "x.y", Level: Must, Source: srcLegacyNodeSDK}, true},
	}
	for _, c := range cases {
		if got := c.rule.LevelOutrunsEvidence() != ""; got != c.flags {
			t.Errorf("%s %s on %v: flagged %v, want %v", c.rule.ID, c.rule.Level, c.rule.Facts(), got, c.flags)
		}
	}
	for _, id := range []string{"query.compare.mismatch", "query.compare.missing", "protocol.version.invalid"} {
		r, _ := LookupRule(id)
		r.Level = Must
		if r.LevelOutrunsEvidence() == "" {
			t.Errorf("%s as a MUST on %v is not flagged", id, r.Facts())
		}
	}
}

// evidenceSections maps each numbered section ("3.2") and anchor ("E-top-zero") of
// docs/EVIDENCE.md to its text, up to the next heading.
func evidenceSections(doc string) map[string]string {
	heading := regexp.MustCompile(`^#{2,4} (?:(\d+(?:\.\d+)?)\.? |(E-[a-z0-9-]+):)`)
	out := map[string]string{}
	key := ""
	for _, line := range strings.Split(doc, "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			key = m[1] + m[2]
		} else if strings.HasPrefix(line, "#") {
			key = ""
		}
		if key != "" {
			out[key] += line + "\n"
		}
	}
	return out
}

// TestFactsMatchTheEvidenceDocument: a fact that cites a section or an anchor of
// docs/EVIDENCE.md has a strength that the cited text states.
func TestFactsMatchTheEvidenceDocument(t *testing.T) {
	data, err := os.ReadFile(evidenceFile)
	if err != nil {
		t.Fatal(err)
	}
	sections := evidenceSections(string(data))
	words := map[Strength][]string{Traffic: {"traffic", "live answer"}, Doc: {"doc"}, SDK: {"sdk"}, Open: {"open", "inference", "not documented"}}
	for _, r := range Rules() {
		for _, f := range r.Evidence {
			key := strings.TrimPrefix(f.Cite, "EVIDENCE.md ")
			text, ok := sections[key]
			if !ok {
				if strings.HasPrefix(f.Cite, "https://") {
					continue
				}
				t.Errorf("rule %s: fact %s cites no section or anchor of docs/EVIDENCE.md", r.ID, f)
				continue
			}
			found := false
			for _, w := range words[f.Strength] {
				found = found || strings.Contains(strings.ToLower(text), w)
			}
			if !found {
				t.Errorf("rule %s: fact %s: docs/EVIDENCE.md %s does not say %s", r.ID, f, key, f.Strength)
			}
		}
	}
}
