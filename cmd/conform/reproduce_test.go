package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// The "Reproduce with" line of a --rerun-failed report runs what that report re-ran (the
// rules that failed, by the label filter the re-run used), not the whole catalogue (issue
// 31, item 13); a quote in a filter stays quoted.
func TestRerunFailedReproducesWhatItRan(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "raw"), 0o755); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(report.Run{Backend: driver.Info{Name: "reference"}, Argument: "reference"})
	if err := os.WriteFile(filepath.Join(dir, "raw", "reference.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := report.Report{Schema: report.Schema, Backends: []report.Backend{{Info: driver.Info{Name: "reference"}}},
		Rules: []report.RuleRow{
			{ID: "batch.atomic", Cells: []report.Cell{{Outcome: verdict.Fail}}},
			{ID: "batch.empty", Cells: []report.Cell{{Outcome: verdict.Pass}}},
			{ID: "tables.create.conflict", Cells: []report.Cell{{Outcome: verdict.Blocked}}},
		}}
	f, err := os.Create(filepath.Join(dir, report.FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteJSON(f, rep); err != nil {
		t.Fatal(err)
	}
	f.Close()
	plan, err := planRun(runOptions{rerunFailed: dir, backendsAtOnce: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := "conform run --backend reference --label-filter '(batch.atomic || tables.create.conflict)'"; plan.command != want {
		t.Errorf("the rerun reproduces with %q, want %q", plan.command, want)
	}
	if got := reproduceCommand([]string{"reference"}, runOptions{}, "area:batch && !'x'"); !strings.HasSuffix(got, `--label-filter 'area:batch && !'\''x'\'''`) {
		t.Errorf("a quote in the filter: %s", got)
	}
}
