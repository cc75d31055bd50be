// Package scenario holds the steps that several spec packages take alike: entities built
// from name/value pairs, $filter expressions built from clauses, the documented writes of a
// whole entity, and loading, reading and querying a table where any failure fails the spec
// (these steps set a spec up or read its state back; the rule under test is asserted by the
// spec itself).
//
// Spec packages import it by name. It may import ginkgo, gomega, fixtures, reference/api,
// suites/driver, suites/framework (to mark a spec blocked by its setup) and suites/matchers; never reference or a spec package.
package scenario
