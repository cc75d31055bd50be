// Package modification holds the conformance specs of entity writes: Insert, Update
// (replace), Merge, Insert Or Replace, Insert Or Merge and Delete Entity, their null and
// type semantics, their ETags and Timestamps, and the point isolation and read-your-writes
// that the design guide's "Design for data modification" relies on (EVIDENCE.md 1.3, 2.3, 5;
// rules modify.* in reference/spec/rules_modification.go).
//
// Specs are declared at package init; suites/all links the package. It imports ginkgo,
// gomega, reference/api, reference/spec, suites/framework, suites/driver, suites/matchers
// and suites/scenario (preconditions); never reference or another spec package.
package modification
