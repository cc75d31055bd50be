package report

import (
	"fmt"
	"github.com/tableconform/conform/fixtures"
	"hash/fnv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/framework"
)

// syntheticReport builds, through Build, a report of the whole rule catalogue as a real run
// of the named backends would give it, without running anything: three specs per rule,
// with choices, baseline entries, failures with evidence and documented differences. The
// backends' behaviour comes from their names:
//   - "reference…": every spec passes; MAY and SHOULD rules record a refusal code;
//   - "azurite…": about one rule in six fails as its baseline expects; an empty batch is
//     answered 500; some choices differ from the reference's;
//   - "mutant…": about one rule in twelve fails, with a history of calls;
//   - "cosmos…" (profile cosmos): where Cosmos DB differs, the specs answer as Cosmos does.
func syntheticReport(backends ...string) Report {
	var runs []Run
	for _, name := range backends {
		run := Run{Backend: driver.Info{Name: name, Kind: strings.SplitN(name, ":", 2)[0], Driver: "rest", Version: "synthetic"},
			Command: "conform run", Ginkgo: types.Report{StartTime: t0, SuiteSucceeded: true}}
		if strings.HasPrefix(name, "cosmos") {
			run.Profile = "cosmos"
		}
		for _, r := range spec.Rules() {
			for i := range 3 {
				run.Ginkgo.SpecReports = append(run.Ginkgo.SpecReports, syntheticSpec(name, r, i))
			}
		}
		runs = append(runs, run)
	}
	return Build(runs, spec.Rules(), Meta{ConformVersion: "test", Command: "conform run --backend " + strings.Join(backends, " --backend "), Generated: t0})
}

func syntheticSpec(backend string, r spec.Rule, i int) types.SpecReport {
	h := fnv.New32a()
	fmt.Fprint(h, r.ID)
	n := h.Sum32()
	text := fmt.Sprintf("%s, case %d", strings.ReplaceAll(r.ID, ".", " "), i+1)
	entries := []types.ReportEntry{{Name: framework.EntryRule, Value: types.WrapEntryValue(framework.RuleEntry{ID: r.ID, Level: string(r.Level), Area: string(r.Area)})}}
	s := types.SpecReport{
		ContainerHierarchyTexts:  []string{"[backend " + backend + "]", string(r.Area)},
		ContainerHierarchyLabels: [][]string{{framework.LabelBackend + backend}, {r.ID}},
		LeafNodeText:             text, LeafNodeType: types.NodeTypeIt, State: types.SpecStatePassed, RunTime: 3 * time.Millisecond,
	}
	choice := func(what, chosen string) {
		entries = append(entries, types.ReportEntry{Name: framework.EntryChoice, Value: types.WrapEntryValue(framework.Choice{What: what, Chosen: chosen})})
	}
	history := strings.Repeat("→ POST /cfsynthetic0p1t1 HTTP/1.1 {\"PartitionKey\":\"p\",\"RowKey\":\"r\"}\n← 400 InvalidInput {\"odata.error\":{\"code\":\"InvalidInput\"}}\n", 8)
	switch {
	case strings.HasPrefix(backend, "azurite") && r.ID == "batch.empty":
		choice("answer to an empty transaction", `it failed with 500 ("Internal Server Error") [request id 5f1c]`)
	case strings.HasPrefix(backend, "azurite") && n%6 == 0:
		entries = append(entries, listedFailure(r.ID, "answers 400 InvalidInput where the rule asks otherwise", fixtures.Signature{Status: 400, Code: "InvalidInput"})...)
	case strings.HasPrefix(backend, "mutant") && n%12 == 1 && i == 0:
		s.State = types.SpecStateFailed
		s.Failure = types.Failure{Message: "the rule expects 409 EntityAlreadyExists, but it succeeded"}
		entries = append(entries, types.ReportEntry{Name: framework.EntryHistory, Value: types.WrapEntryValue(history)})
	case strings.HasPrefix(backend, "cosmos") && r.Cosmos.KindOrSame() != spec.CosmosSame && len(r.Cosmos.Specs) == 0:
		// The backend answers as Cosmos DB is recorded to.
		s.State = types.SpecStateFailed
		s.Failure = types.Failure{Message: "the answer differs: " + r.Cosmos.Answer}
		sig := fixtures.Signature{Assertion: "the answer differs"}
		if len(r.Cosmos.Statuses) > 0 {
			sig.Status, sig.Code = r.Cosmos.Statuses[0], r.Cosmos.Code
		}
		entries = append(entries, types.ReportEntry{Name: framework.EntrySignature, Value: types.WrapEntryValue(sig)})
	case r.Level != spec.Must && i == 0:
		chosen := "400 InvalidInput"
		if strings.HasPrefix(backend, "azurite") && n%3 == 0 {
			chosen = "success"
		}
		choice("refusal code", chosen)
	}
	s.ReportEntries = entries
	return s
}
