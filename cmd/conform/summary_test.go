package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// The end of a run lists the failing rules (the first 20, then how many more) with what
// the backend did, says when every failure is one the baseline expects, explains rules
// skipped by policy, and names report.html (issue 24, found 7 and 8).
func TestSummaryListsFailingRulesAndSaysWhy(t *testing.T) {
	rep := report.Report{Backends: []report.Backend{
		{Info: driver.Info{Name: "broken"}, Verdict: "does not conform", Counts: report.Counts{Unexpected: 1}},
		{Info: driver.Info{Name: "known"}, Verdict: "does not conform"},
	}}
	for i := range 25 {
		rep.Rules = append(rep.Rules, report.RuleRow{ID: fmt.Sprintf("area.rule%02d", i), Level: "MUST", Cells: []report.Cell{
			{Outcome: verdict.Fail, Specs: []report.SpecResult{{Outcome: verdict.Fail, Failure: "the rule expects the backend to fail with 409, but it succeeded"}}},
			{Outcome: verdict.ExpectedFail, Specs: []report.SpecResult{{Outcome: verdict.ExpectedFail, Evidence: "answers 400"}}},
		}})
	}
	rep.Rules = append(rep.Rules, report.RuleRow{ID: "area.should", Level: "SHOULD", Cells: []report.Cell{
		{Outcome: verdict.Pass, Specs: []report.SpecResult{{Outcome: verdict.Pass}}},
		{Outcome: verdict.ExpectedFail, Specs: []report.SpecResult{{Outcome: verdict.ExpectedFail, Evidence: "answers 400"}}},
	}})
	rep.Rules = append(rep.Rules, report.RuleRow{ID: "service.cors.actual-headers", Level: "MUST", Cells: []report.Cell{
		{Outcome: verdict.Skipped, Specs: []report.SpecResult{{Outcome: verdict.Skipped, Decision: verdict.Decision{Outcome: verdict.Skipped, Selected: true}, SkipReason: "changes account-wide settings: set CONFORM_ALLOW_ACCOUNT_CHANGES=1 to run it against this endpoint"}}},
		{Outcome: verdict.Pass},
	}})
	var buf bytes.Buffer
	printSummary(&buf, rep, "out")
	got := buf.String()
	for _, want := range []string{
		"FAIL area.rule00 (MUST): accepted",
		"FAIL area.rule19 (MUST): accepted",
		"... and 5 more (5 MUST rules; all in the report)",
		// Every count of rules names its level.
		"every failure (25 MUST and 1 SHOULD rules) is one the baseline expects",
		"rules: MUST 25 FAIL · 1 skipped; SHOULD 1 pass",
		"specs of every level: passed",
		"1 rule not run: service.cors.actual-headers. They change account-wide settings",
		"CONFORM_ALLOW_ACCOUNT_CHANGES=1",
		"Report: out/report.html",
		"1 spec not as the baseline and the profile expect",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "1 specs") {
		t.Errorf("summary says \"1 specs\":\n%s", got)
	}
	if strings.Contains(got, "area.rule20") {
		t.Errorf("summary lists more than 20 failing rules:\n%s", got)
	}
}

// conform report --publish writes conformance-report.yaml beside the report: the schema's
// version, the implementation, and counts that read back as written (issue 24, found 12).
func TestPublishWritesTheVersionedDocument(t *testing.T) {
	dir := t.TempDir()
	rep := report.Report{Schema: report.Schema, Conform: "v9", Backends: []report.Backend{
		{Info: driver.Info{Name: "mine", Kind: "endpoint", Version: "X/1", Driver: "rest"}, Verdict: "conforms", VerdictKind: verdict.Conforms},
		{Info: driver.Info{Name: "other", Kind: "azurite"}},
	}, Rules: []report.RuleRow{{ID: "batch.a", Area: "batch", Level: "MUST", Cells: []report.Cell{{Outcome: verdict.Pass}, {Outcome: verdict.Fail}}}}}
	if err := report.WriteDir(dir, rep); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) error {
		root := rootCmd()
		root.SetOut(&bytes.Buffer{})
		root.SetArgs(args)
		return root.Execute()
	}
	if err := run("report", "--publish", dir); err == nil || !strings.Contains(err.Error(), "choose one with --backend") {
		t.Errorf("two backends without --backend: %v", err)
	}
	if err := run("report", "--publish", dir, "--backend", "mine", "--implementation", "MyTables", "--implementation-version", "1.0"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, report.FilePublished))
	if err != nil {
		t.Fatal(err)
	}
	var got report.Published
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.APIVersion != report.PublishedSchema || got.Implementation.Name != "MyTables" || got.Implementation.Version != "1.0" ||
		got.ConformVersion != "v9" || got.Levels["MUST"].Passed != 1 || got.Areas[0].Name != "batch" {
		t.Errorf("published:\n%s", data)
	}
}
