package report

import (
	"testing"

	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/verdict"
)

// The published document counts rules per level and per area as the legend judges their
// outcomes: against the backend is failed (expected failures too), nothing observed is
// skipped, the rest passed; names and versions can be replaced, addresses never appear.
func TestPublishCountsRulesPerAreaAndLevel(t *testing.T) {
	r := Report{Conform: "v1.2.3", Backends: []Backend{{Info: driver.Info{Name: "mine", Kind: "endpoint", Version: "Server/1",
		Driver: "rest", Endpoint: "https://secret.example/acct"}, Profile: "", VerdictKind: verdict.DoesNotConform, Verdict: "does not conform"}}}
	add := func(id, area, level string, o verdict.Outcome) {
		r.Rules = append(r.Rules, RuleRow{ID: id, Area: area, Level: level, Cells: []Cell{{Outcome: o}}})
	}
	add("batch.a", "batch", "MUST", verdict.Pass)
	add("batch.b", "batch", "MUST", verdict.Fail)
	add("batch.c", "batch", "MUST", verdict.ExpectedFail)
	add("batch.d", "batch", "SHOULD", verdict.Info)
	add("query.a", "query", "MUST", verdict.Error)
	add("query.b", "query", "MUST", verdict.Skipped)
	add("query.c", "query", "MAY", verdict.DocumentedDiff)
	p := Publish(r, 0, "", "2.0")
	if p.APIVersion != PublishedSchema || p.Implementation != (PublishedImpl{"mine", "2.0"}) || p.Profile != "storage" || p.ConformVersion != "v1.2.3" {
		t.Errorf("header: %+v", p)
	}
	if got := p.Levels["MUST"]; got != (RuleCounts{Passed: 1, Failed: 2, Skipped: 2}) {
		t.Errorf("MUST: %+v", got)
	}
	if len(p.Areas) != 2 || p.Areas[0].Name != "batch" || p.Areas[0].Levels["SHOULD"] != (RuleCounts{Passed: 1}) ||
		p.Areas[1].Levels["MAY"] != (RuleCounts{Passed: 1}) || p.Areas[1].Levels["MUST"] != (RuleCounts{Skipped: 2}) {
		t.Errorf("areas: %+v", p.Areas)
	}
	if p.Endpoint != (PublishedEndpoint{Kind: "endpoint", Driver: "rest"}) {
		t.Errorf("endpoint: %+v", p.Endpoint)
	}
}
