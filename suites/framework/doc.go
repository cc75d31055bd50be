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
// What happened to a spec is attached as typed report entries (entries.go): what the
// runner saw (EntryResult: passed, failed with a signature, blocked by a precondition of
// another rule, no answer), the baseline entry that lists it (EntryBaseline), transport
// failures and requests the driver could not send (from the recorder's marks). The runner
// concludes each spec through suites/verdict.Decide, and fails the Ginkgo spec exactly when
// the decision is unexpected or got no answer; suites/report decides the same outcome from
// the same entries. A spec declares what it relies on from other rules as preconditions:
// Blocked for a setup step that returned an error, F.Requires (or Requires) for a check,
// NoteFailedPrecondition for an assertion that knows its failure is a precondition's (a
// comparison that differs only by a type's round trip); a failed precondition blocks the
// spec, never fails it. A precondition is a step that another
// rule is about (loading data, a filter the spec merely uses, a valid transaction or SAS
// working at all before a refusal is judged), never the step the spec's own rule is about:
// inside a spec of that rule, Requires is an ordinary part of the spec. F.Raw itself
// requires, once per spec, that a signed request is served (RuleSignedRequests), so that a
// backend refusing Shared Key blocks the specs of hand-made requests. F.Check names an
// assertion of the spec (spec's Check constants), so that a profile's difference of shape
// excuses that assertion alone.
// Tables are named RunTableName and only names of RunTablePattern are ever deleted.
//
// It may import ginkgo, gomega, reference/api, reference/spec, fixtures, suites/verdict and
// suites/driver (with its decorators); never reference or a spec package.
package framework
