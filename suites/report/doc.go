// Package report turns Ginkgo's report of a run, plus the rule catalogue, into conform's
// conformance report: one canonical report.json and, derived from it, report.md,
// report.html (one self-contained file) and junit.xml. It also merges reports of earlier
// runs into one comparison.
//
// It may import ginkgo's types, reference/spec, fixtures, suites/driver and
// suites/framework (for the names of report entries and labels).
package report
