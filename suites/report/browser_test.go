package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium, or "" when none is installed
// (`make browser` installs Debian's).
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// chromiumFlags keep a headless Chromium off the network and away from the user's profile.
func chromiumFlags(userDir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + userDir}
}

// probeScript runs in the page after its load event and writes what a reader would see
// into a <pre id="probe"> for --dump-dom: where the first screen ends, which rules the
// matrix shows, what a search shows, which cell a deep link opened, and the load time.
// It only reads the page and acts as a user would (typing into the search box).
const probeScript = `<script>
window.addEventListener('load', function(){
  var out = {loadMs: performance.now(), width: innerWidth, height: innerHeight};
  function box(id){ var r = document.getElementById(id).getBoundingClientRect(); return {bottom: r.bottom, right: r.right}; }
  function visible(){ var ids=[]; document.querySelectorAll('#matrix tr.rule').forEach(function(tr){
    if (tr.offsetParent !== null) ids.push(tr.querySelector('code').textContent); }); return ids; }
  out.verdicts = box('verdicts'); out.picture = box('picture'); out.pageWidth = document.documentElement.scrollWidth;
  out.shown = visible();
  var tgt = document.querySelector(':target');
  if (tgt) { var el = tgt.tagName === 'ARTICLE' ? tgt : (tgt.querySelector('article') || tgt.closest('td') || tgt);
    var cs = getComputedStyle(el);
    out.open = {id: el.id, tag: el.tagName, position: cs.position, visible: cs.display !== 'none' && (cs.position === 'fixed' || el.offsetParent !== null)}; }
  var cell = document.querySelector('#matrix td.open'); if (cell) out.openCell = {id: cell.id, visible: cell.offsetParent !== null};
  var q = document.getElementById('q'); q.value = SEARCH; q.dispatchEvent(new Event('input'));
  out.searched = visible(); q.value = ''; q.dispatchEvent(new Event('input'));
  document.getElementById('all').checked = true; out.all = visible().length;
  var pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
});
</script>`

type probe struct {
	LoadMs            float64
	Width, Height     int
	Verdicts, Picture struct{ Bottom, Right float64 }
	PageWidth         int
	Shown, Searched   []string
	All               int
	Open              *struct {
		ID, Tag, Position string
		Visible           bool
	}
	OpenCell *struct {
		ID      string
		Visible bool
	}
}

var probeOut = regexp.MustCompile(`<pre id="probe">(.*?)</pre>`)

// chrome is the height of the headless window's frame: --window-size sets the window, and
// the viewport is that much smaller. browse measures it once.
var chrome = -1

// browse opens page (a report.html) with a viewport of 1280x800 and the probe added, at
// the given fragment, and returns what the probe saw.
func browse(t *testing.T, bin, page, fragment, search string) probe {
	t.Helper()
	if chrome < 0 {
		chrome = 0
		p := browse(t, bin, page, fragment, search)
		chrome = max(0, 800-p.Height)
	}
	dir := t.TempDir()
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	searchJS, _ := json.Marshal(search)
	probed := strings.Replace(string(html), "</body>", strings.Replace(probeScript, "SEARCH", string(searchJS), 1)+"</body>", 1)
	file := filepath.Join(dir, "report.html")
	if err := os.WriteFile(file, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(chromiumFlags(filepath.Join(dir, "profile")), fmt.Sprintf("--window-size=1280,%d", 800+chrome), "--dump-dom", "file://"+file+fragment)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	m := probeOut.FindSubmatch(out)
	if m == nil {
		t.Fatalf("the probe did not run; the page's DOM:\n%.2000s", out)
	}
	var p probe
	if err := json.Unmarshal([]byte(strings.NewReplacer("&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(string(m[1]))), &p); err != nil {
		t.Fatalf("probe output: %v: %s", err, m[1])
	}
	return p
}

// screenshot writes a 1280x800 PNG of page at fragment.
func screenshot(t *testing.T, bin, page, fragment, png string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append(chromiumFlags(filepath.Join(t.TempDir(), "profile")), "--window-size=1280,800", "--screenshot="+png, "file://"+page+fragment)
	if err := exec.CommandContext(ctx, bin, args...).Run(); err != nil {
		t.Fatalf("chromium --screenshot: %v", err)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 5_000 {
		t.Fatalf("screenshot missing or empty: %v", err)
	}
}

// TestHTMLInBrowser opens a report of a reference, an Azurite and a mutant in headless
// Chromium at 1280x800 and checks what a reader sees: the verdicts and the per-area picture
// on the first screen; by default only the rules whose backends differ, among them the
// empty batch Azurite answers with 500; search finds a rule the default view hides; and the
// deep links by name and by number open their cell. With CONFORM_BROWSER_REPORT=DIR it
// checks DIR/report.html (a real run of reference + azurite + a mutant) instead of the
// synthetic one; CONFORM_SCREENSHOT=FILE keeps a screenshot.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium installed: the browser test of report.html is skipped (make browser installs it)")
	}
	page := filepath.Join(t.TempDir(), FileHTML)
	r := syntheticReport("reference", "azurite", "mutant:batch-not-atomic")
	if dir := os.Getenv("CONFORM_BROWSER_REPORT"); dir != "" {
		var err error
		if r, err = ReadJSON(filepath.Join(dir, FileJSON)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	azurite, emptyBatch := -1, -1
	for i, b := range r.Backends {
		if b.Name == "azurite" {
			azurite = i
		}
	}
	var differ []string
	hidden := ""
	for i, row := range r.Rules {
		if row.ID == "batch.empty" {
			emptyBatch = i
		}
		if Differs(row) {
			differ = append(differ, row.ID)
		} else if hidden == "" && i > len(r.Rules)/2 {
			hidden = row.ID
		}
	}
	if azurite < 0 || emptyBatch < 0 || hidden == "" {
		t.Fatalf("the report lacks azurite, batch.empty or a rule alike on every backend")
	}

	p := browse(t, bin, page, "#open=batch.empty,azurite", hidden)
	t.Logf("load %.0f ms; first screen ends at %.0f px; %d of %d rules shown", p.LoadMs, p.Picture.Bottom, len(p.Shown), p.All)
	if p.Width != 1280 || p.Height != 800 {
		t.Errorf("viewport %dx%d, want 1280x800", p.Width, p.Height)
	}
	if p.Verdicts.Bottom > 800 || p.Picture.Bottom > 800 || p.Verdicts.Right > 1280 || p.Picture.Right > 1280 || p.PageWidth > 1280 {
		t.Errorf("the verdicts (bottom %.0f, right %.0f) and the picture (bottom %.0f, right %.0f) must fit 1280x800; page width %d",
			p.Verdicts.Bottom, p.Verdicts.Right, p.Picture.Bottom, p.Picture.Right, p.PageWidth)
	}
	if !slices.Equal(p.Shown, differ) {
		t.Errorf("the default view shows %d rules, want the %d that differ", len(p.Shown), len(differ))
	}
	if !slices.Contains(p.Shown, "batch.empty") {
		t.Error("the default view lacks batch.empty, where Azurite answers 500")
	}
	if p.All != len(r.Rules) {
		t.Errorf("show all shows %d rules, want %d", p.All, len(r.Rules))
	}
	if !slices.Equal(p.Searched, []string{hidden}) {
		t.Errorf("searching %q shows %v", hidden, p.Searched)
	}
	if p.Open == nil || p.Open.ID != "open=batch.empty,azurite" || p.Open.Tag != "ARTICLE" || !p.Open.Visible || p.Open.Position != "fixed" {
		t.Errorf("#open=batch.empty,azurite opened %+v, want its evidence as a panel", p.Open)
	}
	if want := fmt.Sprintf("c%d-%d", emptyBatch, azurite); p.OpenCell == nil || p.OpenCell.ID != want || !p.OpenCell.Visible {
		t.Errorf("#open=batch.empty,azurite marked cell %+v, want %s", p.OpenCell, want)
	}

	// By number, on a rule the default view hides: the row is shown for its open cell.
	hiddenIndex := slices.IndexFunc(r.Rules, func(row RuleRow) bool { return row.ID == hidden })
	p = browse(t, bin, page, fmt.Sprintf("#open=%d,%d", hiddenIndex, azurite), "batch.empty")
	if p.Open == nil || p.Open.ID != "open="+hidden+",azurite" || !p.Open.Visible {
		t.Errorf("#open=%d,%d opened %+v, want %s on azurite", hiddenIndex, azurite, p.Open, hidden)
	}
	if p.OpenCell == nil || !p.OpenCell.Visible {
		t.Errorf("#open=%d,%d: the cell %+v is not shown", hiddenIndex, azurite, p.OpenCell)
	}
	if !slices.Contains(p.Searched, "batch.empty") {
		t.Errorf("searching batch.empty shows %v", p.Searched)
	}

	shot := filepath.Join(t.TempDir(), "report.png")
	screenshot(t, bin, page, "", shot)
	if keep := os.Getenv("CONFORM_SCREENSHOT"); keep != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(keep, data, 0o644)
	}
}

// TestHTMLLoadsFiveBackendsQuickly loads a synthetic report of five backends (the whole
// catalogue, with evidence) and requires the page to be loaded, laid out and scripted in
// under a second.
func TestHTMLLoadsFiveBackendsQuickly(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium installed: the browser test of report.html is skipped (make browser installs it)")
	}
	r := syntheticReport("reference", "reference-http", "azurite", "mutant:batch-not-atomic", "cosmos")
	page := filepath.Join(t.TempDir(), FileHTML)
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(page)
	small := filepath.Join(t.TempDir(), FileHTML)
	if err := os.WriteFile(small, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ = os.Create(small)
	_ = WriteHTML(f, sample())
	f.Close()
	// The best of three loads of each: the machine is shared, and one slow load says little.
	bestOf := func(page string) float64 {
		best := 0.0
		for i := range 3 {
			p := browse(t, bin, page, "", "batch.empty")
			if i == 0 || p.LoadMs < best {
				best = p.LoadMs
			}
		}
		return best
	}
	base, best := bestOf(small), bestOf(page)
	t.Logf("5 backends, %d rules: %d KB, loaded in %.0f ms (a 5-rule report: %.0f ms)", len(r.Rules), st.Size()/1024, best, base)
	if base > 150 {
		t.Skipf("the machine is too busy to judge load time: even a 5-rule report took %.0f ms", base)
	}
	if best >= 1000 {
		t.Errorf("a 5-backend report took %.0f ms to load, want under 1 s", best)
	}
}
