package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tableconform/conform/suites/verdict"
)

// exitStatusLine is a line of an exit status table in any of the documents: "| 3 | ... |"
// in Markdown, "  3    ..." in the help and action.yml.
var exitStatusLine = regexp.MustCompile(`^[\s|]*(\d{1,3})(?:\s*\|\s*|\s{2,}|\s+)(.*?)[\s|]*$`)

// exitMention is an exit status named in running text ("exit 2", "exit status 1").
var exitMention = regexp.MustCompile(`\bexit(?: status| code)? (\d+)\b`)

// exitTableAgrees checks that doc lists verdict.ExitStatuses, exactly: one table with
// each status in order and its meaning in the same words, no other status on the lines
// around it, and no other status named anywhere in doc.
func exitTableAgrees(doc string) error {
	lines := strings.Split(doc, "\n")
	first := -1
	for i, l := range lines {
		if m := exitStatusLine.FindStringSubmatch(l); m != nil && m[1] == "0" && m[2] == verdict.ExitStatuses[0].Meaning {
			first = i
			break
		}
	}
	if first < 0 {
		return fmt.Errorf("no line says %d: %s", verdict.ExitStatuses[0].Code, verdict.ExitStatuses[0].Meaning)
	}
	for k, s := range verdict.ExitStatuses {
		i := first + k
		if i >= len(lines) {
			return fmt.Errorf("the table ends before %d", s.Code)
		}
		m := exitStatusLine.FindStringSubmatch(lines[i])
		if m == nil || m[1] != strconv.Itoa(s.Code) || m[2] != s.Meaning {
			return fmt.Errorf("line %d is %q, want %d: %s", i+1, lines[i], s.Code, s.Meaning)
		}
	}
	if i := first + len(verdict.ExitStatuses); i < len(lines) && exitStatusLine.MatchString(lines[i]) {
		return fmt.Errorf("the table goes on with a status it does not have: %q", lines[i])
	}
	known := map[string]bool{}
	for _, s := range verdict.ExitStatuses {
		known[strconv.Itoa(s.Code)] = true
	}
	for _, m := range exitMention.FindAllStringSubmatch(doc, -1) {
		if !known[m[1]] {
			return fmt.Errorf("%q names a status the table does not have", m[0])
		}
	}
	return nil
}

// The exit statuses are one table (verdict.ExitStatuses), and every place that documents
// them lists exactly its statuses with the same meanings (issue 31, item 13: action.yml
// knew 0, 1 and 2 only and called 3 and 130 "could not run").
func TestExitStatusesAreDocumentedAlike(t *testing.T) {
	docs := map[string]string{
		"conform run --help":    runCmd().Long,
		"conform replay --help": replayCmd().Long,
	}
	for _, path := range []string{"README.md", "action.yml", "docs/CONFORMANCE-REPORT.md"} {
		data, err := os.ReadFile("../../" + path)
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = string(data)
	}
	for name, doc := range docs {
		if err := exitTableAgrees(doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The action's last step ends with the run's status, each said apart.
	action := docs["action.yml"]
	for _, s := range verdict.ExitStatuses {
		if !strings.Contains(action, fmt.Sprintf("          %d) echo", s.Code)) || !strings.Contains(action, fmt.Sprintf("; exit %d ;;", s.Code)) && s.Code != verdict.ExitOK {
			t.Errorf("action.yml's last step does not say status %d apart", s.Code)
		}
	}
}

// Exit and ReplayExit return no status the table does not have.
func TestExitReturnsOnlyDocumentedStatuses(t *testing.T) {
	known := map[int]bool{}
	for _, s := range verdict.ExitStatuses {
		known[s.Code] = true
	}
	for _, tallies := range [][]verdict.Tally{{}, {{Unexpected: 1}}, {{Kind: verdict.KindNotRun}}, {{Errors: 1}}, {{Kind: verdict.KindInterrupted}}, {{BaselineProblems: 1}}} {
		if code := verdict.Exit(tallies, false); !known[code] {
			t.Errorf("Exit(%+v) = %d, not in the table", tallies, code)
		}
	}
	for _, r := range []verdict.Replay{{}, {Agree: 1}, {Disagree: 1}, {Agree: 1, Stopped: "x"}} {
		if code := verdict.ReplayExit(r); !known[code] {
			t.Errorf("ReplayExit(%+v) = %d, not in the table", r, code)
		}
	}
}
