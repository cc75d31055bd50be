package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/internal/buildinfo"
	"github.com/tableconform/conform/suites/report"
)

// The report's header and the in-process reference say the same build (buildinfo), and
// the linker flags the Makefile gives set what `conform version` prints.
func TestReportAndReferenceSayTheSameBuild(t *testing.T) {
	bin := conformBin
	want := buildinfo.Current()
	if !testing.Short() {
		bin = filepath.Join(t.TempDir(), "conform")
		const pkg = "github.com/tableconform/conform/internal/buildinfo"
		want = buildinfo.Info{Version: "v9.9.9-test", Commit: "0123456789abcdef0123456789abcdef01234567"}
		ldflags := "-X " + pkg + ".version=" + want.Version + " -X " + pkg + ".commit=" + want.Commit
		if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("build with -ldflags: %v\n%s", err, out)
		}
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil && !strings.Contains(strings.Join(args, " "), "run") {
			t.Fatalf("conform %v: %v", args, err)
		}
		return string(out)
	}
	if v := run("version"); !strings.HasPrefix(v, "conform "+want.Version+"\ncommit "+want.Commit+"\n") {
		t.Errorf("conform version:\n%s", v)
	}
	run("run", "--backend", "reference", "--label-filter", "area:types", "--out", "rep", "--no-corpus")
	rep, err := report.ReadJSON(filepath.Join(dir, "rep", report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conform != want.String() || len(rep.Backends) != 1 || rep.Backends[0].Version != "conform "+want.String() {
		t.Errorf("the report says conform %q, the reference %q; want %q", rep.Conform, rep.Backends[0].Version, want.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, "rep", report.FileHTML))
	if err != nil || !strings.Contains(string(page), "by conform "+want.String()+".") {
		t.Errorf("report.html does not name conform %s (%v)", want.String(), err)
	}
}
