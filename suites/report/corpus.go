package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// CorpusAgreement is one backend's agreement with the corpus of recorded real traffic
// (fixtures/recordings, replayed by conform replay): how many recorded exchanges its answers
// agree with, disagree with, or could not be replayed.
type CorpusAgreement struct {
	Backend    string `json:"backend"`
	Profile    string `json:"profile"`
	Recordings int    `json:"recordings"`
	Agree      int    `json:"agree"`
	Disagree   int    `json:"disagree"`
	Skipped    int    `json:"skipped"`
	// Disagreements says each disagreeing exchange in one line: file, exchange, request and
	// the differences between the recorded and the live answer.
	Disagreements []string `json:"disagreements,omitempty"`
	// Error says why the corpus could not be replayed at all.
	Error string `json:"error,omitempty"`
}

// writeCorpusMarkdown writes the corpus section of report.md; nothing when no backend was
// replayed.
func writeCorpusMarkdown(w io.Writer, corpus []CorpusAgreement) {
	if len(corpus) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n## Agreement with recorded real traffic\n\n")
	p("The recordings of the Azure SDKs' own tests against the real service (fixtures/recordings) replayed against each backend: `conform replay`.\n\n")
	p("| backend | profile | recordings | agree | disagree | skipped |\n|---|---|---:|---:|---:|---:|\n")
	for _, c := range corpus {
		if c.Error != "" {
			p("| %s | %s | not replayed: %s | | | |\n", mdEscape(c.Backend), c.Profile, mdEscape(c.Error))
			continue
		}
		p("| %s | %s | %d | %d | %d | %d |\n", mdEscape(c.Backend), c.Profile, c.Recordings, c.Agree, c.Disagree, c.Skipped)
	}
	for _, c := range corpus {
		if len(c.Disagreements) == 0 {
			continue
		}
		p("\n### %s disagrees with the recorded service\n\n", mdEscape(c.Backend))
		for _, d := range c.Disagreements {
			p("- %s\n", mdEscape(d))
		}
	}
}

// CorpusHTML renders the corpus agreement as a self-contained HTML section for the report
// page.
func CorpusHTML(corpus []CorpusAgreement) template.HTML {
	if len(corpus) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="corpus"><h2>Agreement with recorded real traffic</h2><table><thead><tr><th>backend</th><th>profile</th><th>recordings</th><th>agree</th><th>disagree</th><th>skipped</th></tr></thead><tbody>`)
	for _, c := range corpus {
		if c.Error != "" {
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td colspan="4">not replayed: %s</td></tr>`, template.HTMLEscapeString(c.Backend), template.HTMLEscapeString(c.Profile), template.HTMLEscapeString(c.Error))
			continue
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr>`, template.HTMLEscapeString(c.Backend), template.HTMLEscapeString(c.Profile), c.Recordings, c.Agree, c.Disagree, c.Skipped)
	}
	b.WriteString(`</tbody></table>`)
	for _, c := range corpus {
		if len(c.Disagreements) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<details><summary>%s: %d disagreements</summary><ul>`, template.HTMLEscapeString(c.Backend), len(c.Disagreements))
		for _, d := range c.Disagreements {
			fmt.Fprintf(&b, `<li><code>%s</code></li>`, template.HTMLEscapeString(d))
		}
		b.WriteString(`</ul></details>`)
	}
	b.WriteString(`</section>`)
	return template.HTML(b.String()) //nolint:gosec // every value above is escaped
}
