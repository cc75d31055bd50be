// Package provision starts and connects the backends conform runs against, chosen by name:
// the reference in process or behind its HTTP server, the naive model (reference/model) in
// process, Azurite from the npm package pinned in
// the repository (current and legacy lines; outside a checkout, from npm into conform's
// cache) or from a container, any published Azurite 3.x from npm into conform's cache
// (azurite@VERSION), any container image (NAME=image:REF,...) or local command
// (NAME=exec:COMMAND) that serves the Table API, and any endpoint given by a connection
// string. Open returns a ready api.Backend, its description and a Close that stops
// whatever was started.
//
// Errors are one readable line that names the backend and the cause, and never contain an
// account key or a signature.
//
// It may import the standard library, internal/buildinfo, reference, reference/api,
// reference/model, reference/spec, reference/tableserver, the drivers under suites/driver, and testcontainers-go. Spec
// packages must not import it: they receive a api.Backend.
package provision
