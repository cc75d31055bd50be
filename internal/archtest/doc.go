// Package archtest checks, as a test, the dependency directions conform's layout promises,
// on everything each package reaches through its production imports (the transitive
// closure), not only what it imports itself. A violation names the chain of imports that
// reaches the forbidden package.
//
// The rules (rules_test.go): nothing imports a command; the contract (reference/spec,
// reference/api) imports only the standard library; the filter grammar, the wire protocol,
// the fixtures and the backend interface only the contract; the reference knows no suite;
// the reference's storage engine (reference/internal/store) imports only the standard
// library, tidwall/btree and reference/api, and only package reference imports it; only
// tests import internal/testseed;
// spec packages see only the contract and the suites' helpers, never the reference, a driver,
// provision or each other; and the framework, the matchers, the scenario helpers, the report
// and the drivers each have rules of their own.
//
// It also holds production code to line budgets (size_test.go): no file over 600 lines and
// no function over 100 outside rule data, unless its list of oversized files and functions
// says why.
//
// It holds no code of its own beyond its tests, and imports only the standard library.
package archtest
