package report

import (
	"regexp"
	"strings"
)

// FailureInWords rewrites the blocks of a failure message that Gomega formatted for
// programmers into one line of words each, and keeps every other line as it is:
//
//	status: <?xml ...>            status 403, expected 401
//	Expected
//	    <int>: 403           →
//	to equal
//	    <int>: 401
//
//	Unexpected error:
//	    <*driver.TransportError | 0x3813672a4f60>:
//	    transport error: GET /t: EOF      →   transport error: GET /t: EOF
//	    {Op: "GET /t", Err: ...}
//	occurred
//
// The line before a block, when there is one, is what the spec said it checked; it becomes
// the subject of the words (without the answer's body it may quote). Report cells, the
// summary, the live progress lines and report --diff read failures through this function
// (issue 34, item 6): it is the one place that knows Gomega's layout (gomega/format). It
// also returns the line of words its first block became ("" when it has none).
func FailureInWords(msg string) (rewritten, firstBlock string) {
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	var out []string
	chunk := 0 // where in out the lines since the last block begin
	for i := 0; i < len(lines); i++ {
		head := strings.TrimSpace(lines[i])
		var words string
		var next int
		switch {
		case head == "Expected" && !indented(lines[i]):
			words, next = expectedWords(lines, i)
		case head == "Unexpected error:" && !indented(lines[i]):
			words, next = unexpectedErrorWords(lines, i)
		case strings.HasPrefix(head, "Expected an error to have occurred.") && !indented(lines[i]):
			words, next = "no error, where one was expected", skipIndented(lines, i+1)
		}
		if next == 0 {
			out = append(out, lines[i])
			continue
		}
		var subject string
		out, subject = cutSubject(out, chunk)
		if subject != "" {
			words = joinSubject(subject, words)
		}
		out = append(out, words)
		if firstBlock == "" {
			firstBlock = words
		}
		chunk = len(out)
		i = next - 1
	}
	return strings.Join(out, "\n"), firstBlock
}

// gomegaType is the type Gomega writes before a value: "<int>: ", "<*driver.TransportError |
// 0x3813672a4f60>: ", "<[]string | len:2, cap:2>: ".
var gomegaType = regexp.MustCompile(`^<[^\n]*?>:\s?`)

// negated are the words for "not to be OP" of BeNumerically.
var negated = map[string]string{">=": "<", ">": "<=", "<": ">=", "<=": ">", "==": "!=", "!=": "=="}

// expectedWords reads Gomega's "Expected / value / matcher [/ value]" starting at line i
// and says it in words: "403, expected 401". It returns the line after the block, or 0
// when the lines are not such a block.
func expectedWords(lines []string, i int) (string, int) {
	actualEnd := skipIndented(lines, i+1)
	if actualEnd == i+1 || actualEnd >= len(lines) {
		return "", 0
	}
	actual := value(lines[i+1 : actualEnd])
	matcher := strings.TrimSpace(lines[actualEnd])
	end := skipIndented(lines, actualEnd+1)
	expected := ""
	if end > actualEnd+1 {
		expected = value(lines[actualEnd+1 : end])
	}
	return matcherWords(actual, matcher, expected), end
}

// matcherWords says that actual did not meet a Gomega matcher's words (and expected value).
func matcherWords(actual, matcher, expected string) string {
	switch matcher {
	case "to equal", "to be equivalent to":
		return actual + ", expected " + expected
	case "not to equal", "not to be equivalent to":
		return actual + ", expected anything else"
	case "to be true", "to be false":
		return actual + ", expected " + strings.TrimPrefix(matcher, "to be ")
	case "to be nil":
		return actual + ", expected nothing (nil)"
	case "not to be nil":
		return "nothing (nil), expected a value"
	}
	if op, ok := strings.CutPrefix(matcher, "not to be "); ok {
		if neg, ok := negated[op]; ok {
			return actual + ", expected " + neg + " " + expected
		}
		return strings.TrimSpace(actual + ", expected not " + op + " " + expected)
	}
	if rest, ok := strings.CutPrefix(matcher, "to be "); ok {
		return strings.TrimSpace(actual + ", expected " + rest + " " + expected)
	}
	return strings.TrimSpace(actual + ", expected " + matcher + " " + expected)
}

// unexpectedErrorWords reads Gomega's "Unexpected error: / <type>: / message / {dump} /
// occurred" starting at line i and says the error's own message: "transport error: GET
// /t: EOF" (a driver.TransportError says so itself), else "unexpected error: MESSAGE".
func unexpectedErrorWords(lines []string, i int) (string, int) {
	end := skipIndented(lines, i+1)
	if end == i+1 {
		return "", 0
	}
	if end < len(lines) && strings.TrimSpace(lines[end]) == "occurred" {
		end++
	}
	typeLine := strings.TrimSpace(lines[i+1])
	message := strings.TrimSpace(gomegaType.ReplaceAllString(typeLine, ""))
	if message == "" && i+2 < end {
		message = strings.TrimSpace(lines[i+2])
	}
	switch {
	case message == "":
		return "unexpected error", end
	case strings.HasPrefix(message, "transport error"):
		return message, end
	}
	return "unexpected error: " + message, end
}

// value is a value Gomega printed (one or more indented lines) without its type, in one
// line: a multi-line value keeps its first line, marked "…"; an empty string reads
// "(empty)".
func value(lines []string) string {
	v := strings.TrimSpace(gomegaType.ReplaceAllString(strings.TrimSpace(lines[0]), ""))
	if len(lines) > 1 {
		v = strings.TrimSpace(v + " …")
	}
	if v == "" {
		return "(empty)"
	}
	return cut(v, cellWordsLimit/2)
}

// cutSubject takes what the spec said it checked from the lines out[chunk:] before a
// Gomega block: from the line where an answer's body it quotes begins (JSON or XML), that
// line without the body, and the body's lines are dropped; else the last line. It returns
// out without those lines, and the subject without a trailing colon ("" when none).
func cutSubject(out []string, chunk int) ([]string, string) {
	end := len(out)
	for end > chunk && strings.TrimSpace(out[end-1]) == "" {
		end--
	}
	for k := chunk; k < end; k++ {
		l := strings.TrimSpace(out[k])
		if subject := withoutBody(l); subject != strings.TrimSuffix(l, ":") {
			return out[:k], subject
		}
	}
	if end == chunk || indented(out[end-1]) {
		return out[:end], ""
	}
	return out[:end-1], withoutBody(out[end-1])
}

// joinSubject puts the subject before the words: "status 403, expected 401" for a
// one-word subject, "the entity's ETag: (empty), expected W/..." for longer ones.
func joinSubject(subject, words string) string {
	if !strings.ContainsAny(subject, " \t") {
		return subject + " " + words
	}
	return subject + ": " + words
}

func indented(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") }

// skipIndented returns the index of the first line from i on that is not indented (blank
// lines inside a value count as indented).
func skipIndented(lines []string, i int) int {
	for i < len(lines) && (indented(lines[i]) || (strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && indented(lines[i+1]))) {
		i++
	}
	return i
}
