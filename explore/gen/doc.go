// Package gen draws random but valid-looking Table API workloads: keys and property values
// that reach the edges the catalogue knows about (empty keys, forbidden and non-ASCII
// characters, sizes at the limits, one property's type changing across entities), $filter
// expressions over every EDM type, and sequences of table, entity, batch and query
// operations. The operations are plain data (Op), independent of any backend's answers:
// an ETag is named by what it refers to (the current one, a stale one, "*"), and a table by
// its index, so that one sequence runs the same on two backends and prints as a script.
//
// Its generators are rapid generators, so that whatever draws from them (conform explore,
// a workload, a model test) gets shrinking for free. It is the one place that draws
// workloads; the benchmarks and the reference's model tests may share it.
//
// It imports only the standard library, reference/api, reference/spec and
// pgregory.net/rapid.
package gen
