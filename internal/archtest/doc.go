// Package archtest checks, as a test, the dependency directions conform's layout promises:
// the contract packages import only the standard library, spec packages never import the
// reference or each other, the framework never imports a spec package, and nothing imports
// cmd/conform.
//
// It holds no code of its own beyond its test.
package archtest
