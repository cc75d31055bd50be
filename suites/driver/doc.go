// Package driver holds what specs need beside the backend interface: its optional
// capabilities (SAS, raw HTTP), the description of a backend for reports, and the errors a
// driver reports about itself rather than the backend.
//
// The interface itself is api.Backend, in reference/api with the rest of the contract: the
// reference implements it in process and may not import the suites, and every driver and
// spec sees the one definition, under the one name api.Backend.
//
// The retry policy of every spec's calls lives here too (RetryPolicy, Retryable,
// Unanswered, ServerFault): which answers mean "try again", and which of them are still
// evidence when they persist, is part of what an answer means.
//
// Implementations live in sub-packages: inproc (the reference in process), rest (any
// endpoint over the raw Table REST protocol), sdk (any endpoint through the aztables SDK),
// and decorators (record, mutant). Spec packages import this package, never reference.
//
// It imports only the standard library, reference/api and reference/spec.
package driver
