// Package buildinfo says which build of conform is running: its version and commit, set
// by the linker (make build, dist, image) or read from the build information Go records
// (the module version of `go install ...@vX`, vcs.revision and vcs.modified of a build in
// a checkout). `conform version`, the report's header and the in-process reference's
// version all say it through Current, so that they never disagree.
//
// It imports only the standard library.
package buildinfo
