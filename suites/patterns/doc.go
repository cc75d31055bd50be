// Package patterns holds the conformance specs of the Azure Table design guide's table
// design patterns, anti-patterns and implementation considerations
// (https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-guide#table-design-patterns),
// one file per pattern. Each spec plays the pattern with the guide's own example data
// (package fixtures) and asserts the pattern's promise: the right entities come back, the
// copies and indexes agree with the data, transactions are atomic, retries converge. What a
// pattern costs (hot partitions, scans, round trips) is left to the benchmarks.
//
// Specs are declared at package init, so the CLI links them too; suites/all/patterns.go
// links the package into the suite.
//
// It may import ginkgo, gomega, reference/api, reference/spec, fixtures, suites/framework,
// suites/matchers, suites/scenario and suites/driver;
// never reference or another spec package.
package patterns
