// Package report turns Ginkgo's report of a run, plus the rule catalogue, into conform's
// conformance report: one canonical report.json and, derived from it, report.md,
// report.html (one self-contained file) and junit.xml. It also merges reports of earlier
// runs into one comparison. It decides no outcome itself: each spec's outcome, each cell
// and each backend's verdict come from suites/verdict, from the typed evidence the
// framework attached. SpecState is the one adapter from Ginkgo's state of a spec to the
// verdict's (left out by the run's filter, not started because the run stopped, and the
// rest); StoppedBy says whether, and why, a run stopped; Exit is the exit status of the
// judged report. FailureInWords is the one place that turns Gomega's formatted failure
// messages into words ("status 403, expected 401") for cells, summaries and progress.
//
// It may import ginkgo's types, reference/spec, fixtures, suites/driver and
// suites/framework (for the names of report entries and labels) and suites/verdict.
package report
