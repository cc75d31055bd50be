// Package pagination holds the conformance specs of paging through Query Entities results
// with continuations (EVIDENCE.md 3.3, 3.5; the design guide's "Retrieve large numbers of
// entities from a query"; reference/spec/rules_pagination.go): the 1000-entity page cap, a
// continuation whenever results remain, every entity exactly once across pages and partition
// boundaries, saved continuations resumed later (also after inserts, updates and deletes),
// $filter, $select and $top re-sent with each continuation, and the last page. Short and
// empty pages, continuations at partition boundaries and a trailing empty page are allowed
// and recorded. Paging of Query Tables is specified with the table operations.
//
// It may import ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario;
// never reference or another spec package.
package pagination
