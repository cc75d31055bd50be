// Package tables holds the conformance specs of tables: name rules at and past each
// boundary, case-insensitive uniqueness, Create Table, Delete Table, Query Tables with
// $filter, $top and NextTableName, entity operations on a missing table and the reuse of a
// deleted name (rules tables.* of reference/spec; EVIDENCE.md 1.1, 2.2, 5.2).
//
// Every table a spec creates starts with the run's prefix, except the few names that a
// boundary makes impossible (a 3-character name, a leading digit, the reserved name); those
// are created only by the spec that needs them and deleted by that spec when the create
// succeeded. Query Tables is always filtered to a prefix this spec owns, and a listing is
// judged only on the names the spec created (ownTables): other processes of the run create
// tables beside it, and a backend may list more than the filter selects.
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework and suites/matchers; never reference or another spec package.
package tables
