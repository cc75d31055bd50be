// Package wire is the Table REST protocol's codec, shared by the reference server
// (reference/tableserver) and the raw REST driver (suites/driver/rest) so that both sides
// speak exactly the same bytes:
//
//   - JSON entities and tables at the three metadata levels, with `@odata.type`
//     annotations as the service writes them (entity.go; values and JSON strings in
//     encode_values.go), and a typed decoder that understands every
//     annotation (EVIDENCE.md 1.5, 6; it never repeats the SDK's lossy decoding, EVIDENCE.md 12 #1-3)
//     (decode.go), with one reader per EDM type (decode_values.go), taking the entity values
//     Storage accepts beyond the documented forms (EVIDENCE.md 13: E-datetime-no-zone,
//     E-datetime-extra-digits, E-typed-string-values, E-annotation-nested);
//   - entity and table URL paths (`t(PartitionKey='..',RowKey='..')`, `Tables('t')`);
//   - connection strings, with a redacted form that never shows a secret;
//   - Shared Key and Shared Key Lite (auth.go), service SAS (sas.go) and account SAS
//     (sas_account.go) signing and verification (EVIDENCE.md 7);
//   - entity group transactions as multipart/mixed, framed like Storage (EVIDENCE.md 4);
//   - error bodies (JSON odata.error and XML) and their decoding into *spec.Error (EVIDENCE.md 5);
//   - continuation headers and parameters (EVIDENCE.md 3.5).
//
// Decoding failures caused by what a client sent are *spec.Error values with the documented
// code, so that a server can answer them as they are; a client that decodes an answer must
// treat them as protocol failures, not as service failures.
//
// It imports only the standard library, reference/api and reference/spec.
package wire
