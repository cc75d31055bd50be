package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/provision"
	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// updateBaselines rewrites each backend's baseline from a run made without baselines
// (nextBaseline): every spec that failed becomes an expected failure with its signature and
// one line of evidence, every blocked spec an entry naming the rule that blocked it. What
// the run did not judge keeps its entry. The reference and the model (reference/model) have
// no baseline: each must pass every spec.
func updateBaselines(w io.Writer, dir string, r report.Report) error {
	for bi, b := range r.Backends {
		if b.StartError != "" {
			continue
		}
		if b.Kind == provision.Reference || b.Kind == provision.ReferenceHTTP || b.Kind == provision.Model {
			if b.Counts.Failed+b.Counts.Errors > 0 {
				fmt.Fprintf(w, "%s fails %d specs: the reference gets no baseline, fix it instead\n", b.Name, b.Counts.Failed+b.Counts.Errors)
			}
			continue
		}
		// A baseline of another version (the nearest) is the starting point; the file
		// written is the backend's own version's.
		found, err := fixtures.FindBaselineFor(dir, b.Name, b.Kind, b.Version)
		if err != nil {
			return err
		}
		old, file := found.Baseline, found.Wanted
		next := nextBaseline(old, r, bi)
		data, err := next.Marshal()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write baseline: %w", err)
		}
		added, removed := diffBaselines(old, next)
		fmt.Fprintf(w, "%s: %d expected failures (%d added, %d removed); %s\n", path, len(next.Expected), len(added), len(removed), nextRunReads(dir))
		for _, e := range added {
			fmt.Fprintf(w, "  + %s: %s\n", e.Rule, e.Spec)
		}
		for _, e := range removed {
			fmt.Fprintf(w, "  - %s: %s\n", e.Rule, e.Spec)
		}
		if b.Counts.Errors > 0 {
			fmt.Fprintf(w, "  %d specs of %s got no answer: not recorded (earlier entries for them kept)\n", b.Counts.Errors, b.Name)
		}
	}
	return nil
}

// nextBaseline is the baseline of backend bi of r, given its old baseline: it changes only
// what the run judged. A spec that failed is listed with its signature, one blocked with
// the rule that blocked it; a spec that passed, or answered as the profile documents, is
// not listed. An entry for a spec the run did not judge (left out by the filter, skipped,
// no answer, interrupted) stays as it was, and so does every flaky entry (flakiness is
// decided from evidence, by hand); an entry that names a spec its rule no longer has
// (stale) goes.
func nextBaseline(old fixtures.Baseline, r report.Report, bi int) fixtures.Baseline {
	b := r.Backends[bi]
	next := fixtures.Baseline{Backend: fixtures.BaselineBackend(b.Name), Version: b.Version}
	judged, present := map[string]bool{}, map[string]bool{}
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			present[row.ID+"\x00"+s.Text], present[row.ID] = true, true
			if e, ok := old.Lookup(row.ID, s.Text); ok && e.Flaky {
				continue
			}
			switch s.Outcome {
			case verdict.Error, verdict.Interrupted, verdict.Skipped, verdict.NotRun:
				continue
			case verdict.Fail:
				e := fixtures.ExpectedFailure{Rule: row.ID, Spec: s.Text, Evidence: evidence(s.Failure)}
				if s.Signature != nil {
					e.Signature = *s.Signature
				}
				next.Expected = append(next.Expected, e)
			case verdict.Blocked:
				e := fixtures.ExpectedFailure{Rule: row.ID, Spec: s.Text, Evidence: evidence(s.Failure), Blocked: s.BlockedBy}
				if s.Signature != nil {
					e.Signature = *s.Signature
				}
				next.Expected = append(next.Expected, e)
			}
			judged[row.ID+"\x00"+s.Text] = true
			judged[row.ID] = true
		}
	}
	for _, e := range old.Expected {
		switch {
		case e.Spec != "" && present[e.Rule] && !present[e.Rule+"\x00"+e.Spec]:
			continue // stale: its rule's specs are in the run, and none is the one it names
		case e.Flaky:
		case e.Spec != "" && judged[e.Rule+"\x00"+e.Spec]:
			continue
		case e.Spec == "" && judged[e.Rule]:
			continue
		}
		next.Expected = append(next.Expected, e)
	}
	return next
}

var runTable = regexp.MustCompile(`cf[a-z0-9]{8}p[0-9]+t[0-9]+`)

// evidence is the line of a failure that says what came back (the matcher's "but ..."),
// with this run's table names replaced so that the baseline stays the same across runs.
func evidence(failure string) string {
	line := firstLine(failure)
	for _, l := range strings.Split(failure, "\n") {
		if strings.Contains(l, " but ") {
			line = firstLine(l)
			break
		}
	}
	return runTable.ReplaceAllString(line, "<table>")
}

func diffBaselines(old, next fixtures.Baseline) (added, removed []fixtures.ExpectedFailure) {
	key := func(e fixtures.ExpectedFailure) string { return e.Rule + "\x00" + e.Spec }
	in := func(b fixtures.Baseline) map[string]bool {
		m := map[string]bool{}
		for _, e := range b.Expected {
			m[key(e)] = true
		}
		return m
	}
	o, n := in(old), in(next)
	for _, e := range next.Expected {
		if !o[key(e)] {
			added = append(added, e)
		}
	}
	for _, e := range old.Expected {
		if !n[key(e)] {
			removed = append(removed, e)
		}
	}
	return added, removed
}
