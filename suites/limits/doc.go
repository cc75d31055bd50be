// Package limits holds the conformance specs of the data model's limits, each as a table of
// entries at exactly the limit and one unit over, through every write that can carry it:
// 252 custom properties, 255-character property names, 32 Ki UTF-16 units of Edm.String,
// 64 KiB of Edm.Binary, 1 KiB keys and 1 MiB entities by the documented size accounting
// (rules limits.* of reference/spec; EVIDENCE.md 1.2-1.5).
//
// Every refused write is followed by a read that shows the table unchanged. Limits come
// from reference/spec, never from numbers of the specs' own.
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework, suites/matchers and suites/scenario;
// never reference or another spec package.
package limits
