// Package concurrency holds the conformance specs of optimistic concurrency with ETags:
// stale and current ETags on replace, merge and delete, If-Match *, the upsert meaning of
// an absent If-Match, and races of writers that carry the same ETag (EVIDENCE.md 2.3, 2.4; the
// design guide's "Managing concurrency"; rules concurrency.* in
// reference/spec/rules_concurrency.go).
//
// It imports ginkgo, gomega, reference/api, suites/framework, suites/driver and
// suites/matchers; never reference or another spec package.
package concurrency
