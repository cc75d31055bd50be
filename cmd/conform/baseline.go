package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tableconform/conform/fixtures"
	"github.com/tableconform/conform/suites/report"
)

// updateBaselines rewrites each backend's baseline from a run made without baselines:
// every spec that failed (an answer that breaks its rule, or a documented difference)
// becomes an expected failure with its signature and one line of evidence. A transport
// error or timeout is never recorded: an old entry for such a spec is kept as it was, and
// so is every flaky entry (flakiness is decided from evidence, by hand). The reference
// has no baseline: it must pass every spec. Only what ran changes: an entry for a spec the
// run did not judge (left out by --label-filter, skipped) is kept as it was.
func updateBaselines(w io.Writer, dir string, r report.Report) error {
	for bi, b := range r.Backends {
		if b.StartError != "" {
			continue
		}
		if b.Kind == "reference" || b.Kind == "reference-http" {
			if b.Counts.Failed+b.Counts.Errors > 0 {
				fmt.Fprintf(w, "%s fails %d specs: the reference gets no baseline, fix it instead\n", b.Name, b.Counts.Failed+b.Counts.Errors)
			}
			continue
		}
		old, file, _, err := fixtures.FindBaseline(dir, b.Name, b.Kind, b.Version)
		if err != nil {
			return err
		}
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

// nextBaseline is the baseline of backend bi of r, given its old baseline.
func nextBaseline(old fixtures.Baseline, r report.Report, bi int) fixtures.Baseline {
	b := r.Backends[bi]
	next := fixtures.Baseline{Backend: fixtures.BaselineBackend(b.Name), Version: b.Version}
	oldEntry := func(rule, spec string) (fixtures.ExpectedFailure, bool) {
		for _, e := range old.Expected {
			if e.Rule == rule && e.Spec == spec {
				return e, true
			}
		}
		return fixtures.ExpectedFailure{}, false
	}
	// Flaky entries stay as they were (flakiness is decided from evidence, by hand), and
	// what they cover is not recorded again.
	for _, e := range old.Expected {
		if e.Flaky {
			next.Expected = append(next.Expected, e)
		}
	}
	judged := map[string]bool{}
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			if s.Outcome != report.Skipped && s.Outcome != report.NotRun {
				judged[row.ID+"\x00"+s.Text] = true
			}
		}
	}
	// An entry whose spec this run did not judge stays: under a label filter the other
	// areas' entries are not this run's to change. Without a filter, an entry whose spec no
	// longer exists is dropped.
	filtered := b.Coverage.Filter != ""
	present := map[string]bool{}
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			present[row.ID+"\x00"+s.Text] = true
		}
	}
	for _, e := range old.Expected {
		key := e.Rule + "\x00" + e.Spec
		if e.Flaky || judged[key] || (!present[key] && !filtered) {
			continue
		}
		next.Expected = append(next.Expected, e)
	}
	for _, row := range r.Rules {
		for _, s := range row.Cells[bi].Specs {
			if e, ok := old.Lookup(row.ID, s.Text); ok && e.Flaky {
				continue
			}
			prev, had := oldEntry(row.ID, s.Text)
			switch {
			case !judged[row.ID+"\x00"+s.Text]:
				// kept above
			case s.Outcome == report.Error || s.Outcome == report.Interrupted:
				if had {
					next.Expected = append(next.Expected, prev)
				}
			case s.Outcome == report.Fail || s.Outcome == report.DocumentedDiff:
				e := fixtures.ExpectedFailure{Rule: row.ID, Spec: s.Text, Evidence: evidence(s.Failure)}
				if s.Signature != nil {
					e.Signature = *s.Signature
				}
				next.Expected = append(next.Expected, e)
			}
		}
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
