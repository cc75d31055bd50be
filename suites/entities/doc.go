// Package entities holds the conformance specs of entities: their keys (required, empty,
// case-sensitive, forbidden and allowed characters), the system properties Timestamp and
// ETag, the schema-less property model (heterogeneous entities, one name with several
// types, property-name rules) and null values (rules entities.* of reference/spec;
// EVIDENCE.md 1.2, 1.3, 2.4).
//
// A few specs speak the raw protocol (a body without keys, a client-sent Timestamp, a
// duplicate property) and run only on backends reached over HTTP.
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario;
// never reference or another spec package.
package entities
