// Package inproc is the driver for the reference in process: it adapts reference.Service to
// api.Backend, copying entities in and out so that no caller shares memory with the
// store, and describes itself for reports.
//
// It imports the standard library, reference, reference/api, suites/driver and
// internal/buildinfo (the version it reports).
package inproc
