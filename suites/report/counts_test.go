package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

// wordsSample is a run with a blocked MUST rule, a MAY rule that recorded an allowed
// choice, and a passing one.
func wordsSample() Report {
	blocked := entry(framework.EntryBlocked, framework.BlockedEntry{Rule: "entity.insert.conflict", Step: "load", Error: "400"})
	choice := entry(framework.EntryChoice, framework.Choice{What: "page end", Chosen: "no early end"})
	return Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "batch.max.operations", "b", types.SpecStateFailed, "blocked by entity.insert.conflict", blocked),
		specReport("x", "pagination.boundary.token", "c", types.SpecStatePassed, "", choice),
	}}}}, testRules, Meta{})
}

// barTitles are the titles of a page's bars: "LABEL: 1 pass, 2 blocked".
var barTitle = regexp.MustCompile(`<title>([^<]*)</title>`)

func barTitles(page string) []string {
	var out []string
	for _, m := range barTitle.FindAllStringSubmatch(page, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// The bars call a blocked rule "blocked", never "no answer" (which the legend keeps for a
// dropped connection or throttling), and count allowed choices apart from passes (issue
// 31, item 11).
func TestBarsSayBlockedAndAllowedChoiceApart(t *testing.T) {
	page := renderHTML(t, wordsSample())
	titles := strings.Join(barTitles(page), "\n")
	for _, want := range []string{"x, batch: 1 blocked", "x, pagination: 1 allowed choice"} {
		if !strings.Contains(titles, want) {
			t.Errorf("no bar says %q:\n%s", want, titles)
		}
	}
	if strings.Contains(titles, "no answer") {
		t.Errorf("a bar calls a blocked rule no answer:\n%s", titles)
	}
	if !strings.Contains(page, `<span class="note">1 blocked</span>`) {
		t.Error("the batch bar's note does not say 1 blocked")
	}
}

// Green is kept for a verdict with nothing failing and nothing unjudged except by a
// declared filter: a "conforms on" with a rule not judged, or that judged nothing, is not
// green (issue 31, item 12).
func TestOnlyAVerdictWithNothingUnjudgedIsGreen(t *testing.T) {
	filtered := func(filter string, specs ...types.SpecReport) Report {
		return Build([]Run{{Backend: driver.Info{Name: "x"}, Filter: filter, Ginkgo: types.Report{SpecReports: specs}}}, testRules, Meta{})
	}
	left := func(rule string) types.SpecReport { return specReport("x", rule, "left", types.SpecStateSkipped, "") }
	cases := []struct {
		name  string
		r     Report
		green bool
	}{
		{"a rule not judged", wordsSample(), false},
		{"nothing judged", filtered("level:MAY", left("entity.insert.conflict"), left("query.order.keys"), left("batch.max.operations"), left("auth.sas.read"),
			specReport("x", "pagination.boundary.token", "c", types.SpecStatePassed, "")), false},
		{"a filter, every selected rule passed", filtered("area:modification", specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
			left("query.order.keys"), left("batch.max.operations"), left("auth.sas.read")), true},
	}
	for _, c := range cases {
		b := c.r.Backends[0]
		if b.VerdictKind != verdict.ConformsOn {
			t.Fatalf("%s: %s %q", c.name, b.VerdictKind, b.Verdict)
		}
		page := renderHTML(t, c.r)
		var md bytes.Buffer
		if err := WriteMarkdown(&md, c.r); err != nil {
			t.Fatal(err)
		}
		green := strings.Contains(page, `class="v v-ok"`)
		if green != c.green || strings.Contains(md.String(), "✅ **conforms on") != c.green {
			t.Errorf("%s: %q green on the page %v, want %v", c.name, b.Verdict, green, c.green)
		}
	}
}

// Rules (and specs) the filter left out are counted as "left out by the filter", never
// as skipped (issue 31, item 12).
func TestRulesLeftOutByTheFilterAreNotSkipped(t *testing.T) {
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Filter: "area:modification", Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "query.order.keys", "b", types.SpecStateSkipped, ""),
		specReport("x", "batch.max.operations", "b", types.SpecStateSkipped, ""),
		specReport("x", "auth.sas.read", "b", types.SpecStateSkipped, ""),
		specReport("x", "pagination.boundary.token", "b", types.SpecStateSkipped, ""),
	}}}}, testRules, Meta{})
	for _, specs := range []bool{false, true} {
		words := BackendCountsInWords(r, 0, specs)
		if strings.Contains(words, "skipped") || !strings.Contains(words, "MUST 1 pass · 3 left out by the filter; MAY 1 left out by the filter") {
			t.Errorf("counts (specs %v): %q", specs, words)
		}
	}
	page := renderHTML(t, r)
	if titles := strings.Join(barTitles(page), "\n"); strings.Contains(titles, "skipped") || !strings.Contains(titles, "x, ordering: 1 left out by the filter") {
		t.Errorf("bars:\n%s", titles)
	}
	if cell := cellHTML(t, page, r, "query.order.keys", "x"); !strings.Contains(cell, ">left out by the filter<") {
		t.Errorf("the matrix cell: %s", cell)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| `query.order.keys` | MUST | – left out by the filter |") {
		t.Errorf("report.md does not say the rule was left out by the filter:\n%s", md.String())
	}
}

// No report says words that contradict its own counts: over generated reports, the
// numbers of each verdict sentence are the ones report.json's cells give, and each bar
// draws every rule once, by the outcome its cell shows.
func TestNoReportContradictsItsCounts(t *testing.T) {
	reports := map[string]Report{
		"sample":    sample(),
		"words":     wordsSample(),
		"synthetic": syntheticReport("reference", "azurite", "mutant", "cosmos"),
	}
	for name, r := range reports {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		var back Report
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatal(err)
		}
		page := renderHTML(t, back)
		titles := barTitles(page)
		for bi, b := range back.Backends {
			if err := sentenceMatchesCells(back, bi); err != nil {
				t.Errorf("%s, %s: %v: %q", name, b.Name, err, b.Verdict)
			}
			want := map[Group]int{}
			for _, row := range back.Rules {
				want[StyleOf(shownOutcome(row.Cells[bi])).Group]++
			}
			card := ""
			for _, title := range titles {
				if strings.HasPrefix(title, b.Name+": rules of every level: ") {
					card = strings.TrimPrefix(title, b.Name+": rules of every level: ")
				}
			}
			got := map[Group]int{}
			for _, part := range strings.Split(card, ", ") {
				n, group, _ := strings.Cut(part, " ")
				got[Group(group)], _ = strconv.Atoi(n)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, %s: the bar says %q, the cells %v", name, b.Name, card, want)
			}
		}
	}
}

var (
	sentencePassed = regexp.MustCompile(`(?:passed|conforms on) (\d+) of (?:the )?(\d+) (?:selected )?applicable MUST rules`)
	sentenceAll    = regexp.MustCompile(`(?:conforms: all|conforms on the) (\d+) (?:selected )?applicable MUST rules`)
	sentenceFail   = regexp.MustCompile(`(\d+) MUST rules (?:of extended features )?fail`)
	sentenceNA     = regexp.MustCompile(`\((\d+) not applicable to the profile\)`)
	sentenceUnjudg = regexp.MustCompile(`(\d+) applicable MUST rules not judged`)
)

// sentenceMatchesCells checks backend bi's verdict sentence against its MUST rules' cells.
func sentenceMatchesCells(r Report, bi int) error {
	var selectedRules, passed, failing, notApplicable int
	for _, row := range r.Rules {
		c := row.Cells[bi]
		if row.Level != "MUST" || !selected(c) {
			continue
		}
		selectedRules++
		switch {
		case c.Against:
			failing++
		case c.Outcome == verdict.Pass || c.Outcome == verdict.DocumentedDiff || c.Outcome == verdict.UnexpectedPass:
			passed++
		case c.Outcome == verdict.NotApplicable:
			notApplicable++
		}
	}
	s := r.Backends[bi].Verdict
	number := func(re *regexp.Regexp, group int) int {
		if m := re.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[group])
			return n
		}
		return -1
	}
	saidPassed, saidOf := number(sentencePassed, 1), number(sentencePassed, 2)
	if saidPassed < 0 {
		saidPassed, saidOf = number(sentenceAll, 1), number(sentenceAll, 1)
	}
	unjudged := selectedRules - notApplicable - passed - failing
	checks := []struct {
		what      string
		said, has int
		optional  bool
	}{
		{"passed", saidPassed, passed, false},
		{"applicable", saidOf, selectedRules - notApplicable, false},
		{"failing", number(sentenceFail, 1), failing, failing == 0},
		{"not applicable", number(sentenceNA, 1), notApplicable, notApplicable == 0},
		{"not judged", number(sentenceUnjudg, 1), unjudged, unjudged == 0},
	}
	for _, c := range checks {
		if c.optional && c.said < 0 {
			continue
		}
		if c.said != c.has {
			return fmt.Errorf("the sentence says %d %s, the cells %d", c.said, c.what, c.has)
		}
	}
	if strings.Contains(s, "skipped, partial or blocked") && passed+failing+notApplicable == selectedRules {
		return fmt.Errorf("it explains rules not judged that the cells do not have")
	}
	return nil
}
