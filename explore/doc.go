// Package explore finds the differences between two Table API backends that no rule names
// yet: it runs random operation sequences (drawn by explore/gen) against both, each in its
// own tables, compares every answer (status, error code, entities and their order,
// continuation presence, batch results) and what the tables hold afterwards, read back, and
// shrinks the first difference of each kind to a minimal sequence: pgregory.net/rapid shrinks
// the draws, then the operations the difference does without are dropped one at a time.
// Each difference is matched against the catalogue (reference/spec) and, when a baseline of
// the explored backend lists the rule it falls under with the same answer, marked as known.
//
// It drives backends only through api.Backend; opening them (the backend registry, mutants,
// serving the reference over HTTP to record a reproduction) is the command's business. It
// may import the standard library, reference/api, reference/spec, fixtures (baselines),
// suites/driver (what an error means), explore/gen and pgregory.net/rapid.
package explore
