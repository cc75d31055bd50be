package report

import (
	"html/template"
	"io"
	"sort"
)

var htmlWords = map[Outcome]string{
	Pass: "pass", Fail: "FAIL", Error: "error", Skipped: "skipped", ExpectedFail: "known divergence",
	UnexpectedPass: "UNEXPECTED PASS", Info: "info", DocumentedDiff: "documented difference", NotRun: "not run",
}

// WriteHTML writes the report as one self-contained page (no network): the matrix first,
// filterable by area and outcome; each cell opens to its evidence.
func WriteHTML(w io.Writer, r Report) error {
	areas := map[string]bool{}
	for _, row := range r.Rules {
		areas[row.Area] = true
	}
	var areaList []string
	for a := range areas {
		areaList = append(areaList, a)
	}
	sort.Strings(areaList)
	return page.Execute(w, struct {
		Report
		Areas    []string
		Outcomes []LegendRow
	}{r, areaList, Legend})
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	// Words, not emoji: the page must read the same without an emoji font; colour carries
	// the rest.
	"symbol": func(o Outcome) string { return htmlWords[o] },
	"corpus": CorpusHTML,
	"backendName": func(r Report, i int) string {
		if i < len(r.Backends) {
			return r.Backends[i].Name
		}
		return ""
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Azure Table API conformance report</title>
<style>
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#1b1f24}
h1{font-size:1.5em;margin:0 0 .3em} h2{font-size:1.15em;margin:1.4em 0 .5em}
table{border-collapse:collapse} th,td{border:1px solid #d0d7de;padding:3px 7px;vertical-align:top}
th{background:#f6f8fa;position:sticky;top:0} td.rule code{font-size:12px}
td.cell{cursor:pointer;white-space:nowrap;text-align:center}
.pass{background:#dafbe1}.fail{background:#ffd8d3}.error{background:#fff1c2}.skipped,.not-run{background:#f6f8fa;color:#57606a}
.expected-failure{background:#eaeef2}.unexpected-pass{background:#ffb3ad}.info{background:#ddf4ff}.documented-difference{background:#e8e1ff}
#filters{margin:.6em 0;display:flex;gap:1em;flex-wrap:wrap;align-items:center}
#evidence{position:fixed;right:0;top:0;bottom:0;width:min(46em,55vw);background:#fff;border-left:2px solid #d0d7de;padding:1em;overflow:auto;display:none;box-shadow:-4px 0 12px #0002}
#evidence pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em;font-size:12px}
#close{float:right} .muted{color:#57606a} .verdict{font-weight:600}
</style></head><body>
<h1>Azure Table API conformance report</h1>
<p class="muted">Generated {{.Generated.Format "2006-01-02 15:04 MST"}} by conform {{.Conform}}.{{if .Command}} Reproduce with <code>{{.Command}}</code>{{end}}</p>
<div id="filters">
<label>Area <select id="area"><option value="">all</option>{{range .Areas}}<option>{{.}}</option>{{end}}</select></label>
<label>Outcome <select id="outcome"><option value="">any</option>{{range .Outcomes}}<option value="{{.Outcome}}">{{.Outcome}}</option>{{end}}</select></label>
<label>Level <select id="level"><option value="">any</option><option>MUST</option><option>SHOULD</option><option>MAY</option></select></label>
<span id="shown" class="muted"></span>
</div>
<table id="matrix"><thead><tr><th>rule</th><th>level</th><th>area</th>{{range .Backends}}<th>{{.Name}}<br><span class="muted">{{.Kind}} {{.Version}}</span></th>{{end}}</tr></thead><tbody>
{{range $ri, $row := .Rules}}<tr data-area="{{$row.Area}}" data-level="{{$row.Level}}" data-outcomes="{{range $row.Cells}}{{.Outcome}} {{end}}">
<td class="rule"><code>{{$row.ID}}</code></td><td>{{$row.Level}}</td><td>{{$row.Area}}</td>
{{range $ci, $c := $row.Cells}}<td class="cell {{$c.Outcome}}" data-rule="{{$ri}}" data-backend="{{$ci}}">{{symbol $c.Outcome}}</td>{{end}}
</tr>
{{end}}</tbody></table>
<h2>Backends</h2>
<table><thead><tr><th>backend</th><th>kind</th><th>version</th><th>endpoint</th><th>driver</th><th>profile</th><th>verdict</th><th>passed</th><th>failed</th><th>errors</th><th>expected</th><th>unexpected passes</th><th>documented differences</th><th>skipped (capability)</th><th>skipped (filter)</th></tr></thead><tbody>
{{range .Backends}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Version}}</td><td>{{.Endpoint}}</td><td>{{.Driver}}</td><td>{{.Profile}}</td>
<td class="verdict">{{if .StartError}}not run: {{.StartError}}{{else}}{{.Verdict}}{{range .FailingFeatures}} ({{.}}){{end}}{{end}}</td>
<td>{{.Counts.Passed}}</td><td>{{.Counts.Failed}}</td><td>{{.Counts.Errors}}</td><td>{{.Counts.ExpectedFailures}}</td><td>{{.Counts.UnexpectedPasses}}</td><td>{{.Counts.DocumentedDiffs}}</td><td>{{.Counts.SkippedCapability}}</td><td>{{.Counts.SkippedByFilter}}</td></tr>
{{end}}</tbody></table>
<h2>Legend</h2><ul>{{range .Outcomes}}<li><span class="{{.Outcome}}">{{symbol .Outcome}}</span>: {{.Meaning}}</li>{{end}}</ul>
{{corpus .Corpus}}
<div id="evidence"><button id="close">close</button><div id="body"></div></div>
<script id="data" type="application/json">{{.Report}}</script>
<script>
(function(){
var report = JSON.parse(document.getElementById('data').textContent);
if (typeof report === 'string') report = JSON.parse(report);
function esc(s){return String(s==null?'':s).replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
function filter(){
  var a=document.getElementById('area').value, o=document.getElementById('outcome').value, l=document.getElementById('level').value, n=0;
  document.querySelectorAll('#matrix tbody tr').forEach(function(tr){
    var show=(!a||tr.dataset.area===a)&&(!l||tr.dataset.level===l)&&(!o||(' '+tr.dataset.outcomes).indexOf(' '+o+' ')>=0);
    tr.style.display=show?'':'none'; if(show)n++;
  });
  document.getElementById('shown').textContent=n+' of '+report.rules.length+' rules shown';
}
['area','outcome','level'].forEach(function(id){document.getElementById(id).addEventListener('change',filter);});
document.getElementById('close').addEventListener('click',function(){document.getElementById('evidence').style.display='none';});
function open(ri,bi){
  var row=report.rules[ri], b=report.backends[bi]; if(!row||!b)return; var c=row.cells[bi];
  var h='<h2>'+esc(row.id)+' on '+esc(b.name)+': '+esc(c.outcome)+'</h2><p>'+esc(row.text)+' ('+esc(row.level)+') <a href="'+esc(row.source)+'">source</a></p>';
  if(row.cosmosDifference)h+='<p class="muted">Documented Cosmos DB difference: '+esc(row.cosmosDifference)+'</p>';
  (c.specs||[]).forEach(function(s){
    h+='<h3 class="'+esc(s.outcome)+'">'+esc(s.outcome)+': '+esc(s.text)+'</h3>';
    if(s.documentedDifference)h+='<p>Documented difference: '+esc(s.documentedDifference)+'</p>';
    if(s.baselineEvidence)h+='<p>Baseline evidence: '+esc(s.baselineEvidence)+'</p>';
    if(s.choices)h+='<p>Chose: '+esc(s.choices.join('; '))+'</p>';
    if(s.skipReason)h+='<p>Skipped: '+esc(s.skipReason)+'</p>';
    if(s.failure)h+='<pre>'+esc(s.failure)+'</pre>';
    if(s.location)h+='<p class="muted">'+esc(s.location)+'</p>';
    if(s.history)h+='<p>Calls (what was sent, what came back):</p><pre>'+esc(s.history)+'</pre>';
  });
  if(!(c.specs||[]).length)h+='<p class="muted">No spec of this rule ran on this backend.</p>';
  document.getElementById('body').innerHTML=h; document.getElementById('evidence').style.display='block';
  history.replaceState(null,'','#open='+ri+','+bi);
}
document.querySelectorAll('td.cell').forEach(function(td){td.addEventListener('click',function(){open(+td.dataset.rule,+td.dataset.backend);});});
filter();
var m=/^#open=(\d+),(\d+)$/.exec(location.hash); if(m)open(+m[1],+m[2]);
})();
</script>
</body></html>
`))
