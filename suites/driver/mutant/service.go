package mutant

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Mutants of the account-wide surface the SDKs use: table ACL, service properties and
// stats, CORS, account SAS, stored access policies, SAS restrictions and bearer tokens
// (EVIDENCE.md, Service surface). The raw ones rewrite hand-made requests and answers; the
// SAS ones the options a SAS is signed with.

func isACL(r *http.Request) bool { return r.URL.Query().Get("comp") == "acl" }

func isServiceProperties(r *http.Request) bool {
	q := r.URL.Query()
	return q.Get("restype") == "service" && q.Get("comp") == "properties"
}

var (
	signedIdentifier = regexp.MustCompile(`(?s)<SignedIdentifier>.*?</SignedIdentifier>`)
	corsRule         = regexp.MustCompile(`(?s)<CorsRule>.*?</CorsRule>`)
	retentionDays    = regexp.MustCompile(`<Days>(36[6-9]|3[7-9][0-9]|[4-9][0-9][0-9]|[0-9]{4,})</Days>`)
)

// keepFirst keeps the first n matches of re in b and drops the others.
func keepFirst(b []byte, re *regexp.Regexp, n int) []byte {
	seen := 0
	return re.ReplaceAllFunc(b, func(m []byte) []byte {
		seen++
		if seen > n {
			return nil
		}
		return m
	})
}

func serviceMutant(m Mutant, req func(r *http.Request) *http.Response, resp func(r *http.Request, a *http.Response)) Mutant {
	if m.LabelFilter == "" {
		m.LabelFilter = "area:service"
	}
	return rawMutant(m, req, resp)
}

// defaultProperties is the answer of an account whose service properties were never set.
const defaultProperties = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging><HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics><MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics><Cors /></StorageServiceProperties>`

var (
	_ = serviceMutant(Mutant{
		Name:        "acl-json-only",
		Description: "applies the JSON content negotiation to Get and Set Table ACL: an XML Accept gets 415",
		Breaks:      []string{"service.acl.accept-xml"},
	}, func(r *http.Request) *http.Response {
		if isACL(r) && strings.Contains(r.Header.Get("Accept"), "xml") {
			return fakeAnswer(r, spec.ErrAtomFormatUnsupported)
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "acl-answer-emptied",
		Description: "answers Get Table ACL with an empty body",
		Breaks:      []string{"service.acl.empty", "service.acl.roundtrip"},
	}, nil, func(r *http.Request, a *http.Response) {
		if isACL(r) && r.Method == http.MethodGet && a.StatusCode == http.StatusOK {
			rewriteBody(&a.Body, &a.ContentLength, a.Header, func([]byte) []byte { return nil })
		}
	})

	_ = serviceMutant(Mutant{
		Name:        "acl-partial-policies-refused",
		Description: "refuses a Set Table ACL whose policies lack a Start, Expiry or Permission with 400 InvalidXmlDocument",
		Breaks:      []string{"service.acl.partial"},
	}, func(r *http.Request) *http.Response {
		if !isACL(r) || r.Method != http.MethodPut || r.Body == nil {
			return nil
		}
		var refuse bool
		rewriteRequestBody(r, func(b []byte) []byte {
			for _, m := range signedIdentifier.FindAll(b, -1) {
				for _, field := range []string{"<Start>", "<Expiry>", "<Permission>"} {
					refuse = refuse || !bytes.Contains(m, []byte(field))
				}
			}
			return b
		})
		if refuse {
			return fakeAnswer(r, spec.ErrInvalidXMLDocument)
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "acl-missing-table-as-table-not-found",
		Description: "answers Get and Set Table ACL on a missing table with 404 TableNotFound instead of ResourceNotFound",
		Breaks:      []string{"service.acl.missing-table"},
	}, nil, func(r *http.Request, a *http.Response) {
		if isACL(r) && a.StatusCode == http.StatusNotFound {
			a.Header.Set("x-ms-error-code", spec.ErrTableNotFound.Code)
		}
	})

	_ = serviceMutant(Mutant{
		Name:        "acl-unbounded",
		Description: "stores the first five of more than five signed identifiers instead of refusing the request",
		Breaks:      []string{"service.acl.too-many"},
	}, func(r *http.Request) *http.Response {
		if isACL(r) && r.Method == http.MethodPut && r.Body != nil {
			rewriteRequestBody(r, func(b []byte) []byte { return keepFirst(b, signedIdentifier, spec.MaxStoredAccessPolicies) })
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "properties-put-replaces-all",
		Description: "resets every section a Set Table Service Properties leaves out to its default",
		Breaks:      []string{"service.properties.keeps-omitted"},
	}, func(r *http.Request) *http.Response {
		if isServiceProperties(r) && r.Method == http.MethodPut && r.Body != nil {
			rewriteRequestBody(r, func(b []byte) []byte {
				for _, sec := range []string{"Logging", "HourMetrics", "MinuteMetrics", "Cors"} {
					if bytes.Contains(b, []byte("<"+sec+">")) {
						continue
					}
					def := regexp.MustCompile(`(?s)<` + sec + `( />|>.*?</` + sec + `>)`).Find([]byte(defaultProperties))
					b = bytes.Replace(b, []byte("</StorageServiceProperties>"), append(def, []byte("</StorageServiceProperties>")...), 1)
				}
				return b
			})
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "properties-get-defaults",
		Description: "answers Get Table Service Properties with the defaults, whatever was set",
		Breaks:      []string{"service.properties.roundtrip", "service.properties.keeps-omitted"},
	}, nil, func(r *http.Request, a *http.Response) {
		if isServiceProperties(r) && r.Method == http.MethodGet && a.StatusCode == http.StatusOK {
			rewriteBody(&a.Body, &a.ContentLength, a.Header, func([]byte) []byte { return []byte(defaultProperties) })
		}
	})

	_ = serviceMutant(Mutant{
		Name:        "properties-limits-unchecked",
		Description: "stores more than five CORS rules (the first five) and a retention over 365 days (as 365) instead of refusing them",
		Breaks:      []string{"service.properties.cors-limit", "service.properties.retention-limit"},
	}, func(r *http.Request) *http.Response {
		if isServiceProperties(r) && r.Method == http.MethodPut && r.Body != nil {
			rewriteRequestBody(r, func(b []byte) []byte {
				b = keepFirst(b, corsRule, spec.MaxCORSRules)
				return retentionDays.ReplaceAll(b, []byte("<Days>365</Days>"))
			})
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "stats-on-primary-only",
		Description: "does not know the secondary location: Get Table Service Stats there gets 400 InvalidUri",
		Breaks:      []string{"service.stats.secondary"},
	}, func(r *http.Request) *http.Response {
		if strings.Contains(r.URL.Path, "-secondary") || strings.Contains(r.URL.Host, "-secondary") {
			return fakeAnswer(r, spec.ErrInvalidURI)
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "secondary-write-acknowledged",
		Description: "acknowledges a write through the secondary location with 204 without refusing it",
		Breaks:      []string{"service.secondary.read-only"},
	}, func(r *http.Request) *http.Response {
		secondary := strings.Contains(r.URL.Path, "-secondary") || strings.Contains(r.URL.Host, "-secondary")
		if !secondary || r.Method == http.MethodGet || r.Method == http.MethodHead {
			return nil
		}
		a := fakeAnswer(r, spec.ErrorCode{Code: "", Status: http.StatusNoContent})
		a.Header.Del("x-ms-error-code")
		return a
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "cors-preflight-open",
		Description: "answers every preflight with 200 and Access-Control-Allow-Origin: *, whatever the stored CORS rules say",
		Breaks:      []string{"service.cors.preflight-refused"},
	}, func(r *http.Request) *http.Response {
		if r.Method != http.MethodOptions {
			return nil
		}
		a := fakeAnswer(r, spec.ErrorCode{Code: "", Status: http.StatusOK})
		a.Header.Del("x-ms-error-code")
		a.Header.Set("Access-Control-Allow-Origin", "*")
		a.Header.Set("Access-Control-Allow-Methods", r.Header.Get("Access-Control-Request-Method"))
		a.Header.Set("Access-Control-Max-Age", "500")
		return a
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "cors-preflight-closed",
		Description: "refuses every preflight with 403, whatever the stored CORS rules allow",
		Breaks:      []string{"service.cors.preflight-allowed"},
	}, func(r *http.Request) *http.Response {
		if r.Method == http.MethodOptions {
			return fakeAnswer(r, spec.ErrAuthorizationFailure)
		}
		return nil
	}, nil)

	_ = serviceMutant(Mutant{
		Name:        "cors-headers-dropped",
		Description: "leaves the CORS headers out of the answers to actual requests from allowed origins",
		Breaks:      []string{"service.cors.actual-headers"},
	}, nil, func(r *http.Request, a *http.Response) {
		if r.Method != http.MethodOptions {
			a.Header.Del("Access-Control-Allow-Origin")
			a.Header.Del("Access-Control-Expose-Headers")
		}
	})

	_ = rawMutant(Mutant{
		Name:        "batch-outer-accept-negotiated",
		Description: "applies the JSON content negotiation to a $batch's outer Accept: an Atom Accept gets 415",
		Breaks:      []string{"protocol.batch.outer-accept"},
	}, func(r *http.Request) *http.Response {
		if strings.HasSuffix(r.URL.Path, "$batch") && strings.Contains(r.Header.Get("Accept"), "atom") {
			return fakeAnswer(r, spec.ErrAtomFormatUnsupported)
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "bearer-accepted",
		Description: "accepts any bearer token as if it were the account key",
		Breaks:      []string{"auth.bearer.refused", "auth.bearer.challenge"},
		LabelFilter: "area:auth",
	}, func(r *http.Request) *http.Response {
		if strings.HasPrefix(strings.ToLower(r.Header.Get("Authorization")), "bearer ") {
			r.Header.Del("Authorization")
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "account-sas-signature-unchecked",
		Description: "does not verify the signature of an account SAS (a forged one works as the real one)",
		Breaks:      []string{"auth.account-sas.signature"},
		LabelFilter: "area:auth",
	}, func(r *http.Request) *http.Response {
		// Dropping the signature a spec put in makes the driver add the one it signed.
		if q := r.URL.Query(); q.Has("sig") {
			q.Del("sig")
			r.URL.RawQuery = q.Encode()
		}
		return nil
	}, nil)
)

// accountSASMutant is a mutant whose only fault is in the account SAS it signs.
func accountSASMutant(m Mutant, rewrite func(driver.AccountSASOptions) driver.AccountSASOptions) Mutant {
	m.Base, m.LabelFilter = "reference-http", "area:auth"
	return define(m, identity, hooks{accountSAS: rewrite})
}

var (
	_ = accountSASMutant(Mutant{
		Name:        "account-sas-ignores-resource-types",
		Description: "signs every account SAS for all resource types (sco), whatever the client asked for",
		Breaks:      []string{"auth.account-sas.resource-types"},
	}, func(o driver.AccountSASOptions) driver.AccountSASOptions {
		o.ResourceTypes = "sco"
		return o
	})

	_ = accountSASMutant(Mutant{
		Name:        "account-sas-ignores-permissions",
		Description: "signs every account SAS with all permissions, whatever the client asked for",
		Breaks:      []string{"auth.account-sas.permissions"},
	}, func(o driver.AccountSASOptions) driver.AccountSASOptions {
		o.Permissions = "rwdlacu"
		return o
	})

	_ = accountSASMutant(Mutant{
		Name:        "account-sas-any-service",
		Description: "signs every account SAS for every service, so one without the Table service is served",
		Breaks:      []string{"auth.account-sas.service"},
	}, func(o driver.AccountSASOptions) driver.AccountSASOptions {
		o.Services = "bfqt"
		return o
	})

	_ = accountSASMutant(Mutant{
		Name:        "account-sas-ignores-validity",
		Description: "signs every account SAS valid from now for an hour, whatever start and expiry the client asked for",
		Breaks:      []string{"auth.account-sas.expired"},
	}, func(o driver.AccountSASOptions) driver.AccountSASOptions {
		o.Start, o.Expiry = time.Time{}, time.Now().Add(time.Hour)
		return o
	})

	_ = define(Mutant{
		Name:        "sas-restrictions-ignored",
		Description: "does not enforce the signed IP range (sip) or protocol (spr) of a service or account SAS",
		Breaks:      []string{"auth.sas.ip", "auth.sas.protocol"},
		Base:        "reference-http",
		LabelFilter: "area:auth",
	}, identity, hooks{
		sas: func(o driver.SASOptions) driver.SASOptions {
			o.IPRange, o.Protocol = "", ""
			return o
		},
		accountSAS: func(o driver.AccountSASOptions) driver.AccountSASOptions {
			o.IPRange, o.Protocol = "", ""
			return o
		},
	})

	_ = sasMutant(Mutant{
		Name:        "stored-policy-ignored",
		Description: "serves a SAS naming a stored access policy with full permissions for an hour, without looking the policy up",
		Breaks:      []string{"auth.sas.stored-policy", "auth.sas.stored-policy-revoked", "auth.sas.stored-policy-unknown"},
	}, func(o driver.SASOptions) driver.SASOptions {
		if o.Identifier != "" {
			o.Identifier, o.Permissions, o.Expiry = "", "raud", time.Now().Add(time.Hour)
		}
		return o
	})
)
