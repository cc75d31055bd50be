package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"strings"

	"github.com/tableconform/conform/suites/verdict"
)

// WriteHTML writes the report as one self-contained page (no network, no external files).
// The first screen holds each backend's verdict, its counts and a bar per area; then the
// matrix of the rules whose outcomes or recorded choices differ between backends (a toggle
// shows all), then the evidence. Everything is in the HTML: without JavaScript the toggle
// (a checkbox and CSS) and the deep links (#open=RULE,BACKEND and #open=ROW,COLUMN, both
// element ids, opened with :target) work; the script only adds search and highlighting.
func WriteHTML(w io.Writer, r Report) error {
	return page.Execute(w, buildHTMLView(r))
}

// htmlView is what the page template draws, computed from the report.
type htmlView struct {
	Report
	Cards       []backendCard
	Areas       []areaPicture
	Groups      []groupLegend
	Sections    []areaSection
	Evidence    []evidenceView
	Legend      []legendView
	Order       string
	TotalRules  int
	DifferRules int
	ColSpan     int
	Single      bool
	// CorpusHTML is the section on agreement with recorded real traffic (corpus.go).
	CorpusHTML template.HTML
}

type backendCard struct {
	Name, Desc, Verdict, VerdictClass, StartError string
	RuleCounts, SpecCounts                        string
	Bar                                           template.HTML
	// Confirmation is Backend.ConfirmationWords.
	Confirmation []string
	// Baseline is Backend.BaselineNote.
	Baseline string
}

type areaPicture struct {
	Area          string
	Rules, Differ int
	Bars          []template.HTML
	Notes         []string
}

type groupLegend struct {
	Colour, Name, Means string
}

type areaSection struct {
	Area          string
	Same          bool
	Rules, Differ int
	Rows          []rowView
}

type rowView struct {
	Index           int
	ID, Level, Text string
	Same            bool
	Cells           []cellView
}

// cellView is a matrix cell. A cell with evidence links to its article, which carries the
// deep-link ids; a plain pass carries them itself (NumberID on its link), so that a deep link
// to it highlights it.
type cellView struct {
	ID, Class, Summary, Href string
	NumberID                 string
}

type evidenceView struct {
	RuleIndex, BackendIndex                             int
	ID, Backend, Word, Class, Text, Level, Area, Cosmos string
	Source                                              string
	AlsoPassed                                          int // passing specs without a choice, not listed
	Specs                                               []specView
}

type specView struct {
	SpecResult
	Word, Class string
	Choices     []choiceView
	// Said is what the backend did, in words (SpecWords); Folded is true when the failure
	// is long (a body, a diff of many properties) and is shown folded under Said.
	Said   string
	Folded bool
}

// foldFailureOver is the length past which a failure is folded behind its words.
const foldFailureOver = 300

type choiceView struct{ Words, Raw string }

type legendView struct {
	Class, Word, Meaning string
}

// outcomeClass is an outcome's CSS class.
func outcomeClass(o verdict.Outcome) string {
	return "o-" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(string(o)))
}

func buildHTMLView(r Report) htmlView {
	v := htmlView{Report: r, TotalRules: len(r.Rules), Single: len(r.Backends) == 1, ColSpan: len(r.Backends) + 2,
		CorpusHTML: CorpusHTML(r.Corpus)}
	order := outcomeOrder(r)
	for bi, b := range r.Backends {
		desc := strings.TrimSpace(b.Kind + " " + b.Version)
		for _, extra := range []string{b.Driver, b.Profile} {
			if extra != "" {
				desc += " · " + extra
			}
		}
		vs := VerdictStyleFor(b)
		rc := backendRuleCounts(r, bi)
		v.Cards = append(v.Cards, backendCard{Name: b.Name, Desc: desc, Verdict: b.Verdict, VerdictClass: vs.Class,
			StartError: b.StartError, RuleCounts: byLevelInWords(order, backendCountsByLevel(r, bi, false)),
			SpecCounts: byLevelInWords(order, backendCountsByLevel(r, bi, true)),
			Bar:        svgBar(rc, len(r.Rules), 100, 10, b.Name+": rules of every level"), Confirmation: b.ConfirmationWords,
			Baseline: b.BaselineNote})
	}
	for _, t := range tallyAreas(r) {
		a := areaPicture{Area: t.Area, Rules: t.Rules, Differ: t.Differ}
		for bi, counts := range t.Counts {
			a.Bars = append(a.Bars, svgBar(counts, t.Rules, 150, 12, r.Backends[bi].Name+", "+t.Area))
			a.Notes = append(a.Notes, barNote(counts))
		}
		v.Areas = append(v.Areas, a)
	}
	for _, g := range Groups {
		if g.Group != groupUnlabeled {
			v.Groups = append(v.Groups, groupLegend{g.Colour, string(g.Group), g.Means})
		}
	}
	sections := map[string]int{}
	for ri, row := range r.Rules {
		si, ok := sections[row.Area]
		if !ok {
			si = len(v.Sections)
			sections[row.Area] = si
			v.Sections = append(v.Sections, areaSection{Area: row.Area, Same: true})
		}
		differs := Differs(row)
		rv := rowView{Index: ri, ID: row.ID, Level: row.Level, Text: row.Text, Same: !differs}
		s := &v.Sections[si]
		s.Rules++
		if differs {
			s.Differ++
			s.Same = false
			v.DifferRules++
		}
		for bi, c := range row.Cells {
			if bi >= len(r.Backends) {
				break
			}
			name := r.Backends[bi].Name
			cv := cellView{ID: fmt.Sprintf("c%d-%d", ri, bi), Class: outcomeClass(c.Outcome),
				Summary: CellSummary(row, c), Href: "#open=" + row.ID + "," + name}
			if plainCell(c) {
				cv.ID, cv.NumberID = "open="+row.ID+","+name, fmt.Sprintf("open=%d,%d", ri, bi)
			} else {
				v.Evidence = append(v.Evidence, evidenceFor(r, ri, bi))
			}
			rv.Cells = append(rv.Cells, cv)
		}
		s.Rows = append(s.Rows, rv)
	}
	var words []string
	for _, o := range severityOrder(order) {
		if o != LeftOut { // not a cell's outcome: how a cell the filter left out is counted
			words = append(words, StyleOf(o).Word)
		}
	}
	v.Order = strings.Join(words, " < ")
	for _, l := range legendOf(r) {
		v.Legend = append(v.Legend, legendView{outcomeClass(l.Outcome), StyleOf(l.Outcome).Word, l.Meaning})
	}
	return v
}

// severityOrder sorts outcomes from the mildest to the worst, as a cell picks its worst spec.
func severityOrder(os []verdict.Outcome) []verdict.Outcome {
	out := append([]verdict.Outcome(nil), os...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && verdict.Worse(out[j-1], out[j]); j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// plainCell reports whether a cell is a plain pass, with nothing to read beyond the word.
func plainCell(c Cell) bool { return c.Outcome == verdict.Pass && len(cellChoices(c)) == 0 }

func evidenceFor(r Report, ri, bi int) evidenceView {
	row, b := r.Rules[ri], r.Backends[bi]
	c := row.Cells[bi]
	st := StyleOf(shownOutcome(c))
	e := evidenceView{RuleIndex: ri, BackendIndex: bi, ID: row.ID, Backend: b.Name, Word: st.Word, Class: outcomeClass(c.Outcome),
		Text: row.Text, Level: row.Level, Area: row.Area, Source: row.Source}
	if c.Outcome == verdict.DocumentedDiff {
		e.Cosmos = row.CosmosDifference
	}
	for _, s := range c.Specs {
		if s.Outcome == verdict.Pass && len(s.Choices) == 0 && c.Outcome != verdict.Pass {
			e.AlsoPassed++
			continue
		}
		sv := specView{SpecResult: s, Word: StyleOf(shownSpecOutcome(s)).Word, Class: outcomeClass(s.Outcome), Said: SpecWords(s)}
		sv.Folded = len(s.Failure) > foldFailureOver || strings.Count(s.Failure, "\n") > 6
		for _, ch := range s.Choices {
			sv.Choices = append(sv.Choices, choiceView{ChoiceWords(ch), ch})
		}
		e.Specs = append(e.Specs, sv)
	}
	return e
}

// svgBar draws counts as one horizontal bar of segments, in the order of Groups, scaled to
// total; its title and label say the numbers.
func svgBar(counts map[verdict.Outcome]int, total, width, height int, label string) template.HTML {
	if total == 0 {
		total = 1
	}
	gc := groupCounts(counts)
	var words []string
	for _, g := range gc {
		words = append(words, fmt.Sprintf("%d %s", g.N, g.Group))
	}
	title := html.EscapeString(label + ": " + strings.Join(words, ", "))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bar" width="%d" height="%d" viewBox="0 0 %d %d" preserveAspectRatio="none" role="img" aria-label="%s"><title>%s</title>`,
		width, height, width, height, title, title)
	x := 0.0
	for _, g := range gc {
		wd := float64(g.N) * float64(width) / float64(total)
		fmt.Fprintf(&b, `<rect x="%.1f" width="%.1f" height="%d" fill="%s"/>`, x, wd, height, groupColour(g.Group))
		x += wd
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from numbers, known colours and escaped text
}

// barNote is the short text beside an area's bar: the rules that need a look.
func barNote(counts map[verdict.Outcome]int) string {
	var parts []string
	for _, g := range groupCounts(counts) {
		switch g.Group {
		case GroupFail:
			parts = append(parts, fmt.Sprintf("%d fail", g.N))
		case GroupKnown:
			parts = append(parts, fmt.Sprintf("%d known", g.N))
		case GroupDocument:
			parts = append(parts, fmt.Sprintf("%d documented", g.N))
		case GroupBlocked, GroupNoAnswer, GroupInterrupted:
			parts = append(parts, fmt.Sprintf("%d %s", g.N, g.Group))
		}
	}
	return strings.Join(parts, ", ")
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Azure Table API conformance report</title>
<style>
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;margin:12px 18px;color:#1b1f24}
h1{font-size:1.35em;margin:0} h2{font-size:1.1em;margin:14px 0 6px} .muted{color:#57606a}
header p{margin:2px 0 8px}
#verdicts{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:8px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:6px 9px}
.card .name{font-weight:600;font-size:1.05em} .card .v{font-weight:600;margin:2px 0}
.v-ok{color:#1a7f37}.v-bad{color:#cf222e}.v-other{color:#9a6700}
.v-warn{color:#7d4e00;background:#fff8c5;border-left:4px solid #d4a72c;padding:1px 4px}
.card .counts{font-size:12px} .card svg{width:100%}
table{border-collapse:collapse} th,td{border:1px solid #d0d7de;padding:2px 6px;vertical-align:top;text-align:left}
th{background:#f6f8fa}
#picture td{border:0;padding:1px 8px 1px 0;white-space:nowrap} #picture th{border:0;background:none;padding:1px 8px 1px 0}
#picture a{color:inherit} #picture .note{font-size:11px;color:#57606a;display:inline-block;min-width:7em;margin-left:4px}
svg.bar{vertical-align:middle;background:#f6f8fa}
.swatch{display:inline-block;width:10px;height:10px;margin:0 3px 0 10px;vertical-align:-1px}
#controls{display:flex;gap:14px;align-items:center;margin:6px 0}
#matrix{table-layout:fixed;width:100%} #matrix col.level{width:4.5em} #matrix col.rule{width:30%}
#matrix thead th{position:sticky;top:0;z-index:1}
#matrix td{overflow-wrap:anywhere} #matrix td.rule .t{color:#57606a;font-size:12px}
#matrix tr.areahead th{background:#eaeef2;text-align:left}
#matrix td.cell{font-size:12px}
#matrix td.cell a{color:inherit;text-decoration:none;display:block}
#matrix td.cell.open,#matrix td.cell:target,#matrix td.cell:has(>a:target){outline:3px solid #0969da;outline-offset:-3px}
#all:not(:checked)~#matrix .same{display:none}
#all~#matrix.searching tbody,#all~#matrix.searching tr.rule{display:none}
#all~#matrix.searching tbody.hit{display:table-row-group}
#all~#matrix.searching tr.rule.hit{display:table-row}
#all:not(:checked)~#matrix:not(.searching) tbody.forced,#all:not(:checked)~#matrix:not(.searching) tbody:has(:target){display:table-row-group}
#all:not(:checked)~#matrix:not(.searching) tr.forced,#all:not(:checked)~#matrix:not(.searching) tr:has(:target),#all:not(:checked)~#matrix:not(.searching) tbody:target tr{display:table-row}
#all:not(:checked)~#matrix:not(.searching) tbody:target{display:table-row-group}
.o-pass{background:#dafbe1}.o-info{background:#ddf4ff}
.o-fail,.o-unexpected-pass{background:#ffd8d3;color:#82071e;font-weight:600}
.o-error,.o-blocked,.o-interrupted,.o-inconclusive{background:#fff1c2}
.o-expected-failure,.o-flaky{background:#eaeef2}
.o-documented-difference{background:#f3e8ff;color:#512a97;box-shadow:inset 3px 0 #8250df}
.o-skipped,.o-not-run,.o-partial{background:#f6f8fa;color:#57606a}
.tag{padding:0 4px;border-radius:3px}
#evidence article{border:1px solid #d0d7de;border-radius:6px;padding:4px 10px;margin:8px 0;background:#fff}
#evidence article{content-visibility:auto;contain-intrinsic-size:auto 160px}
#evidence article:target,#evidence :target>article{display:block;position:fixed;right:0;top:0;bottom:0;margin:0;width:min(48em,60vw);overflow:auto;z-index:5;box-shadow:-4px 0 14px #0003;border-radius:0;content-visibility:visible}
article h3{font-size:1.05em} article h4{font-size:1em;margin:8px 0 2px}
article pre{white-space:pre-wrap;background:#f6f8fa;padding:6px;font-size:12px;margin:3px 0}
.close{float:right} .cosmos{color:#512a97;font-weight:600}
#legend dt{float:left;clear:left;width:13em;margin:1px 0} #legend dd{margin:1px 0 1px 14em}
</style></head><body>
<header><h1>Azure Table API conformance report</h1>
<p class="muted">Generated {{.Generated.Format "2006-01-02 15:04 MST"}} by conform {{.Conform}}.{{if .Command}} Reproduce with <code>{{.Command}}</code>{{end}}</p></header>
<section id="verdicts">{{range .Cards}}
<div class="card"><div class="name">{{.Name}}</div><div class="muted">{{.Desc}}</div>
<div class="v {{.VerdictClass}}">{{if .StartError}}not run: {{.StartError}}{{else}}{{.Verdict}}{{end}}</div>
{{.Bar}}<div class="counts">rules: {{.RuleCounts}}</div><div class="counts muted">specs: {{.SpecCounts}}</div>{{range .Confirmation}}<div class="counts">{{.}}</div>{{end}}{{if .Baseline}}<div class="counts">{{.Baseline}}</div>{{end}}</div>{{end}}
</section>
<section id="picture"><h2>Rules per area</h2>
<table><thead><tr><th>area <span class="muted">(rules of every level)</span></th><th>differ</th>{{range .Cards}}<th>{{.Name}}</th>{{end}}</tr></thead><tbody>
{{range .Areas}}{{$a := .}}<tr><td><a href="#area-{{.Area}}">{{.Area}}</a> <span class="muted">({{.Rules}})</span></td><td>{{if .Differ}}{{.Differ}}{{else}}<span class="muted">–</span>{{end}}</td>{{range $i, $b := .Bars}}<td>{{$b}}<span class="note">{{index $a.Notes $i}}</span></td>{{end}}</tr>
{{end}}</tbody></table>
<p class="muted">{{range .Groups}}<span class="swatch" style="background:{{.Colour}}"></span>{{.Name}}{{end}}</p>
</section>
<section id="differences"><h2>{{if .Single}}Rules that did not plainly pass{{else}}Rules where the backends differ{{end}}: {{.DifferRules}} of {{.TotalRules}} <span class="muted">(rules of every level)</span></h2>
<p class="muted">{{if .Single}}One backend: the rules shown are those whose outcome is not a plain pass.{{else}}A rule differs when its backends' outcomes or recorded choices differ.{{end}} Click a cell for its evidence.</p>
<input type="checkbox" id="all"><label for="all"> show all {{.TotalRules}} rules</label>
<span id="controls"><input type="search" id="q" placeholder="search rule ids and texts" size="32"><span id="shown" class="muted">{{.DifferRules}} of {{.TotalRules}} rules shown</span></span>
<noscript><span class="muted">(search needs JavaScript; use the browser's find)</span></noscript>
<table id="matrix"><colgroup><col class="rule"><col class="level">{{range .Cards}}<col>{{end}}</colgroup><thead><tr><th>rule</th><th>level</th>{{range .Cards}}<th>{{.Name}}</th>{{end}}</tr></thead>
{{range .Sections}}<tbody class="area{{if .Same}} same{{end}}" id="area-{{.Area}}"><tr class="areahead{{if .Same}} same{{end}}"><th colspan="{{$.ColSpan}}">{{.Area}} <span class="muted">{{.Differ}} of {{.Rules}} differ</span></th></tr>
{{range .Rows}}<tr class="rule{{if .Same}} same{{end}}" id="r{{.Index}}"><td class="rule"><code>{{.ID}}</code><div class="t">{{.Text}}</div></td><td>{{.Level}}</td>{{range .Cells}}<td class="cell {{.Class}}" id="{{.ID}}"><a href="{{.Href}}"{{if .NumberID}} id="{{.NumberID}}"{{end}}>{{.Summary}}</a></td>{{end}}</tr>
{{end}}</tbody>
{{end}}</table>
</section>
<section id="legend"><h2>Legend</h2>
<p>A cell shows the worst outcome of the rule's specs on that backend, from mildest to worst: {{.Order}}. Links to a cell: <code>#open=RULE,BACKEND</code> (a rule id and a backend name) or <code>#open=ROW,COLUMN</code> (numbers from 0).</p>
<dl>{{range .Legend}}<dt><span class="tag {{.Class}}">{{.Word}}</span></dt><dd>{{.Meaning}}</dd>{{end}}</dl>
<p>Bars: {{range .Groups}}<span class="swatch" style="background:{{.Colour}}"></span><b>{{.Name}}</b>: {{.Means}}. {{end}}</p>
</section>
{{.CorpusHTML}}
<section id="evidence"><h2>Evidence</h2>
<p class="muted">Every cell that did not plainly pass, in rule order.</p>
{{range .Evidence}}<div id="open={{.RuleIndex}},{{.BackendIndex}}"><article class="ev {{.Class}}" id="open={{.ID}},{{.Backend}}" data-cell="c{{.RuleIndex}}-{{.BackendIndex}}">
<a class="close" href="#differences">close ✕</a>
<h3><code>{{.ID}}</code> on {{.Backend}}: <span class="tag {{.Class}}">{{.Word}}</span></h3>
<p>{{.Text}} ({{.Level}}, {{.Area}}) <a href="{{.Source}}">source</a></p>
{{if .Cosmos}}<p class="cosmos">Documented Cosmos DB difference: {{.Cosmos}}</p>{{end}}
{{range .Specs}}<h4><span class="tag {{.Class}}">{{.Word}}</span> {{.Text}}</h4>
{{range .Choices}}<p>Chose: <b>{{.Words}}</b> <span class="muted">({{.Raw}})</span></p>{{end}}
{{if .Difference}}<p class="cosmos">Documented difference: {{.Difference}}</p>{{end}}
{{if .Evidence}}<p>Baseline evidence: {{.Evidence}}</p>{{end}}
{{if .SkipReason}}<p>Skipped: {{.SkipReason}}</p>{{end}}
{{if .Failure}}{{if .Folded}}<p>{{.Said}}</p><details><summary>the whole failure</summary><pre>{{.Failure}}</pre></details>{{else}}<pre>{{.Failure}}</pre>{{end}}{{end}}{{if .Location}}<p class="muted">{{.Location}}</p>{{end}}
{{if .History}}<details><summary>Calls (what was sent, what came back)</summary><pre>{{.History}}</pre></details>{{end}}
{{else}}<p class="muted">No spec of this rule ran on this backend.</p>{{end}}
{{if .AlsoPassed}}<p class="muted">{{.AlsoPassed}} other spec(s) passed.</p>{{end}}
</article></div>
{{end}}</section>
<script>
(function(){
var t=document.getElementById('matrix'),q=document.getElementById('q'),all=document.getElementById('all'),shown=document.getElementById('shown');
var rows=t.querySelectorAll('tr.rule'),bodies=t.querySelectorAll('tbody');
function count(){var n=0,s=t.classList.contains('searching');rows.forEach(function(r){
  if(s?r.classList.contains('hit'):(all.checked||!r.classList.contains('same')||r.classList.contains('forced')))n++;});
  shown.textContent=n+' of '+rows.length+' rules shown';}
q.addEventListener('input',function(){
  var s=q.value.trim().toLowerCase();t.classList.toggle('searching',!!s);
  bodies.forEach(function(b){var any=false;b.querySelectorAll('tr.rule').forEach(function(r){
    var hit=!!s&&r.cells[0].textContent.toLowerCase().indexOf(s)>=0;r.classList.toggle('hit',hit);any=any||hit;});
    b.classList.toggle('hit',any);});
  count();});
all.addEventListener('change',count);
function open(){
  t.querySelectorAll('.open,.forced').forEach(function(e){e.classList.remove('open','forced');});
  var id;try{id=decodeURIComponent(location.hash.slice(1));}catch(e){return;}
  if(id.indexOf('open=')!==0)return;
  var el=document.getElementById(id);if(!el)return;
  var a=el.tagName==='ARTICLE'?el:el.querySelector('article');
  var td=a?document.getElementById(a.dataset.cell):el.closest('td');if(!td)return;
  td.classList.add('open');td.parentNode.classList.add('forced');td.parentNode.parentNode.classList.add('forced');
  count();}
window.addEventListener('hashchange',open);open();count();
})();
</script>
</body></html>
`))
