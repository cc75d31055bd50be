// Package types holds the conformance specs of the eight EDM property types: each value,
// at and near the edges of its type's range, must read back with the same type and exactly
// the same value through Get Entity and through Query Entities; DateTimes before 1601 are
// refused; one entity holds all eight types; a write may change a property's type (rules
// types.* of reference/spec; EVIDENCE.md 1.5).
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario (preconditions); never reference or
// another spec package.
package types
