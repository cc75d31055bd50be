// Package rest is an api.Backend that speaks the Table REST protocol itself over net/http,
// so that specs can send exactly what the documentation describes, including requests that
// SDKs refuse to send. It shares its codec (reference/wire) with the reference server.
//
// New(connectionString, opts...) authenticates with Shared Key (or Shared Key Lite by
// option) or with the connection string's SAS. The Backend also implements
// driver.Describer, driver.RawHTTP (sign and send hand-made requests) and driver.SASIssuer.
//
// Every request goes through net/http (conformance verdicts must not depend on a
// hand-written client). With WithDirectSender, its own client, an http:// endpoint reached
// without a proxy and the account key, the api.Backend operations are instead written and
// read on kept connections by the calling goroutine (direct.go; answers read in
// direct_answer.go), the same bytes net/http would send, so that a load run measures the
// service rather than the client's Transport; only benchmarks use it. Bodies from 2 KiB to 4 MiB are sent with Expect: 100-continue
// (ExpectContinue), so that proxies in front of a fast server do not lose answers.
//
// rest.go holds the Backend, its options and its exchange of one request and answer;
// operations.go the api.Backend operations and SAS issuing over it; batch.go transactions.
//
// It may import reference/api, reference/spec, reference/wire and suites/driver.
package rest
