// Package protocol holds the conformance specs that only raw HTTP shows: the status codes
// and headers of entity operations, the Prefer header, the merge verbs and X-HTTP-Method
// tunnelling, the conditional headers, the odata.error body and the JSON metadata levels
// (EVIDENCE.md 2.1, 2.3-2.5, 5.1, 6; rules protocol.* in reference/spec/rules_protocol.go,
// feature protocol). Every spec needs driver.RawHTTP and is skipped on a backend without it
// (the in-process reference).
//
// The specs build their request bodies and read the answers with encoding/json on purpose,
// not with the project's wire codec, so that a codec bug cannot hide a protocol bug.
//
// It imports ginkgo, gomega, reference/api, reference/spec (the names of its checks),
// suites/framework, suites/driver, suites/matchers and suites/scenario (preconditions);
// never reference or another spec package.
package protocol
