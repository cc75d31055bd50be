package tableserver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/spec"
)

// CORS as the storage services do it (EVIDENCE.md, E-cors): a preflight OPTIONS is
// answered from the account's stored CORS rules without credentials, and an actual request
// from an allowed origin carries the CORS headers of the first rule that matches it.

// matchCORS returns the first rule allowing origin, method and every header in headers.
func matchCORS(rules []CORSRule, origin, method string, headers []string) (CORSRule, bool) {
	for _, r := range rules {
		if !corsOriginAllowed(r, origin) || !containsFold(splitList(r.AllowedMethods), method) {
			continue
		}
		ok := true
		for _, h := range headers {
			ok = ok && corsHeaderAllowed(splitList(r.AllowedHeaders), h)
		}
		if ok {
			return r, true
		}
	}
	return CORSRule{}, false
}

func corsOriginAllowed(r CORSRule, origin string) bool {
	for _, o := range splitList(r.AllowedOrigins) {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// corsHeaderAllowed matches a header against patterns: a name, a prefix ending in "*", or
// "*" for any.
func corsHeaderAllowed(patterns []string, h string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if len(h) >= len(prefix) && strings.EqualFold(h[:len(prefix)], prefix) {
				return true
			}
		} else if strings.EqualFold(p, h) {
			return true
		}
	}
	return false
}

func containsFold(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}

func allowsAnyOrigin(r CORSRule) bool { return containsFold(splitList(r.AllowedOrigins), "*") }

// preflight answers an OPTIONS request: 400 without Origin or
// Access-Control-Request-Method, 403 when no CORS rule allows it, else 200 with the
// Access-Control-* headers.
func (x *exchange) preflight() {
	x.jsonErr, x.prefixedXMLErr = false, true // as the ACL's (E-acl-error-xml)
	origin := x.r.Header.Get("Origin")
	method := x.r.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		// 400 (CORS doc); the code and text as Azurite answers (E-cors-preflight-missing).
		x.fail(spec.ErrInvalidHeaderValue.Newf(spec.MsgCORSHeaderMissing))
		return
	}
	headers := splitList(x.r.Header.Get("Access-Control-Request-Headers"))
	p := x.s.properties(x.account)
	r, ok := matchCORS(p.Cors.Rules, origin, method, headers)
	if !ok {
		x.fail(spec.ErrCorsPreflightFailure.New())
		return
	}
	h := x.w.Header()
	if allowsAnyOrigin(r) {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.ToUpper(method))
	if len(headers) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ","))
	}
	h.Set("Access-Control-Max-Age", strconv.Itoa(r.MaxAgeInSeconds))
	h.Set("Content-Length", "0")
	x.send(http.StatusOK, nil)
}

// setCORSHeaders adds the CORS headers to the answer of an actual request whose Origin a
// rule allows for its method.
func (x *exchange) setCORSHeaders() {
	origin := headerValues(x.r.Header).Get("Origin")
	if origin == "" {
		return
	}
	x.s.propsMu.Lock()
	p := x.s.props[x.account]
	var rules []CORSRule
	if p != nil && p.Cors != nil {
		rules = p.Cors.Rules
	}
	x.s.propsMu.Unlock()
	if len(rules) == 0 {
		return
	}
	h := x.w.Header()
	r, ok := matchCORS(rules, origin, x.r.Method, nil)
	// Vary: Origin on GET and HEAD answers that depend on the origin; one a rule for any
	// origin (*) allows does not (E-cors-vary).
	if (x.r.Method == http.MethodGet || x.r.Method == http.MethodHead) && !(ok && allowsAnyOrigin(r)) {
		h.Set("Vary", "Origin")
	}
	if !ok {
		return
	}
	if allowsAnyOrigin(r) {
		h.Set("Access-Control-Allow-Origin", "*")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if r.ExposedHeaders != "" {
		h.Set("Access-Control-Expose-Headers", strings.Join(splitList(r.ExposedHeaders), ","))
	}
}
