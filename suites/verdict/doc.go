// Package verdict decides what a run means, in one place, as pure functions: a spec's
// outcome from what happened to it (Result, with its typed evidence), its rule's level, the
// profile's expectation and the backend's baseline entry (Decide); a rule's cell from its
// specs' decisions (Cell); a backend's verdict sentence from its cells (Judge); the exit
// status of `conform run` from each backend's verdict and counts (Exit), and of `conform
// replay` (ReplayExit), with the one table of what each status means (ExitStatuses), which
// every document lists; and how two outcomes compare for `conform report --diff` (Compare).
// What happened to a spec reaches it as a State, which suites/report's SpecState alone
// derives from Ginkgo's.
//
// Everything upstream only records (the framework's runner attaches a Result to each spec,
// the report reads it back); everything downstream only shows the decisions. No other code
// decides an outcome.
//
// Profiles plug in through Expectation: for each rule, a profile (storage, cosmos) expects
// the same answer as Azure Table Storage, a different recorded answer (status and code, or
// a difference of shape in the spec check it names), no promised order (the order check
// excused, the rest judged), or that the feature is not supported or nothing is promised
// (not applicable).
// ExpectationOf reads it from the rule catalogue.
//
// It may import the standard library, the contract (reference/spec, reference/api) and
// fixtures; nothing else.
package verdict
