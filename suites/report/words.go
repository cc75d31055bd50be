package report

import (
	"regexp"
	"strings"

	"github.com/tableconform/conform/suites/verdict"
)

// runTableName matches the names of a run's tables, which differ from run to run.
var runTableName = regexp.MustCompile(`cf[a-z0-9]{8}p[0-9]+t[0-9]+[A-Za-z0-9]*`)

// cellWordsLimit bounds what a cell says, so that a matrix row stays one line of words
// (the evidence panel holds the rest).
const cellWordsLimit = 110

// decisiveSpec is the spec whose outcome is the cell's: the one that makes a failing cell
// fail (its first such spec), never a spec of the rule that passed.
func decisiveSpec(c Cell) (SpecResult, bool) {
	for _, s := range c.Specs {
		if s.Outcome == c.Outcome {
			return s, true
		}
	}
	return SpecResult{}, false
}

// saysWhatHappened lists the outcomes whose cell says what the backend did in the spec
// that decided it, rather than the choices its specs recorded.
var saysWhatHappened = map[verdict.Outcome]bool{verdict.Fail: true, verdict.ExpectedFail: true, verdict.Flaky: true, verdict.UnexpectedPass: true, verdict.Error: true, verdict.Blocked: true}

// SpecWords says in a few words what the backend did in a spec that did not pass:
// "refused with 400 InvalidInput", "accepted", "server error 500 InternalError", or the
// first thing the rule found wrong ("property New: want Edm.Boolean(true), got
// Edm.Int32(1)"); "no answer", "blocked by RULE", "passed" for the others. Table names
// of the run and request ids are left out, and the words are cut at cellWordsLimit.
func SpecWords(s SpecResult) string {
	switch s.Outcome {
	case verdict.Error:
		// The cell's word says "no answer"; the words say what stopped it, if known.
		failure, _ := FailureInWords(s.Failure)
		if lines := nonEmptyLines(failure); len(lines) > 0 {
			return cut(runTableName.ReplaceAllString(lines[0], "<table>"), cellWordsLimit)
		}
		return ""
	case verdict.Blocked:
		if s.BlockedBy != "" {
			return "blocked by " + s.BlockedBy
		}
		return "blocked by a failed precondition"
	case verdict.UnexpectedPass:
		return "passed, where the baseline expects a failure"
	}
	failure := s.Failure
	if strings.TrimSpace(failure) == "" {
		failure = s.Evidence
	}
	if strings.TrimSpace(failure) == "" {
		return ""
	}
	return cut(runTableName.ReplaceAllString(failureWords(failure), "<table>"), cellWordsLimit)
}

// failureWords reduces a failure message to what the backend did: the answer after "but"
// ("..., but it failed with 400 InvalidInput") in the words of ChoiceWords, else the words
// of Gomega's own message (FailureInWords: "status 403, expected 401"), after the line that
// names the step when one comes first, else the first detail of a message that announces
// its details ("... differs from what the rule expects:"), after the line that names the
// step when one comes first ("Get Entity after Update and Merge"), else its first line.
func failureWords(msg string) string {
	msg, block := FailureInWords(msg)
	lines := nonEmptyLines(msg)
	for _, l := range lines {
		if i := strings.Index(l, ", but "); i >= 0 {
			return ChoiceWords("answer: " + strings.TrimSpace(l[i+len(", but "):]))
		}
	}
	if block != "" {
		if step := withoutBody(lines[0]); lines[0] != block && step != "" && !strings.HasSuffix(lines[0], ":") {
			return step + ": " + block
		}
		return block
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, ":") {
			if i+2 < len(lines) && strings.HasSuffix(lines[i+1], ":") && !strings.HasSuffix(lines[i+2], ":") {
				return l + ": " + lines[i+2]
			}
			return l
		}
		if i+1 < len(lines) && !strings.HasSuffix(lines[i+1], ":") {
			return lines[i+1]
		}
	}
	if len(lines) > 0 {
		return strings.TrimSuffix(lines[0], ":")
	}
	return ""
}

// withoutBody is a line of a failure message without the answer's body it may quote (JSON
// or XML) and without a trailing colon.
func withoutBody(l string) string {
	for _, body := range []string{" {", " <?xml", " <"} {
		if i := strings.Index(l, body); i >= 0 {
			l = l[:i]
		}
	}
	return strings.TrimSuffix(strings.TrimSpace(l), ":")
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// cut shortens s to at most n bytes, at a word boundary, marked with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, ' '); i > n/2 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ,;:") + "…"
}

// shortChoices joins a cell's choices in words for the matrix: an answer's body (JSON or
// XML) and this run's table names left out, the whole cut at twice cellWordsLimit (the
// evidence panel has each choice in full).
func shortChoices(choices []string) string {
	var out []string
	for _, ch := range choices {
		for _, body := range []string{" {", " <?xml", " <"} {
			if i := strings.Index(ch, body); i > 0 {
				ch = ch[:i]
			}
		}
		out = append(out, runTableName.ReplaceAllString(ch, "<table>"))
	}
	return cut(strings.Join(out, "; "), 2*cellWordsLimit)
}
