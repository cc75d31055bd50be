// Package tableserver serves the Table REST protocol over any api.Backend, so that every SDK
// and the raw REST driver can talk to the in-memory reference (or to any other backend).
//
// New(backend, opts...) returns an http.Handler. It serves every operation of EVIDENCE.md 2
// (tables, entities, queries with continuation, batches at /$batch, Table ACL) with the
// service's URLs, verbs (MERGE, PATCH and POST with X-HTTP-Method), headers, metadata levels
// and error bodies, and authenticates Shared Key, Shared Key Lite, service SAS (with stored
// access policies, sip and spr) and account SAS for the development account and the accounts
// given by WithAccount, and with WithOAuth bearer tokens (oauth.go). Each account is a
// namespace of its own: its own backend, table ACLs and service properties. Paths may be
// emulator style (`/ACCOUNT/Tables`) or host style, as production URLs name the account
// (`ACCOUNT.table.core.windows.net` or `ACCOUNT.table.localhost`, `/Tables`);
// `ACCOUNT-secondary` names the account's secondary location. Served over TLS, spr=https
// SAS tokens are accepted (cmd/conform's serve --tls).
//
// server.go holds the Server, its options and limits; each request is an exchange
// (exchange.go: ServeHTTP and the checks every request passes before it is routed), whose
// account, resource, URLs and effective method are found in routing.go, whose credentials
// are checked in auth.go, whose headers are read and written in headers.go, whose body is
// read in body.go, whose backend work is bounded by the timeout context in deadline.go, and
// which is answered by answer.go, or by errors.go when it fails. The operations themselves
// are in handlers.go and batch.go.
//
// The account-wide XML resources live in their own files: the table ACL (acl.go), service
// properties and stats (service.go), CORS preflight and headers (cors.go); account SAS and
// stored policies in sas_account.go (EVIDENCE.md, Service surface). An account's table ACLs
// and service properties (Settings) can be kept across restarts by a SettingsKeeper
// (WithSettings, settings.go): a change is answered once it is kept, and undone when it
// cannot be.
//
// Serve it with (*Server).HTTPServer on a listener made by Listener (framing.go), or with
// ListenAndServe, which set every http.Server timeout (WithLimits shortens them). At most
// Limits.MaxConcurrentRequests requests are served at once; past it a request is answered
// 503 ServerBusy at once (Busy counts them). Request bodies are bounded before they are read
// (spec.MaxRequestBodyBytes, 413 RequestBodyTooLarge) and must arrive at Limits.MinBodyRate
// (pace.go; a request waiting for its body does not count against the bound); malformed
// requests get the documented 4xx, never a 5xx. A request with both Content-Length and
// Transfer-Encoding is answered and its connection closed (RFC 9112 6.3). Backend work is
// bounded by the request's timeout (at most 30 s), not by its connection: a client that
// half-closes after its request still gets the answer. A large Query Entities answer is
// written as it is rendered (writeEntitySet), so that a client that does not read holds
// about a MiB of it, not the page, and no concurrency slot while the answer waits for it.
//
// The property maps of write requests are reused once the backend has returned, emptied,
// when the backend keeps nothing of what it is given (the reference; requestProperties);
// the latest Host's parse is kept as a copy (hostOf).
//
// A request's own costs are kept small (BenchmarkSDKCeilingServer and
// BenchmarkSDKCeilingHandler measure them; TestSDKCeilingAnswers holds the answers byte for
// byte): header values live in the exchange, and a Server keeps, bounded in number and in
// bytes, what clients repeat: parsed query strings (querycache.go, shared read-only, copied
// out of their request), its service URLs (for Hosts of up to 300 bytes), answer lengths'
// texts and request ids cut from batches (ids.go). Nothing it keeps refers to a request.
// A backend that lists entities (listed.go: reference.Service, persist.Store) answers gets
// and queries into buffers the server reuses, rendered without a map per entity.
//
// NewCosmos wraps a Server in the Cosmos DB for Table flavour (cosmos.go; its error answers in
// cosmos_errors.go, the answer bodies it rewrites in cosmos_bodies.go): a protocol and
// limits layer in front of the same Server, store and model that answers as recorded Cosmos
// traffic does (docs/EVIDENCE.md, "Cosmos DB for Table in recorded traffic"), with an
// optional request-unit budget per account answered 429. It lists entities in the order of
// their last writes and tables in an order of its own, reading the Server's whole answer and
// paging it itself (cosmos_order.go). It holds no data of its own. Its backends hold
// case-sensitive table names (reference.CosmosOptions), and under it the Server matches a
// transaction's and an ACL's table by the exact name.
//
// It may import reference/api, reference/spec, reference/wire and reference/odata.
package tableserver
