package spec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCoverage = flag.Bool("update-coverage", false, "rewrite docs/COVERAGE.md")

const coverageFile = "../../docs/COVERAGE.md"

func TestRulesAreWellFormed(t *testing.T) {
	rules := Rules()
	if len(rules) == 0 {
		t.Fatal("the rule catalogue is empty")
	}
	for _, r := range rules {
		if err := r.validate(); err != nil {
			t.Error(err)
		}
		for _, s := range r.Sections {
			if !KnownSection(s) {
				t.Errorf("rule %s names unknown design-guide section %q", r.ID, s)
			}
		}
		if strings.ContainsAny(r.ID, "&|!,()/") {
			t.Errorf("rule %s has a character Ginkgo labels forbid", r.ID)
		}
	}
}

func TestErrorCodesAreDocumented(t *testing.T) {
	for _, c := range ErrorCodes() {
		if c.Status < 400 || c.Status > 599 || c.Message == "" || !strings.HasPrefix(c.Source, "https://") {
			t.Errorf("error code %s is incomplete: %+v", c.Code, c)
		}
	}
}

func TestEveryDesignGuideSectionIsCovered(t *testing.T) {
	if missing := UncoveredSections(); len(missing) > 0 {
		t.Errorf("design-guide sections without rules: %s", strings.Join(missing, ", "))
	}
}

func TestCoverageMapIsCurrent(t *testing.T) {
	want := CoverageMarkdown()
	if *updateCoverage {
		if err := os.MkdirAll(filepath.Dir(coverageFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(coverageFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(coverageFile)
	if err != nil {
		t.Fatalf("%v: run go test ./reference/spec -update-coverage", err)
	}
	if string(got) != want {
		t.Errorf("docs/COVERAGE.md is stale: run go test ./reference/spec -update-coverage")
	}
}

func TestUnbreakableNamesRules(t *testing.T) {
	for id := range unbreakable {
		r, ok := LookupRule(id)
		if !ok {
			t.Errorf("unbreakable.go lists %s, which is no rule", id)
			continue
		}
		if r.Unbreakable == "" {
			t.Errorf("LookupRule(%s) does not carry its Unbreakable reason", id)
		}
	}
	n := 0
	for _, r := range Rules() {
		if r.Unbreakable != "" {
			n++
		}
	}
	if n != len(unbreakable) {
		t.Errorf("Rules() carries %d Unbreakable reasons; unbreakable.go lists %d", n, len(unbreakable))
	}
}
