package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/tableconform/conform/reference/spec"
)

// The figures of the catalogue that README.md and docs/CONFORMANCE-REPORT.md quote in their
// example sentences agree with the catalogue as it is (issue 34, item 17: "39 of the
// catalogue's 316 MUST rules" long after the catalogue changed): the number of MUST rules,
// those of a filtered area and those it leaves out, and the applicable and not applicable
// rules adding up to the catalogue's.
func TestDocumentedFiguresMatchTheCatalogue(t *testing.T) {
	must, byArea := 0, map[string]int{}
	for _, r := range spec.Rules() {
		if r.Level == spec.Must {
			must++
			byArea[string(r.Area)]++
		}
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var (
		selection  = regexp.MustCompile(`(\d+) of the catalogue's (\d+) MUST\s+rules(?:\s+\(filter area:([a-z-]+)\);\s+(\d+) left out by the filter)?`)
		applicable = regexp.MustCompile(`passed (\d+) of (\d+) applicable MUST\s+rules\s+\((\d+) not applicable to the profile\)`)
		conformsOn = regexp.MustCompile(`conforms on (\d+) of (\d+) applicable MUST rules; (\d+) applicable MUST rules not judged`)
	)
	checked := 0
	for _, file := range []string{"../../README.md", "../../docs/CONFORMANCE-REPORT.md"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range selection.FindAllStringSubmatch(text, -1) {
			checked++
			if atoi(m[2]) != must {
				t.Errorf("%s: %q: the catalogue has %d MUST rules", file, m[0], must)
			}
			if m[3] != "" && (atoi(m[1]) != byArea[m[3]] || atoi(m[4]) != must-byArea[m[3]]) {
				t.Errorf("%s: %q: area %s has %d MUST rules of %d", file, m[0], m[3], byArea[m[3]], must)
			}
		}
		for _, m := range applicable.FindAllStringSubmatch(text, -1) {
			checked++
			if atoi(m[2])+atoi(m[3]) != must {
				t.Errorf("%s: %q: applicable and not applicable add up to %d, not the catalogue's %d MUST rules", file, m[0], atoi(m[2])+atoi(m[3]), must)
			}
		}
		for _, m := range conformsOn.FindAllStringSubmatch(text, -1) {
			checked++
			if atoi(m[1])+atoi(m[3]) != atoi(m[2]) || atoi(m[2]) > must {
				t.Errorf("%s: %q: passed and not judged must add up to the applicable rules, at most the catalogue's %d", file, m[0], must)
			}
		}
	}
	if checked < 3 {
		t.Errorf("only %d figures found: the sentences the test reads were reworded", checked)
	}
}
