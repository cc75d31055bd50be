package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of a headless-capable Chromium, or "" when none is installed
// (`apt-get install chromium`; `make browser-test` does it).
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
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir=" + userDir}
}

// TestHTMLInBrowser loads report.html in headless Chromium, lets its script run, and checks
// the DOM: the matrix is filtered and counted, and the cell named in the URL opens to its
// evidence. It writes a screenshot beside the report for a person to look at.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium installed: the browser test of report.html is skipped (apt-get install chromium)")
	}
	dir := t.TempDir()
	if err := WriteDir(dir, sample()); err != nil {
		t.Fatal(err)
	}
	r := sample()
	rule := -1
	for i, row := range r.Rules {
		if row.ID == "query.order.keys" {
			rule = i
		}
	}
	url := "file://" + filepath.Join(dir, FileHTML) + "#open=" + strconv.Itoa(rule) + ",1"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(chromiumFlags(filepath.Join(dir, "profile")), "--virtual-time-budget=3000", "--dump-dom", url)
	out, err := exec.CommandContext(ctx, bin, args...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	for _, want := range []string{
		"5 of 5 rules shown",                      // the filter script ran
		"query.order.keys on azurite",             // the evidence panel opened
		"Cosmos DB for Table does not sort query", // with the documented difference
		"results are not sorted by PartitionKey",  // and the failure
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "report.png")
	args = append(chromiumFlags(filepath.Join(dir, "profile2")), "--window-size=1400,900", "--virtual-time-budget=3000", "--screenshot="+shot, url)
	if err := exec.CommandContext(ctx, bin, args...).Run(); err != nil {
		t.Fatalf("chromium --screenshot: %v", err)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot missing or empty: %v", err)
	}
	if keep := os.Getenv("CONFORM_SCREENSHOT"); keep != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(keep, data, 0o644)
	}
}
