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

// updateBaselines rewrites each backend's baseline from a run made without baselines: every
// failing or erroring spec becomes an expected failure, with what came back as evidence.
// The reference has no baseline: it must pass every spec.
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
		old, err := fixtures.LoadBaseline(dir, b.Name, b.Version)
		if err != nil {
			return err
		}
		next := fixtures.Baseline{Backend: fixtures.BaselineBackend(b.Name), Version: b.Version}
		for _, row := range r.Rules {
			for _, s := range row.Cells[bi].Specs {
				if s.Outcome == report.Fail || s.Outcome == report.Error || s.Outcome == report.DocumentedDiff {
					next.Expected = append(next.Expected, fixtures.ExpectedFailure{Rule: row.ID, Spec: s.Text, Evidence: evidence(s.Failure)})
				}
			}
		}
		data, err := next.Marshal()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, fixtures.BaselineFile(b.Name, b.Version))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write baseline: %w", err)
		}
		added, removed := diffBaselines(old, next)
		fmt.Fprintf(w, "%s: %d expected failures (%d added, %d removed)\n", path, len(next.Expected), len(added), len(removed))
		for _, e := range added {
			fmt.Fprintf(w, "  + %s: %s\n", e.Rule, e.Spec)
		}
		for _, e := range removed {
			fmt.Fprintf(w, "  - %s: %s\n", e.Rule, e.Spec)
		}
	}
	return nil
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
