// Package framework is the Ginkgo glue of the conformance suites: rule-aware specs, one
// tree of specs per backend, per-spec tables with unique names, backend selection and the
// baselines of expected failures.
//
// A spec package declares its specs once with Describe; the framework builds them once per
// selected backend, under a container labelled "backend:NAME". Each spec is declared with
// its rule id (f.It, f.DescribeTable): the rule id, "level:", "area:" and "feature:" become
// Ginkgo labels and the rule is attached to the spec's report. The framework never imports
// a spec package.
//
// It may import ginkgo, gomega, reference/api, reference/spec, fixtures and suites/driver
// (with its decorators); never reference or a spec package.
package framework
