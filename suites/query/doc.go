// Package query holds the conformance specs of Query Entities: which entities a $filter
// selects (the design guide's point, range, partition and table scans; every comparison
// operator with a literal of every EDM type; typed comparisons across types and on missing
// properties; and, or, not and parentheses; malformed filters), $select and $top
// (EVIDENCE.md 3.1-3.4; reference/spec/rules_query.go). Result order is checked by
// suites/ordering and paging by suites/pagination; specs here compare entity sets, not
// their order.
//
// It may import ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario;
// never reference or another spec package.
package query
