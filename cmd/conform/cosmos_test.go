package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// `conform list --profile cosmos` lists exactly the rules where Cosmos DB does not answer
// as Storage, each saying how; the text listing has a COSMOS column.
func TestListProfileCosmos(t *testing.T) {
	out, _, code := conform(t, "list", "--profile", "cosmos", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var listed []listedRule
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, r := range spec.Rules() {
		if r.Cosmos.KindOrSame() != spec.CosmosSame {
			want = append(want, r.ID)
		}
	}
	for _, r := range listed {
		got = append(got, r.ID)
		if r.Cosmos.Answer == "" || r.Cosmos.Evidence == "" {
			t.Errorf("%s: listed without Cosmos's answer or evidence: %+v", r.ID, r.Cosmos)
		}
	}
	if !slices.Equal(got, want) || len(want) < 30 {
		t.Errorf("listed %v\nwant %v", got, want)
	}
	text, _, _ := conform(t, "list")
	if !strings.Contains(text, "COSMOS") || !strings.Contains(text, "unsupported: 501 NotImplemented") {
		t.Errorf("the text listing lacks the Cosmos column:\n%.400s", text)
	}
}

// cosmosDiffering lists the rules where Cosmos DB answers otherwise than Storage or does
// not serve the feature; with requiredOnly, only those where Cosmos was never recorded
// answering as Storage does (Cosmos.StorageToo).
func cosmosDiffering(requiredOnly bool) []string {
	var out []string
	for _, r := range spec.Rules() {
		if k := r.Cosmos.KindOrSame(); (k == spec.CosmosDiffers || k == spec.CosmosUnsupported) && !(requiredOnly && r.Cosmos.StorageToo) {
			out = append(out, r.ID)
		}
	}
	sort.Strings(out)
	return out
}

// runFailures runs the whole suite against backend under profile and returns the rules
// whose cell neither passed (as Storage, or as the profile documents) nor is not applicable,
// those not applicable, and the run's exit status.
func runFailures(t *testing.T, backend, profile string) (failing, notApplicable []string, exit int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "report")
	_, stderr, code := conform(t, "run", "--backend", backend, "--profile", profile, "--no-corpus", "--out", dir)
	if code != 0 && code != 1 {
		t.Fatalf("run %s --profile %s: exit %d\n%s", backend, profile, code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rules {
		switch o := row.Cells[0].Outcome; {
		case o == verdict.NotApplicable:
			notApplicable = append(notApplicable, row.ID)
		case o == verdict.Pass || o == verdict.Info || o == verdict.DocumentedDiff:
			// A documented difference is the profile's answer: it passes.
		case o == verdict.Skipped || o == verdict.NotRun:
			t.Errorf("%s on %s: %s", row.ID, backend, o)
		default:
			failing = append(failing, row.ID)
		}
	}
	sort.Strings(failing)
	return failing, notApplicable, code
}

// Issue 21's verdicts: reference-cosmos conforms under --profile cosmos, with no rule
// excepted; the Storage reference under --profile cosmos fails exactly the rules where
// Cosmos differs; reference-cosmos under the Storage profile fails exactly those rules too
// (it reproduces every difference, case-sensitive table names among them). Unsupported
// features are not applicable, never passed.
func TestCosmosProfileVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of the whole suite; skipped with -short")
	}
	differing, required := cosmosDiffering(false), cosmosDiffering(true)
	t.Run("reference-cosmos, profile cosmos", func(t *testing.T) {
		failing, na, exit := runFailures(t, "reference-cosmos", "cosmos")
		if len(failing) != 0 || exit != 0 {
			t.Errorf("failing %v (exit %d), want none: the run conforms", failing, exit)
		}
		for _, r := range spec.Rules() {
			if k := r.Cosmos.KindOrSame(); (k == spec.CosmosUnsupported || k == spec.CosmosUnpromised) && len(r.Cosmos.Specs) == 0 && !slices.Contains(na, r.ID) {
				t.Errorf("%s (%s on Cosmos) is not shown as not applicable", r.ID, k)
			}
			// Issue 31, item 9: where only the order is not promised, the rest of the rule
			// is judged.
			if r.Cosmos.KindOrSame() == spec.CosmosOrderUnpromised && slices.Contains(na, r.ID) {
				t.Errorf("%s (order not promised on Cosmos) is shown as not applicable", r.ID)
			}
		}
	})
	t.Run("reference, profile cosmos", func(t *testing.T) {
		failing, _, _ := runFailures(t, "reference", "cosmos")
		if !slices.Equal(failing, required) {
			t.Errorf("failing %v\nwant the rules where Cosmos differs (and never answered as Storage) %v", failing, required)
		}
	})
	t.Run("reference-cosmos, profile storage", func(t *testing.T) {
		failing, na, _ := runFailures(t, "reference-cosmos", "storage")
		want := flavourDiffering(differing)
		if !slices.Equal(failing, want) {
			t.Errorf("failing %v\nwant the rules where the flavour answers as Cosmos does %v", failing, want)
		}
		if len(na) != 0 {
			t.Errorf("not applicable under the Storage profile: %v", na)
		}
	})
}

// flavourDiffering lists the rules the Cosmos flavour fails under the Storage profile: those
// where Cosmos differs, but protocol.request-id, where Cosmos answered both ways and the
// flavour models the era that answered as Storage (E-cosmos-headers); those whose order
// Cosmos does not promise and pagination.resume-after-insert, since the flavour lists in
// insertion order (E-cosmos-order, E-cosmos-resume); and the pagination rules whose specs
// rest on key order, blocked by ordering.key-order.
func flavourDiffering(differing []string) []string {
	var out []string
	for _, id := range differing {
		if id != "protocol.request-id" {
			out = append(out, id)
		}
	}
	for _, r := range spec.Rules() {
		if r.Cosmos.KindOrSame() == spec.CosmosOrderUnpromised {
			out = append(out, r.ID)
		}
	}
	out = append(out, "pagination.resume-after-insert", "pagination.resume", "pagination.resume-after-delete", "pagination.resume-reads-current")
	sort.Strings(out)
	return slices.Compact(out)
}

// `conform serve --flavor cosmos` answers as Cosmos DB does, through the official Go SDK's
// connection string, and past --cosmos-ru-per-second answers 429 as recorded, without a
// retry-after header (E-cosmos-throttling).
func TestServeCosmosFlavor(t *testing.T) {
	conn, base := startServe(t, "--flavor", "cosmos", "--cosmos-ru-per-second", "3")
	if !strings.Contains(conn, "AccountKey=") {
		t.Fatalf("connection string %q", conn)
	}
	throttled := 0
	for range 8 {
		resp, err := http.Get(base + "/" + "devstoreaccount1/Tables")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.Header.Get("X-Ms-Version") != "" || resp.Header.Get("Server") != "" {
			t.Errorf("Storage's headers on a Cosmos answer: %v", resp.Header)
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			throttled++
			if resp.Header.Get("X-Ms-Retry-After-Ms") != "" || resp.Header.Get("Retry-After") != "" {
				t.Errorf("429 with a retry-after header, which no recorded answer has: %v", resp.Header)
			}
		}
	}
	if throttled == 0 {
		t.Error("8 requests within a budget of 3 request units a second were not throttled")
	}
}

// Issue 31, item 9: under the cosmos profile the order of query results is not promised,
// but which entities come back is: against a backend that loses an entity at every page
// boundary the ordering rules that page are judged (blocked by pagination.exactly-once,
// whose subject the loss is: issue 30), never inert as "not applicable"; one that only
// reverses each page's order answers as Cosmos may.
func TestCosmosProfileJudgesTheEntitiesOfOrderingRules(t *testing.T) {
	outcomes := func(backend string) map[string]verdict.Outcome {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "report")
		_, stderr, code := conform(t, "run", "--backend", backend, "--profile", "cosmos", "--label-filter", "area:ordering", "--no-corpus", "--out", dir)
		if code != 0 && code != 1 {
			t.Fatalf("run %s: exit %d\n%s", backend, code, stderr)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep report.Report
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		out := map[string]verdict.Outcome{}
		for _, row := range rep.Rules {
			out[row.ID] = row.Cells[0].Outcome
		}
		return out
	}
	lossy := outcomes("mutant:continuation-skips-one@reference-cosmos")
	for _, id := range []string{"ordering.across-pages", "ordering.across-partitions"} {
		if lossy[id] != verdict.Blocked && lossy[id] != verdict.Fail {
			t.Errorf("%s against a backend that loses entities between pages: %s, want blocked (by pagination.exactly-once) or fail", id, lossy[id])
		}
	}
	reversed := outcomes("mutant:reverse-page-order@reference-cosmos")
	for _, id := range []string{"ordering.key-order", "ordering.filtered", "ordering.across-partitions"} {
		if reversed[id] != verdict.DocumentedDiff {
			t.Errorf("%s against a backend that reverses each page: %s, want a documented difference", id, reversed[id])
		}
	}
}
