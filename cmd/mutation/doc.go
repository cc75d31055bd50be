// Command mutation runs the source-mutation measure of the conformance suite (`make
// mutation`): it mutates the reference's source with standard operators
// (internal/srcmutate), runs the suite against each mutant in process, one at a time, and
// writes mutation-report/mutation.md and mutation.json.
//
// It may import the standard library and internal/srcmutate.
package main
