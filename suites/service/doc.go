// Package service holds the conformance specs of the account-wide resources the SDKs use:
// the table ACL (Get/Set Table ACL in XML, whatever Accept says), the service properties
// (logging, metrics, CORS), the service statistics on the secondary location and CORS
// (preflight and actual requests) (rules service.* of reference/spec; EVIDENCE.md, Service
// surface).
//
// Every spec sends hand-made requests through driver.RawHTTP; on other backends they are
// skipped as "capability missing". Specs that change account-wide settings (service
// properties, CORS) run one at a time, put the old settings back, and run against an
// endpoint that is not an emulator only with CONFORM_ALLOW_ACCOUNT_CHANGES=1.
//
// It imports ginkgo, gomega, reference/spec, suites/driver, suites/framework and
// suites/matchers; never reference or another spec package.
package service
