package verdict

import (
	"fmt"
	"strings"
)

// ExitStatus is one exit status of `conform run` and `conform replay`, with what it means
// in one line.
type ExitStatus struct {
	Code    int
	Meaning string
}

// ExitStatuses is the one table of the exit statuses (Exit and ReplayExit return no
// other). README.md, `conform run --help`, `conform replay --help`, action.yml and
// docs/CONFORMANCE-REPORT.md each list exactly these, in this order and these words (a
// test in cmd/conform reads them).
var ExitStatuses = []ExitStatus{
	{ExitOK, "conforms, or every failure is one its baseline lists (nothing else failed)"},
	{ExitFailed, "an unexpected outcome: a failure or a pass its baseline does not expect"},
	{ExitUsage, "a usage error, or a backend that could not be started or reached"},
	{ExitInconclusive, "inconclusive: specs got no answer, or the backend stopped answering"},
	{ExitInterrupted, "interrupted: the run did not finish (the report holds what ran)"},
}

// ExitStatusText is the table as plain text, a line per status, each line indented.
func ExitStatusText(indent string) string {
	var b strings.Builder
	for _, s := range ExitStatuses {
		fmt.Fprintf(&b, "%s%-4d %s\n", indent, s.Code, s.Meaning)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
