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
// What happened to a spec is attached as typed report entries (entries.go): transport
// failures and requests the driver could not send (from the recorder's marks), a setup
// blocked by another rule (Blocked), and the baseline's verdict on it (expected failure,
// changed failure, flaky, unexpected pass). suites/report classifies specs by them only.
// Tables are named RunTableName and only names of RunTablePattern are ever deleted.
//
// It may import ginkgo, gomega, reference/api, reference/spec, fixtures and suites/driver
// (with its decorators); never reference or a spec package.
package framework
