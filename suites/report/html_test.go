package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/spec"
)

func renderHTML(t *testing.T, r Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// cellHTML returns the matrix cell of rule on backend.
func cellHTML(t *testing.T, page string, r Report, rule, backend string) string {
	t.Helper()
	ri, bi := -1, -1
	for i, row := range r.Rules {
		if row.ID == rule {
			ri = i
		}
	}
	for i, b := range r.Backends {
		if b.Name == backend {
			bi = i
		}
	}
	re := regexp.MustCompile(`<td class="cell [^"]*" id="(?:c` + regexp.QuoteMeta(strconv.Itoa(ri)+"-"+strconv.Itoa(bi)) +
		`|open=` + regexp.QuoteMeta(rule+","+backend) + `)">.*?</td>`)
	m := re.FindString(page)
	if m == "" {
		t.Fatalf("no cell for %s on %s", rule, backend)
	}
	return m
}

// The page is readable without JavaScript: the matrix, every cell's evidence and the
// deep-link targets are in the HTML, and the toggle and the links are CSS.
func TestHTMLReadsWithoutJavaScript(t *testing.T) {
	r := syntheticReport("reference", "azurite", "mutant:batch-not-atomic")
	page := renderHTML(t, r)
	script := page[strings.Index(page, "<script>"):]
	withoutScript := strings.Replace(page, script, "", 1)
	for _, want := range []string{
		`id="open=batch.empty,azurite"`,    // the evidence article, by name
		"Chose: <b>server error 500</b>",   // its content
		`#evidence article:target`,         // opened by CSS
		`<input type="checkbox" id="all">`, // the toggle
		`#all:not(:checked)~#matrix .same{display:none}`,
		`<tr class="rule same"`,                              // rules alike on every backend are in the page, hidden by CSS
		`<a href="#area-batch">batch</a>`, `id="area-batch"`, // the picture links to each area's rules
		`tbody:target tr{display:table-row}`, // which a link shows, alike or not
	} {
		if !strings.Contains(withoutScript, want) {
			t.Errorf("without its script the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script src") || strings.Contains(page, "innerHTML") {
		t.Error("the script must only filter, not build content")
	}
}

func TestHTMLCellsSayChoicesAndDocumentedDifferencesInWords(t *testing.T) {
	r := syntheticReport("reference", "azurite", "cosmos")
	page := renderHTML(t, r)
	if c := cellHTML(t, page, r, "batch.empty", "azurite"); !strings.Contains(c, ">server error 500</a>") {
		t.Errorf("batch.empty on azurite: %s", c)
	}
	if c := cellHTML(t, page, r, "batch.empty", "reference"); !strings.Contains(c, ">refused with 400 InvalidInput</a>") {
		t.Errorf("batch.empty on reference: %s", c)
	}
	var documented string
	for _, row := range r.Rules {
		if rule, _ := spec.LookupRule(row.ID); rule.Cosmos.Kind == spec.CosmosDiffers && len(rule.Cosmos.Specs) == 0 {
			documented = row.ID
			c := cellHTML(t, page, r, row.ID, "cosmos")
			want := "documented: " + strings.TrimSuffix(rule.Cosmos.Answer, ".")
			if !strings.Contains(c, "o-documented-difference") || !strings.Contains(c, htmlText(want)) {
				t.Errorf("%s on cosmos: %s, want purple and %q", row.ID, c, want)
			}
			break
		}
	}
	if documented == "" {
		t.Fatal("the catalogue has no documented Cosmos difference")
	}
	if !strings.Contains(page, ".o-documented-difference{background:#f3e8ff") {
		t.Error("documented differences are not purple")
	}
}

// htmlText escapes s as html/template does in text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// An outcome this version does not know (a newer report) is drawn by its name, in the
// "other" segment, without breaking any writer.
func TestUnknownOutcomesSlotIn(t *testing.T) {
	r := sample()
	r.Rules[0].Cells[1] = Cell{Outcome: "frobbed", Specs: []SpecResult{{Text: "x", Outcome: "frobbed", Failure: "frob"}}}
	r.Legend = append(r.Legend, LegendRow{Outcome: "frobbed", Meaning: "the backend frobbed"})
	page := renderHTML(t, r)
	for _, want := range []string{`class="cell o-frobbed"`, "the backend frobbed", "1 frobbed"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	var md, junit bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil || !strings.Contains(md.String(), "? frobbed") {
		t.Errorf("markdown: %v", err)
	}
	if err := WriteJUnit(&junit, r); err != nil {
		t.Error(err)
	}
}

// Evidence that names a path such as "<table>(PartitionKey='p')" must not open an HTML
// table when report.md is rendered (GitHub renders inline HTML).
func TestMarkdownEscapesAngleBrackets(t *testing.T) {
	r := sample()
	r.Rules[0].Cells[1].Specs[0].Evidence = "DELETE <table>(PartitionKey='p') answered 204 | not 400"
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, r); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if strings.Contains(md, "<table>") || !strings.Contains(md, "DELETE &lt;table&gt;(PartitionKey='p') answered 204 \\| not 400") {
		t.Errorf("evidence not escaped:\n%s", md)
	}
}

func TestHTMLShowsCorpusAgreement(t *testing.T) {
	r := sample()
	r.Corpus = []CorpusAgreement{{Backend: "azurite", Recordings: 19, Agree: 40, Disagree: 5}}
	if page := renderHTML(t, r); !strings.Contains(page, "Agreement with recorded real traffic") || !strings.Contains(page, "<td>40</td><td>5</td>") {
		t.Error("the page lacks the corpus agreement")
	}
}
