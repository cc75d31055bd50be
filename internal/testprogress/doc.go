// Command testprogress runs `go test -json ...` for make test and make test-all and passes
// its events on, on standard output, to gotestsum (format standard-quiet: go test's line per
// package, then gotestsum's closing summary). It adds, as output events of their own, what
// go test and gotestsum do not say:
//
//   - a line of progress whenever 20 seconds went by without a line (the packages still
//     running and for how long), so that no step of make test is silent for minutes;
//   - with a package's line (just after go test's "ok"), each of its skipped tests in one
//     line with its reason, and
//     the lines its tests logged with the prefix "conform summary: " (the conformance
//     suite's counts per backend);
//   - at the end, the specs listed in CONFORM_RETRY_LOG (passed only when retried).
//
// It writes nothing else: gotestsum counts anything on standard error as an error.
//
// testprogress -plain WHAT COMMAND... runs any other command (go vet, go build) with its
// output passed through, and says "... 1m15s: still WHAT" on standard error whenever 20
// seconds pass without a line. In both modes its exit status is the command's. Its tests
// also check the closing line of make test and make test-all (the Makefile's steps). It imports only the standard library, and nothing imports it.
package main
