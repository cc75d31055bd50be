// Package batch holds the conformance specs of entity group transactions: every operation
// kind, results in request order with ETags, the limits (100 operations, 4 MiB, one
// partition, each entity once), all-or-nothing atomicity wherever the failing operation
// stands, the failing operation's code and index, a lone retrieve, and isolation from
// concurrent readers and writers (EVIDENCE.md 4; EGT; the design guide's "Entity group
// transactions" and "Ensure consistency in your stored entities"; rules batch.* in
// reference/spec/rules_batch.go, feature batch).
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/framework,
// suites/driver and suites/matchers; never reference or another spec package.
package batch
