// Package api holds the shapes of the Azure Table API that every implementation shares:
// entities and their EDM-typed values, the query, page and batch shapes, and the one
// Backend interface that the reference, the remote drivers and every decorator implement.
//
// It describes the API, not any implementation of it. It may import only the standard
// library and reference/spec.
package api
