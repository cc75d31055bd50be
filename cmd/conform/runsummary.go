package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tableconform/conform/suites/report"
	"github.com/tableconform/conform/suites/verdict"
)

// failedRules returns the rules that failed, errored, were blocked, passed unexpectedly
// or did not finish (a selected spec interrupted or never started) in a report, and the
// backends they did so on.
func failedRules(r report.Report) (ids, backends []string) {
	bs := map[string]bool{}
	for _, row := range r.Rules {
		for bi, c := range row.Cells {
			if !rerunCell(c) {
				continue
			}
			if len(ids) == 0 || ids[len(ids)-1] != row.ID {
				ids = append(ids, row.ID)
			}
			bs[r.Backends[bi].Name] = true
		}
	}
	for b := range bs {
		backends = append(backends, b)
	}
	sort.Strings(backends)
	return ids, backends
}

// rerunCell reports whether --rerun-failed runs a cell's rule again.
func rerunCell(c report.Cell) bool {
	switch c.Outcome {
	case verdict.Fail, verdict.Error, verdict.UnexpectedPass, verdict.Blocked, verdict.Interrupted:
		return true
	}
	for _, s := range c.Specs {
		if s.Decision.Selected && (s.Outcome == verdict.NotRun || s.Outcome == verdict.Interrupted) {
			return true
		}
	}
	return false
}

// summaryRulesShown is how many failing rules the summary lists per backend;
// summaryErrorsShown how many specs without an answer, a line each.
const (
	summaryRulesShown  = 20
	summaryErrorsShown = 5
)

// printSummary ends a run: per backend its verdict and counts, the rules that fail (the
// first summaryRulesShown, then how many more), whether every failure is one its baseline
// expects, the rules left out by policy and why; then where the report is.
func printSummary(w io.Writer, r report.Report, dir string) {
	printRunSummary(w, r, dir, false)
}

// printRunSummary is printSummary for a run that rewrites the baselines when
// updatingBaseline is true: its unexpected specs do not fail it (verdict.Exit).
func printRunSummary(w io.Writer, r report.Report, dir string, updatingBaseline bool) {
	fmt.Fprintln(w)
	for bi, b := range r.Backends {
		c := b.Counts
		fmt.Fprintf(w, "%-16s %s\n", b.Name, b.Verdict)
		if b.BaselineNote != "" {
			fmt.Fprintf(w, "%-16s %s\n", "", b.BaselineNote)
		}
		if b.StartError == "" {
			fmt.Fprintf(w, "%-16s rules: %s\n", "", report.BackendCountsInWords(r, bi, false))
		}
		passed := strconv.Itoa(c.Passed)
		if c.Information > 0 {
			passed += fmt.Sprintf(" (%d of them allowed choices)", c.Information)
		}
		fmt.Fprintf(w, "%-16s specs of every level: passed %s, failed %d, errors %d, blocked %d, expected failures %d, flaky %d, unexpected passes %d, documented differences %d, skipped %d, interrupted %d, not run %d\n",
			"", passed, c.Failed, c.Errors, c.Blocked, c.ExpectedFailures, c.Flaky, c.UnexpectedPasses, c.DocumentedDiffs, c.SkippedCapability, c.Interrupted, c.NotRun)
		for i, line := range b.ConfirmationWords {
			if i == summaryRulesShown+1 {
				fmt.Fprintf(w, "%-16s ... and %d more differences between the rules' outcomes beside the other processes and alone (all in the report)\n", "", len(b.ConfirmationWords)-i)
				break
			}
			fmt.Fprintf(w, "%-16s %s\n", "", line)
		}
		if c.NotApplicable > 0 {
			fmt.Fprintf(w, "%-16s not applicable to the profile: %d\n", "", c.NotApplicable)
		}
		if c.Unexpected > 0 {
			fmt.Fprintf(w, "%-16s %s\n", "", verdict.UnexpectedSentence(c.Unexpected, updatingBaseline))
		}
		failing, expected := report.FailingRules(r, bi)
		for i, f := range failing {
			if i == summaryRulesShown {
				fmt.Fprintf(w, "%-16s ... and %d more (%s; all in the report)\n", "", len(failing)-summaryRulesShown, report.RulesByLevel(failing[summaryRulesShown:]))
				break
			}
			line := fmt.Sprintf("%s %s (%s)", report.StyleOf(f.Outcome).Word, f.ID, f.Level)
			if f.Words != "" {
				line += ": " + f.Words
			}
			fmt.Fprintf(w, "%-16s %s\n", "", line)
		}
		if len(failing) == 0 && len(expected) > 0 && b.StartError == "" {
			fmt.Fprintf(w, "%-16s every failure (%s) is one the baseline expects: known divergences, not new failures\n", "", report.RulesByLevel(expected))
		}
		if why := report.PolicySkipSentence(report.PolicySkippedRules(r, bi)); why != "" {
			fmt.Fprintf(w, "%-16s %s\n", "", why)
		}
		for i, e := range b.Errors {
			if i == summaryErrorsShown {
				fmt.Fprintf(w, "%-16s ... and %d more specs without an answer (all in the report)\n", "", max(len(b.Errors), c.Errors)-summaryErrorsShown)
				break
			}
			fmt.Fprintf(w, "%-16s no answer: %s\n", "", firstLine(e))
		}
	}
	fmt.Fprintf(w, "\nReport: %s (also %s, %s, %s)\n", filepath.Join(dir, report.FileHTML), report.FileMarkdown, report.FileJSON, report.FileJUnit)
}

// failureLine is the first line of a failure message in words (report.FailureInWords:
// Gomega's blocks become "status 403, expected 401"), with the lines after it when it only
// announces them ("... differs from what the rule expects:") or when it names the step
// whose check follows, cut at 240 characters.
func failureLine(msg string) string {
	msg, block := report.FailureInWords(msg)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(msg), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	var parts []string
	for i, l := range lines {
		parts = append(parts, l)
		announces := strings.HasSuffix(l, ":")
		if len(parts) == 1 && i+1 < len(lines) && !announces && (strings.HasSuffix(lines[i+1], ":") || lines[i+1] == block) {
			continue // the step ("Get Entity after Update and Merge"); what went wrong follows
		}
		if !announces {
			break
		}
	}
	return firstLine(strings.Join(parts, " "))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 240 {
		s = s[:240] + "..."
	}
	return s
}
