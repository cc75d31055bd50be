// Package srcmutate measures the conformance suite's power without bias: it mutates the
// source of the reference implementation with standard mutation operators (conditional
// boundaries and negations, arithmetic, increments, logical operators, negations, boolean
// literals), runs the suite against each mutant in process, and records which mutants the
// suite killed and by which specs.
//
// The rule-targeted wrong backends of suites/driver/mutant prove that every rule can fail;
// they are written per rule and kept when caught, so they cannot measure how much of the
// reference's behaviour the suite pins down. Source mutants are made mechanically, so the
// share killed is an honest estimate of that (see docs/MUTATION.md).
//
// A mutant is never written into the source tree: its file is written to a temporary
// directory and substituted with the go command's -overlay flag. A mutant that does not
// compile is discarded ("not viable"), not counted.
//
// It imports only the standard library: it reads Ginkgo's JSON report as data.
package srcmutate
