// Package replay reads recordings of Table API traffic and replays them against a backend
// over HTTP, comparing what the backend answers with what was recorded.
//
// Recordings come in the format of the Azure SDKs' test proxy (JSON: Entries of
// RequestUri, RequestMethod, RequestHeaders, RequestBody, StatusCode, ResponseHeaders,
// ResponseBody; Variables), which `conform run --record` also writes, or in the YAML cassette
// formats the SDKs used before it: vcrpy (Python) and go-vcr (Go). HTTP/2 pseudo-headers
// (":method", as the Go SDK's recordings carry) are left out, and a body the proxy kept as
// a list of lines is read as its text. Parse reads any of them
// into a Recording; WriteTestProxy writes one back in the test proxy's format, with
// credentials sanitised (Sanitize).
//
// Replayer sends each recorded request to a target account: the account and host are
// rewritten, tables get a fresh prefix per recording, the request is signed with Shared Key
// for the target (a recorded SAS is issued again with the target's key and a future
// expiry), and the ETags and continuation tokens the target answered stand in for the
// recorded ones in later requests. Each exchange is then compared on what a client can rely
// on: status, error code, entities (keys, property types and values, not Timestamp or ETag
// values) and their order, the presence of continuation headers and of an ETag, the Prefer
// choice applied, a JSON answer's media type and metadata level, and each $batch part's
// status and code. With Replayer.Strict the order of entities is compared under every profile
// (tables stay a set) and so is the first line of an error's message. What cannot be replayed
// is skipped with its reason.
//
// A Replayer (replay.go) sends a recording's requests with the recorded table names, times,
// ETags and continuation tokens rewritten into the live ones (rewrite.go), creates the tables
// a recording expects and removes them after it (tables.go), and signs a recorded SAS anew
// with the target's key, its validity moved to now (sas.go).
//
// It may import the standard library, go.yaml.in/yaml/v3, reference/api, reference/spec and
// reference/wire.
package replay
