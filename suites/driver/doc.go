// Package driver is the one backend interface the spec packages program against, with its
// optional capabilities and the description of a backend for reports.
//
// Implementations live in sub-packages: inproc (the reference in process), rest (any
// endpoint over the raw Table REST protocol), sdk (any endpoint through the aztables SDK),
// and decorators (record, mutant). Spec packages import this package, never reference.
//
// It imports only the standard library, reference/api and reference/spec.
package driver
