package replay

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Sanitized is the text that stands in for a credential in a written recording, as in the
// SDKs' own recordings.
const Sanitized = "Sanitized"

var (
	sigParam     = regexp.MustCompile(`(?i)([?&;]sig=)[^&;\s"'<]+`)
	accountKeyRe = regexp.MustCompile(`(?i)(AccountKey=)[^;\s"'<]+`)
	// macSignature is the request's signature that a 403 AuthenticationFailed quotes back
	// (its AuthenticationErrorDetail).
	macSignature = regexp.MustCompile(`(signature found in the HTTP request ')[^']*`)
)

// Sanitize returns x with every credential replaced: the Authorization header, SAS
// signatures in the URI, in headers and in bodies (batch part URLs), any account key
// written in a connection string, and the signature an authentication failure quotes.
func Sanitize(x Exchange) Exchange {
	x.URI = sanitizeText(x.URI)
	x.RequestHeader = sanitizeHeader(x.RequestHeader)
	x.ResponseHeader = sanitizeHeader(x.ResponseHeader)
	x.RequestBody = []byte(sanitizeText(string(x.RequestBody)))
	if len(x.RequestBody) == 0 {
		x.RequestBody = nil
	}
	x.ResponseBody = []byte(sanitizeText(string(x.ResponseBody)))
	if len(x.ResponseBody) == 0 {
		x.ResponseBody = nil
	}
	return x
}

func sanitizeHeader(h http.Header) http.Header {
	out := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			switch strings.ToLower(k) {
			case "authorization", "x-ms-encryption-key", "proxy-authorization", "cookie", "set-cookie":
				v = Sanitized
			default:
				v = sanitizeText(v)
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

func sanitizeText(s string) string {
	s = sigParam.ReplaceAllString(s, "${1}"+Sanitized)
	s = accountKeyRe.ReplaceAllString(s, "${1}"+Sanitized)
	s = macSignature.ReplaceAllString(s, "${1}"+Sanitized)
	if strings.Contains(s, "%26sig%3D") || strings.Contains(strings.ToLower(s), "sig%3d") {
		if u, err := url.QueryUnescape(s); err == nil && sigParam.MatchString(u) {
			return url.QueryEscape(sigParam.ReplaceAllString(u, "${1}"+Sanitized))
		}
	}
	return s
}
