// Command conform runs the Azure Table API conformance suites against one or more backends
// and writes a report that compares them; it also lists the rule catalogue, serves the
// reference over the Table REST protocol (and exports what a repair of its data directory
// set aside, `conform data export`), merges earlier reports, compares the published runs of
// many implementations and versions (matrix) and cleans up tables left by crashed runs.
//
// It imports everything and is imported by nothing.
package main
