// Package rest is an api.Backend that speaks the Table REST protocol itself over net/http,
// so that specs can send exactly what the documentation describes, including requests that
// SDKs refuse to send. It shares its codec (reference/wire) with the reference server.
//
// New(connectionString, opts...) authenticates with Shared Key (or Shared Key Lite by
// option) or with the connection string's SAS. The Backend also implements
// driver.Describer, driver.RawHTTP (sign and send hand-made requests) and driver.SASIssuer.
//
// With its own client, an http:// endpoint reached without a proxy and the account key,
// the api.Backend operations are written and read on kept connections by the calling
// goroutine (direct.go), the same bytes net/http would send, so that a load run measures
// the service rather than the client's Transport; RawHTTP requests, SAS credentials, https
// and a client given with WithHTTPClient always go through net/http.
//
// It may import reference/api, reference/spec, reference/wire and suites/driver.
package rest
