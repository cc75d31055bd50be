// Package record is a Backend decorator that keeps the history of every call: what was
// sent, what came back, the request id and the time taken. The framework attaches the
// history to a failed spec's report, so a failure says what the backend was asked and what
// it answered.
//
// It also retries every call as the Azure SDKs do (driver.RetryPolicy: no answer, or an
// answer that the service was busy or timed out), raw and unsigned HTTP exchanges included,
// and records each attempt. Marks on the calls tell the framework what an outcome may rest
// on: a call still unanswered after its retries, or an answer to a retry after an attempt
// that may have been carried out, makes a failed spec inconclusive; such marked calls outlive
// a long history. It notes the property names a spec writes (WrittenByRunningSpec), so that
// an entity comparison judges only what its spec wrote, and the keys it writes
// (KeyMayHaveBeenWrittenByRunningSpec), so that a key come back in another letter case is
// told from another entity of the spec's.
//
// It imports only the standard library, reference/api, reference/spec and suites/driver.
package record
