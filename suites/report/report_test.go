package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tableconform/conform/fixtures"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
	"github.com/tableconform/conform/suites/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var testRules = []spec.Rule{
	{ID: "entity.insert.conflict", Level: spec.Must, Area: spec.AreaModification, Text: "Inserting an existing entity MUST fail with 409 EntityAlreadyExists.", Source: spec.SrcInsertEntity},
	{ID: "query.order.keys", Level: spec.Must, Area: spec.AreaOrdering, Text: "Results MUST come in PartitionKey, RowKey order.", Source: spec.SrcQueryingTables,
		Cosmos: spec.Cosmos{Kind: spec.CosmosUnpromised, Answer: "Results are not sorted."}},
	{ID: "pagination.boundary.token", Level: spec.May, Area: spec.AreaPagination, Text: "A page MAY end at a partition boundary with a continuation.", Source: spec.SrcPagination},
	{ID: "batch.max.operations", Level: spec.Must, Area: spec.AreaBatch, Feature: spec.FBatch, Text: "A batch of 101 operations MUST be refused.", Source: spec.SrcBatch},
	{ID: "auth.sas.read", Level: spec.Must, Area: spec.AreaAuth, Feature: spec.FSAS, Text: "A SAS with r MUST allow reads.", Source: spec.SrcServiceSAS},
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func specReport(backend, rule, text string, state types.SpecState, failure string, extra ...types.ReportEntry) types.SpecReport {
	r, _ := lookup(rule)
	entries := append([]types.ReportEntry{{Name: framework.EntryRule, Value: types.WrapEntryValue(framework.RuleEntry{ID: r.ID, Level: string(r.Level)})}}, extra...)
	return types.SpecReport{
		ContainerHierarchyTexts:  []string{"[backend " + backend + "]", "Area"},
		ContainerHierarchyLabels: [][]string{{framework.LabelBackend + backend}, {}},
		LeafNodeText:             text,
		LeafNodeLabels:           []string{rule},
		LeafNodeType:             types.NodeTypeIt,
		State:                    state,
		RunTime:                  5 * time.Millisecond,
		Failure:                  types.Failure{Message: failure},
		ReportEntries:            entries,
	}
}

func lookup(id string) (spec.Rule, bool) {
	for _, r := range testRules {
		if r.ID == id {
			return r, true
		}
	}
	return spec.Rule{}, false
}

func sample() Report {
	ref := Run{Backend: driver.Info{Name: "reference", Kind: "reference", Driver: "inproc", Version: "dev"}, Command: "conform run",
		Ginkgo: types.Report{StartTime: t0, SuiteSucceeded: true, SpecReports: types.SpecReports{
			specReport("reference", "entity.insert.conflict", "fails with 409", types.SpecStatePassed, ""),
			specReport("reference", "query.order.keys", "sorts keys", types.SpecStatePassed, ""),
			specReport("reference", "pagination.boundary.token", "may end at a boundary", types.SpecStatePassed, "",
				types.ReportEntry{Name: framework.EntryChoice, Value: types.WrapEntryValue(framework.Choice{What: "page end", Chosen: "no early end"})}),
			specReport("reference", "batch.max.operations", "refuses 101", types.SpecStatePassed, ""),
			specReport("reference", "auth.sas.read", "allows reads", types.SpecStateSkipped, "capability missing: sas"),
		}}}
	az := Run{Backend: driver.Info{Name: "azurite", Kind: "azurite", Driver: "rest", Version: "3.35.0", Endpoint: "http://127.0.0.1:10002/devstoreaccount1"},
		Profile: "cosmos", Command: "conform run",
		Ginkgo: types.Report{StartTime: t0, SuiteSucceeded: false, SpecReports: types.SpecReports{
			specReport("azurite", "entity.insert.conflict", "fails with 409", types.SpecStatePassed, "",
				listedFailure("entity.insert.conflict", "answers 400", fixtures.Signature{Status: 400, Code: "InvalidInput"})...),
			specReport("azurite", "query.order.keys", "sorts keys", types.SpecStateFailed, "results are not sorted by PartitionKey, RowKey"),
			specReport("azurite", "batch.max.operations", "refuses 101", types.SpecStateFailed, "transport error: unexpected EOF",
				types.ReportEntry{Name: framework.EntryTransport, Value: types.WrapEntryValue(framework.TransportEntry{Op: "SubmitBatch", Error: "unexpected EOF"})}),
			specReport("azurite", "auth.sas.read", "allows reads", types.SpecStateFailed, "the rule expects the backend to succeed, but it failed with 403 AuthorizationFailure"),
		}}}
	return Build([]Run{ref, az}, testRules, Meta{ConformVersion: "test", Command: "conform run --backend reference --backend azurite", Generated: t0})
}

func TestOutcomes(t *testing.T) {
	r := sample()
	want := map[string][2]verdict.Outcome{
		"entity.insert.conflict":    {verdict.Pass, verdict.ExpectedFail},
		"query.order.keys":          {verdict.Pass, verdict.NotApplicable},
		"pagination.boundary.token": {verdict.Info, verdict.NotRun},
		"batch.max.operations":      {verdict.Pass, verdict.Error},
		"auth.sas.read":             {verdict.Skipped, verdict.Fail},
	}
	for _, row := range r.Rules {
		w := want[row.ID]
		if row.Cells[0].Outcome != w[0] || row.Cells[1].Outcome != w[1] {
			t.Errorf("%s: got %s/%s, want %s/%s", row.ID, row.Cells[0].Outcome, row.Cells[1].Outcome, w[0], w[1])
		}
	}
	// The reference skipped a MUST rule: it conforms only on what ran, never plainly.
	if b := r.Backends[0]; b.VerdictKind != verdict.ConformsOn || b.Verdict != "conforms on 3 of 4 applicable MUST rules; 1 applicable MUST rules not judged (skipped, partly run or blocked)" {
		t.Errorf("reference verdict %q", b.Verdict)
	}
	if b := r.Backends[1]; b.VerdictKind != verdict.DoesNotConform || b.Coverage.Failing != 2 {
		t.Errorf("azurite verdict %q %+v", b.Verdict, b.Coverage)
	}
	if c := r.Backends[0].Counts; c.SkippedCapability != 1 || c.Passed != 4 || c.Information != 1 {
		t.Errorf("reference counts %+v", c)
	}
}

// "conforms to core" only when every core MUST rule ran and passed; it says how many MUST
// rules of extended features fail, and is never styled as "conforms".
func TestVerdictCore(t *testing.T) {
	specs := types.SpecReports{
		specReport("x", "entity.insert.conflict", "a", types.SpecStatePassed, ""),
		specReport("x", "batch.max.operations", "b", types.SpecStateFailed, "accepted 101"),
	}
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: append(specs,
		specReport("x", "query.order.keys", "c", types.SpecStatePassed, ""))}}}, testRules, Meta{})
	b := r.Backends[0]
	if b.VerdictKind != verdict.ConformsToCore || len(b.FailingFeatures) != 1 || b.FailingFeatures[0] != "batch" ||
		!strings.Contains(b.Verdict, "1 MUST rules of extended features fail (batch)") {
		t.Fatalf("verdict %q features %v", b.Verdict, b.FailingFeatures)
	}
	if VerdictStyleOf(verdict.ConformsToCore) == VerdictStyleOf(verdict.Conforms) {
		t.Error("conforms to core is shown as conforms")
	}
	var page, md bytes.Buffer
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<div class="v v-warn">conforms to core`) || !strings.Contains(md.String(), "🟡 **conforms to core") {
		t.Error("conforms to core is not shown as a warning in report.html and report.md")
	}
	// A core rule that did not run: core conformance is not claimed.
	r = Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: specs}}}, testRules, Meta{})
	if b := r.Backends[0]; b.VerdictKind != verdict.DoesNotConform || strings.Contains(b.Verdict, "core") {
		t.Fatalf("a core rule not run: verdict %s %q", b.VerdictKind, b.Verdict)
	}
}

// A request the driver's client cannot send is skipped for that column, never the
// backend's error (EVIDENCE.md 12).
func TestNotExpressibleIsSkippedNotBlamed(t *testing.T) {
	msg := "the rule expects the backend to succeed, but it had a transport error (conform:transport): sdk: get entity: " +
		"$select on Get Entity is not expressible with aztables v1.4.1 (" + driver.ErrNotExpressible.Error() + ")"
	notExpressible := types.ReportEntry{Name: framework.EntryNotExpressible, Value: types.WrapEntryValue(framework.TransportEntry{Op: "GetEntity",
		Error: "sdk: get entity: $select on Get Entity is not expressible with aztables v1.4.1"})}
	r := Build([]Run{{Backend: driver.Info{Name: "azurite+sdk"}, Ginkgo: types.Report{SpecReports: types.SpecReports{
		specReport("azurite+sdk", "entity.insert.conflict", "a", types.SpecStateFailed, msg, notExpressible),
		specReport("azurite+sdk", "batch.max.operations", "b", types.SpecStatePassed, ""),
	}}}}, testRules, Meta{})
	b := r.Backends[0]
	if b.VerdictKind != verdict.ConformsOn || b.Counts.Errors != 0 || b.Counts.SkippedCapability != 1 {
		t.Fatalf("verdict %q counts %+v", b.Verdict, b.Counts)
	}
	for _, row := range r.Rules {
		if row.ID != "entity.insert.conflict" {
			continue
		}
		c := row.Cells[0]
		want := "the driver cannot send this request: sdk: get entity: $select on Get Entity is not expressible with aztables v1.4.1"
		if c.Outcome != verdict.Skipped || len(c.Specs) != 1 || c.Specs[0].SkipReason != want {
			t.Fatalf("cell %+v", c)
		}
	}
}

// A spec whose request the driver could not send, but which also failed elsewhere (a
// cleanup, an AfterEach), or which panicked, is not skipped: only a plain failure is.
func TestNotExpressibleDoesNotHideOtherFailures(t *testing.T) {
	msg := "sdk: get entity: $select on Get Entity is not expressible with aztables v1.4.1 (" + driver.ErrNotExpressible.Error() + ")"
	notExpressible := types.ReportEntry{Name: framework.EntryNotExpressible, Value: types.WrapEntryValue(framework.TransportEntry{Op: "GetEntity", Error: msg})}
	withCleanupFailure := specReport("x", "entity.insert.conflict", "a", types.SpecStateFailed, msg, notExpressible)
	withCleanupFailure.AdditionalFailures = []types.AdditionalFailure{{State: types.SpecStateFailed, Failure: types.Failure{Message: "delete table: 500"}}}
	panicked := specReport("x", "batch.max.operations", "b", types.SpecStatePanicked, msg, notExpressible)
	r := Build([]Run{{Backend: driver.Info{Name: "x"}, Ginkgo: types.Report{SpecReports: types.SpecReports{withCleanupFailure, panicked}}}}, testRules, Meta{})
	for _, row := range r.Rules {
		if len(row.Cells) > 0 && row.Cells[0].Outcome == verdict.Skipped {
			t.Errorf("%s is skipped, want it blamed", row.ID)
		}
	}
	if c := r.Backends[0].Counts; c.SkippedCapability != 0 || c.Failed+c.Errors != 2 {
		t.Errorf("counts %+v", c)
	}
}

func TestMergeKeepsLastColumnPerBackend(t *testing.T) {
	a, b := sample(), sample()
	b.Backends[1].Version = "3.36.0"
	m := Merge(a, b)
	if len(m.Backends) != 2 || m.Backends[1].Version != "3.36.0" {
		t.Fatalf("merged backends %+v", m.Backends)
	}
	for _, row := range m.Rules {
		if len(row.Cells) != 2 {
			t.Fatalf("%s has %d cells", row.ID, len(row.Cells))
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file; run go test ./suites/report -update and review the diff\n--- got ---\n%s", name, got)
	}
}

func TestGoldenJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", buf.Bytes())
}

func TestGoldenMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.md", buf.Bytes())
}

func TestGoldenJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.golden.xml", buf.Bytes())
}

func TestHTMLIsSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, banned := range []string{"http://", "https://cdn", "<link ", "src=\"http"} {
		if strings.Contains(strings.ReplaceAll(html, "https://learn.microsoft.com", ""), banned) && banned != "http://" {
			t.Errorf("report.html refers to the network: %q", banned)
		}
	}
	if !strings.Contains(html, "query.order.keys") || !strings.Contains(html, `id="matrix"`) {
		t.Error("report.html lacks the matrix")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDir(dir, sample()); err != nil {
		t.Fatal(err)
	}
	r, err := ReadJSON(filepath.Join(dir, FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rules) != len(testRules) || r.Rules[0].Cells[1].Outcome == "" {
		t.Fatalf("round trip lost data: %+v", r.Rules[0])
	}
}
