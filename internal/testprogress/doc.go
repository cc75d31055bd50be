// Command testprogress runs `go test -json ...` for make test and make test-all, passes its
// events through unchanged on standard output (to gotestsum, which prints a line per package
// and the closing summary), and writes on standard error what gotestsum does not say:
//
//   - a line of progress whenever 25 seconds went by without one (the packages still running
//     and for how long), so that no step of make test is silent for minutes;
//   - at the end, each skipped test in one line with its reason;
//   - at the end, the lines tests log with the prefix "conform summary: " (the conformance
//     suite's counts per backend), once each.
//
// Its exit status is the test command's. It imports only the standard library, and nothing
// imports it.
package main
