package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// blameRun runs conform against a mutant that lacks a whole feature, over the rules named,
// and returns each rule's cell.
func blameRun(t *testing.T, backend string, rules ...string) (map[string]report.Cell, int, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := conform(t, "run", "--backend", backend, "--label-filter", strings.Join(rules, " || "), "--out", out, "--no-corpus")
	rep, err := report.ReadJSON(filepath.Join(out, report.FileJSON))
	if err != nil {
		t.Fatalf("exit %d, no report: %v\n%s%s", code, err, stdout, stderr)
	}
	cells := map[string]report.Cell{}
	for _, row := range rep.Rules {
		cells[row.ID] = row.Cells[0]
	}
	return cells, code, stdout + stderr
}

// Issue 20, item 9: against a backend without $batch (every transaction refused with 400),
// the rules whose specs expect a transaction to be refused are blocked by batch.all-kinds,
// never passed: their subject never ran. batch.all-kinds itself fails.
func TestNoBatchBlocksNeverPasses(t *testing.T) {
	blocked := []string{"batch.atomic", "batch.changeset.single", "batch.partition.single", "batch.retrieve.mixed",
		"rel.one-to-many.cross-partition-batch", "rel.move.batch-refused"}
	cells, code, out := blameRun(t, "mutant:batch-unsupported", append(blocked, "batch.all-kinds")...)
	if code != exitFailed {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	if c := cells["batch.all-kinds"]; c.Outcome != verdict.Fail {
		t.Errorf("batch.all-kinds: %s, want fail", c.Outcome)
	}
	for _, id := range blocked {
		c := cells[id]
		if c.Outcome != verdict.Blocked {
			t.Errorf("%s: %s, want blocked", id, c.Outcome)
			continue
		}
		for _, s := range c.Specs {
			if s.Outcome == verdict.Blocked && s.BlockedBy != "batch.all-kinds" {
				t.Errorf("%s %q: blocked by %s, want batch.all-kinds", id, s.Text, s.BlockedBy)
			}
		}
	}
}

// Issue 20, item 8: a backend that refuses Int64 literals fails query.compare.int64, and the
// grouping rule, whose filters merely use one, is blocked by it, with the evidence, never
// failed; the precedence rule's filters use no Int64 (issue 30, item 5: an Int64 hid an
// or applied before and), so it is judged, and passes.
func TestInt64LiteralsBlameTheirRule(t *testing.T) {
	cells, code, out := blameRun(t, "mutant:int64-literals-refused", "query.compare.int64", "query.logic.parentheses", "query.logic.precedence")
	if code != exitFailed {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	if c := cells["query.compare.int64"]; c.Outcome != verdict.Fail {
		t.Errorf("query.compare.int64: %s, want fail", c.Outcome)
	}
	if c := cells["query.logic.precedence"]; c.Outcome != verdict.Pass {
		t.Errorf("query.logic.precedence: %s, want pass: its filters compare no Int64", c.Outcome)
	}
	for _, id := range []string{"query.logic.parentheses"} {
		c := cells[id]
		if c.Outcome != verdict.Blocked || c.Against {
			t.Errorf("%s: %s (against %v), want blocked", id, c.Outcome, c.Against)
		}
		for _, s := range c.Specs {
			switch {
			case s.Outcome == verdict.Pass && !strings.Contains(s.Text, "3L"):
				// a filter without an Int64 literal is judged
			case s.Outcome != verdict.Blocked || s.BlockedBy != "query.compare.int64":
				t.Errorf("%s %q: %s by %q, want blocked by query.compare.int64", id, s.Text, s.Outcome, s.BlockedBy)
			case !strings.Contains(s.Failure, "Int64 literals are not supported"):
				t.Errorf("%s %q: the evidence does not show the refusal: %q", id, s.Text, s.Failure)
			}
		}
	}
}

// Issue 20, item 8: a backend that ignores Prefer (every insert answers 201 with the
// entity) fails the two rules about Prefer, and no protocol rule whose spec merely stores a
// value with Prefer: return-no-content.
func TestIgnoredPreferBlamesOnlyThePreferRules(t *testing.T) {
	cells, _, out := blameRun(t, "mutant:prefer-ignored", "area:protocol")
	prefer := map[string]bool{"protocol.insert.prefer-no-content": true, "protocol.insert.prefer-content": true}
	for id, c := range cells {
		switch {
		case prefer[id] && c.Outcome != verdict.Fail:
			t.Errorf("%s: %s, want fail", id, c.Outcome)
		case !prefer[id] && (c.Against || c.Outcome == verdict.Fail):
			t.Errorf("%s: %s, but the backend only ignores Prefer", id, c.Outcome)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// Issue 20, item 9, for SAS: against a backend that refuses every service SAS, the rules
// whose specs expect a SAS to be refused (expired, not yet valid, another table, a missing
// permission) are blocked by auth.sas.permission.read, never passed.
func TestRefusedSASBlocksNeverPasses(t *testing.T) {
	blocked := []string{"auth.sas.expired", "auth.sas.not-yet-valid", "auth.sas.other-table", "auth.sas.no-table-management", "auth.sas.permission.add"}
	cells, code, out := blameRun(t, "mutant:sas-refused", append(blocked, "auth.sas.permission.read")...)
	if code != exitFailed {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	if c := cells["auth.sas.permission.read"]; c.Outcome != verdict.Fail {
		t.Errorf("auth.sas.permission.read: %s, want fail", c.Outcome)
	}
	for _, id := range blocked {
		if c := cells[id]; c.Outcome != verdict.Blocked || c.Against {
			t.Errorf("%s: %s, want blocked by auth.sas.permission.read", id, c.Outcome)
		}
	}
}
