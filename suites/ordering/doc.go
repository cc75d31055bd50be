// Package ordering holds the conformance specs of the order of query results: sorted by
// PartitionKey, then RowKey, as ordinal strings (EVIDENCE.md 3.2, 11.9; the design guide's
// "Sort data in Table storage"; reference/spec/rules_ordering.go), within a page, across
// pages and across partitions, for mixed case, digits, zero-padded numbers, non-ASCII
// characters, surrogate pairs and empty keys, and the inverted-ticks pattern for newest-first
// order. Cosmos DB for Table documents that it does not sort results, which every rule here
// records as its Cosmos expectation (spec.CosmosOrderUnpromised): each spec asserts which entities come back first and
// their order last, in its order check (F.Check with spec.CheckOrder), which the cosmos
// profile excuses alone.
//
// Expected orders are written out literally in each spec, not computed with
// api.CompareKeyStrings, so that the specs check that function's choice too.
//
// It may import ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario;
// never reference or another spec package.
package ordering
