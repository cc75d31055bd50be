// Package parallel holds the conformance specs of parallel use, from the design guide's
// "Asynchronous and parallel operations": parallel queries over partitions return what a
// serial query returns, concurrent writers never lose an acknowledged write, and
// conditional read-modify-write converges (rules parallel.* in
// reference/spec/rules_parallel.go). Sizes are bounded (8 workers, at most 50 operations
// each) so that the specs stay fast against an emulator; run them with -race.
//
// It imports ginkgo, gomega, reference/api, suites/framework, suites/driver,
// suites/matchers and suites/scenario (preconditions); never reference or another spec
// package.
package parallel
