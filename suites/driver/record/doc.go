// Package record is a Backend decorator that keeps the history of every call: what was
// sent, what came back, the request id and the time taken. The framework attaches the
// history to a failed spec's report, so a failure says what the backend was asked and what
// it answered.
//
// It imports only the standard library, reference/api, reference/spec and suites/driver.
package record
