// Package auth holds the conformance specs of authorization: a service SAS for a table
// (each permission alone and together, PartitionKey and RowKey ranges, start and expiry
// times, another table, table management, sip and spr, stored access policies), an account
// SAS (resource types, permissions, services, validity, signature), bearer tokens and
// Shared Key (a valid signature, a wrong one, none at all) (rules auth.* of reference/spec;
// EVIDENCE.md 5.3, 7; EVIDENCE.md, Service surface).
//
// SAS specs need a backend that issues SAS tokens (driver.SASIssuer) and Shared Key specs
// one that takes hand-made HTTP requests (driver.RawHTTP); on other backends they are
// skipped as "capability missing". Every refusal is followed by a read with the account
// key that shows the table unchanged.
//
// It imports ginkgo, gomega, reference/api, reference/spec, suites/driver,
// suites/framework and suites/matchers; never reference or another spec package.
package auth
