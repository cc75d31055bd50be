// Package spec is the documented contract of the Azure Table API as data: every limit,
// every error code with its HTTP status and message, and the catalogue of conformance
// rules, each with its requirement level, documentation source and the entries of
// docs/EVIDENCE.md it rests on, each with that entry's strength (Rule.Evidence; a MUST names
// at least one, and only documented or recorded ones).
//
// The reference implementation and the spec packages both read it; neither holds a magic
// number of its own. Where EVIDENCE.md marks a fact UNCERTAIN, the choice conform makes is made
// here, once, and said in the comment beside it.
//
// What the suite expects of Cosmos DB for Table, rule by rule (Rule.Cosmos), is in
// cosmos.go; the answers and limits of the reference's own Cosmos flavour, which serves
// them, are in cosmos_flavor.go.
//
// It imports only the standard library.
package spec
