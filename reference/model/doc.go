// Package model is the Table service as its contract reads, kept as plainly as it can be:
// a map of tables, each a map of entities by key, one mutex, a sort on every query, and a
// batch run on a copy of its table's map that replaces the map only when every operation
// succeeded. Model implements api.Backend; it is the oracle the tuned engine (package
// reference: its store, indexes, caches and pools) is compared with (diff_test.go), and a
// backend of its own ("model" in suites/provision), so that the whole catalogue runs
// against it.
//
// Its size: one file, model.go, of about 460 lines (some 390 without comments and blank
// lines), 22 functions; with CosmosOptions it holds the Cosmos flavour's case-sensitive
// table names and property limits as the Service does. An afternoon's reading.
//
// What it does not write itself, and why. The rules that decide whether a request is valid
// and which answer an invalid or UNCERTAIN request gets are reference's (rules.go, which
// exports validate.go, choices.go, continuation.go and the query options of filter.go):
// table names, keys, property names and values, sizes, If-Match forms, batch checks, the
// continuation token format and $top/$select. Those rules are data and pure functions, not
// engine; written twice they would be compared with each other rather than with the
// evidence. The $filter parser and evaluator are reference/odata's, for the same reason.
// What the model owns is what the engine tunes: where entities live, their order, which
// version an ETag names, what a write and a merge store, what a page holds and where the
// next one starts, and what a failed transaction leaves (nothing).
//
// Table ACLs and service properties are kept by the HTTP server (reference/tableserver)
// over any api.Backend, the model among them; they are not part of api.Backend.
//
// It may import the standard library, reference (its exported rules only), reference/api,
// reference/odata and reference/spec.
package model
