// Package mutant holds deliberately wrong backends: decorators over a correct backend, each
// breaking one documented behaviour the way a backend author who cut a corner would (a page
// in reverse order, a dropped continuation, If-Match ignored, a batch that is not atomic).
// The mutation test in suites/all runs the suite against every mutant and checks that the
// rules a mutant claims to break fail, so that the suite itself is tested.
//
// A mutant is selected as the backend "mutant:NAME" or "mutant:NAME@BASE" (suites/all.Open).
// Decorators forward the optional capabilities of the backend they wrap: a SAS-derived
// backend is wrapped by the same mutant, raw HTTP passes through untouched unless the
// mutant's fault lives at the protocol level.
//
// It imports the standard library, reference/api, reference/spec, reference/wire (header
// names), reference/odata (filter mutants read a $filter with the service's own lexer,
// odata.Tokens, instead of a tokenizer of their own) and suites/driver. odata is a leaf
// over the contract (it imports only the standard library, reference/api and
// reference/spec; internal/archtest holds it to that), so the mutants reach no state or
// behaviour of the reference through it.
package mutant
