// Package relationships holds the conformance specs of the design guide's "Model
// relationships" and "Work with heterogeneous entity types"
// (https://learn.microsoft.com/en-us/azure/storage/tables/table-storage-design-guide#model-relationships):
// one-to-many in the guide's three layouts, one-to-one, joins in the client, inheritance,
// entity types told apart by an EntityType property or a RowKey prefix, and why a move
// between partitions cannot be one transaction. The data is the guide's employees and
// departments (package fixtures).
//
// Specs are declared at package init; suites/all/relationships.go links the package.
//
// It may import ginkgo, gomega, reference/api, reference/spec, fixtures, suites/framework,
// suites/matchers, suites/scenario and suites/driver;
// never reference or another spec package.
package relationships
