package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

func TestDiffMatchesBackendsAndRulesByName(t *testing.T) {
	old, cur := sample(), sample()
	// azurite: query.order.keys goes from documented difference to fail (worse); a backend
	// only in the new report; a rule only in the old one.
	for i := range cur.Rules {
		if cur.Rules[i].ID == "query.order.keys" {
			old.Rules[i].Cells[1] = Cell{Outcome: verdict.DocumentedDiff}
			cur.Rules[i].Cells[1] = Cell{Outcome: verdict.Fail}
		}
	}
	cur.Rules = cur.Rules[:len(cur.Rules)-1] // auth.sas.read
	cur.Backends = append(cur.Backends, Backend{})
	cur.Backends[2].Name = "cosmos"
	for i := range cur.Rules {
		cur.Rules[i].Cells = append(cur.Rules[i].Cells, Cell{Outcome: verdict.Pass})
	}
	d := Diff(old, cur, "old", "new")
	if d.Regressions != 1 || len(d.Backends) != 3 {
		t.Fatalf("diff %+v", d)
	}
	ref, az, cosmos := d.Backends[0], d.Backends[1], d.Backends[2]
	if len(ref.Worse)+len(ref.Better)+len(ref.ChangedChoice) != 0 || len(ref.Incomparable) != 1 || ref.Incomparable[0].Why != "the rule is not in new" {
		t.Errorf("reference %+v", ref)
	}
	if len(az.Worse) != 1 || az.Worse[0].Rule != "query.order.keys" || !strings.HasPrefix(az.Worse[0].OldSays, "documented: ") {
		t.Errorf("azurite %+v", az)
	}
	if cosmos.Missing != "only in new" {
		t.Errorf("cosmos %+v", cosmos)
	}
	var buf bytes.Buffer
	if err := WriteDiffMarkdown(&buf, d); err != nil || !strings.Contains(buf.String(), "Backend only in new: not compared.") {
		t.Errorf("markdown: %v\n%s", err, buf.String())
	}
	if d := Diff(old, old, "a", "b"); d.Regressions != 0 || len(d.Backends[0].Incomparable)+len(d.Backends[1].Worse) != 0 {
		t.Errorf("a report against itself: %+v", d)
	}
}

func TestChoiceWords(t *testing.T) {
	for in, want := range map[string]string{
		"answer to an empty transaction: it failed with 500 (\"Internal Server Error\") [request id 1]": "server error 500",
		"refusal code: 400 InvalidInput":                                "refused with 400 InvalidInput",
		"code: it failed with 400 InvalidInput at operation 2 (\"x\")":  "refused with 400 InvalidInput at operation 2",
		"re-create a deleted name: 409 TableBeingDeleted, then success": "refused with 409 TableBeingDeleted, then success",
		"answer: it succeeded":                                          "accepted",
		"answer to an empty transaction: success with no result":        "accepted with no result",
		"x: it had a transport error (conform:transport): EOF":          "no answer (transport error)",
		"page ends at a partition boundary: no (pages of [2 2])":        "no",
		"sign of a stored negative zero: kept (-0)":                     "kept (-0)",
	} {
		if got := ChoiceWords(in); got != want {
			t.Errorf("ChoiceWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCellsThatChoseDifferentlyDiffer(t *testing.T) {
	row := RuleRow{ID: "batch.empty", Cells: []Cell{
		{Outcome: verdict.Info, Specs: []SpecResult{{Choices: []string{"a: 400 InvalidInput [request id 1]"}}}},
		{Outcome: verdict.Info, Specs: []SpecResult{{Choices: []string{"a: 400 InvalidInput [request id 2]"}}}},
	}}
	if Differs(row) {
		t.Error("two refusals with the same code differ only in request ids, and must read alike")
	}
	row.Cells[1].Specs[0].Choices[0] = "a: it failed with 500"
	if !Differs(row) || CellSummary(row, row.Cells[1]) != "server error 500" {
		t.Errorf("a 500 where the other refused must differ: %q", CellSummary(row, row.Cells[1]))
	}
}

// Issue 20, item 16: two runs whose recorded choices differ only in request ids, multipart
// boundaries, timestamps and table names show no change.
func TestDiffMasksPerRunValues(t *testing.T) {
	withChoice := func(chosen string) Report {
		r := sample()
		for i := range r.Rules {
			if r.Rules[i].ID == "pagination.boundary.token" {
				r.Rules[i].Cells[1] = Cell{Outcome: verdict.Info, Specs: []SpecResult{{Outcome: verdict.Info, Choices: []string{"answer: " + chosen}}}}
			}
		}
		return r
	}
	old := withChoice(`it failed with 400 ("boundary=batchresponse_6e5f0c4d-1a2b-4c3d-8e9f-001122334455 in cfabcdefghp1t12 at 2026-11-27T13:27:13.1234567Z") [request id 5f1c0a]`)
	cur := withChoice(`it failed with 400 ("boundary=batchresponse_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee in cfzzzzzzzzp2t7 at 2026-11-28T01:02:03.7654321Z") [request id 77ab90]`)
	d := Diff(old, cur, "old", "new")
	for _, b := range d.Backends {
		if n := len(b.Worse) + len(b.Better) + len(b.ChangedChoice) + len(b.Incomparable); n != 0 {
			t.Errorf("%s: %d changes %+v", b.Backend, n, b)
		}
	}
	changed := withChoice(`it failed with 404 ("x") [request id 77ab90]`)
	if d := Diff(old, changed, "old", "new"); len(d.Backends[1].ChangedChoice) != 1 || strings.Contains(d.Backends[1].ChangedChoice[0].OldSays, "5f1c0a") {
		t.Errorf("a real change: %+v", d.Backends[1])
	}
}
