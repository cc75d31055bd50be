package wire

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/tableconform/conform/reference/spec"
)

// Header names of the protocol.
const (
	HeaderAuthorization   = "Authorization"
	HeaderDate            = "Date"
	HeaderMSDate          = "x-ms-date"
	HeaderVersion         = "x-ms-version"
	HeaderRequestID       = "x-ms-request-id"
	HeaderClientRequestID = "x-ms-client-request-id"
	HeaderErrorCode       = "x-ms-error-code"
	HeaderContentMD5      = "Content-MD5"
	HeaderContentType     = "Content-Type"
	HeaderDataSvcVersion  = "DataServiceVersion"
	HeaderMaxDataSvcVer   = "MaxDataServiceVersion"
	HeaderPrefer          = "Prefer"
	HeaderPrefApplied     = "Preference-Applied"
	HeaderDataServiceID   = "DataServiceId"
	HeaderXHTTPMethod     = "X-HTTP-Method"
	HeaderIfMatch         = "If-Match"
	HeaderIfNoneMatch     = "If-None-Match"
	HeaderETag            = "ETag"
	HeaderLocation        = "Location"
)

// AuthScheme is one of the two Shared Key schemes of the Table service.
type AuthScheme int

// The Shared Key schemes (EVIDENCE.md 7.1).
const (
	// SharedKey signs VERB, Content-MD5, Content-Type, Date and the canonicalized resource.
	SharedKey AuthScheme = iota
	// SharedKeyLite signs Date and the canonicalized resource; the Go SDK uses it.
	SharedKeyLite
)

func (s AuthScheme) String() string {
	if s == SharedKeyLite {
		return "SharedKeyLite"
	}
	return "SharedKey"
}

// compParam returns the first comp parameter of rawQuery when it parses (url.ParseQuery)
// without error. query, when not nil, is rawQuery so parsed.
func compParam(rawQuery string, query url.Values) (string, bool) {
	if !mayHaveComp(rawQuery) {
		return "", false
	}
	if query == nil {
		var err error
		if query, err = url.ParseQuery(rawQuery); err != nil {
			return "", false
		}
	}
	if comp, ok := query["comp"]; ok && len(comp) > 0 {
		return comp[0], true
	}
	return "", false
}

// mayHaveComp says whether a raw query could hold a comp parameter once unescaped.
func mayHaveComp(rawQuery string) bool {
	return rawQuery != "" && (strings.Contains(rawQuery, "comp") || strings.IndexByte(rawQuery, '%') >= 0)
}

// SharedKeyStringToSign builds the string to sign of scheme for a request (EVIDENCE.md 7.1):
// Shared Key `VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource` (no
// CanonicalizedHeaders for tables), Shared Key Lite `Date\nCanonicalizedResource`. The Date
// slot holds x-ms-date when it is set, else Date.
func SharedKeyStringToSign(scheme AuthScheme, method string, h http.Header, account, escapedPath, rawQuery string) string {
	return string(appendStringToSign(nil, scheme, method, h.Get(KeyContentMD5), h.Get(HeaderContentType), signedDate(h), account, escapedPath, rawQuery))
}

// signedDate is the value of the Date slot: x-ms-date when it is set, else Date.
func signedDate(h http.Header) string {
	if date := h.Get(KeyMSDate); date != "" {
		return date
	}
	return h.Get(HeaderDate)
}

func appendStringToSign(dst []byte, scheme AuthScheme, method, contentMD5, contentType, date, account, escapedPath, rawQuery string) []byte {
	return appendStringToSignQuery(dst, scheme, method, contentMD5, contentType, date, account, escapedPath, rawQuery, nil)
}

// appendStringToSignQuery is appendStringToSign with rawQuery already parsed into query
// (url.ParseQuery, without error), or nil.
func appendStringToSignQuery(dst []byte, scheme AuthScheme, method, contentMD5, contentType, date, account, escapedPath, rawQuery string, query url.Values) []byte {
	if scheme != SharedKeyLite {
		dst = append(dst, method...)
		dst = append(dst, '\n')
		dst = append(dst, contentMD5...)
		dst = append(dst, '\n')
		dst = append(dst, contentType...)
		dst = append(dst, '\n')
	}
	dst = append(dst, date...)
	dst = append(dst, '\n')
	if escapedPath == "" {
		escapedPath = "/"
	}
	dst = append(dst, '/')
	dst = append(dst, account...)
	dst = append(dst, escapedPath...)
	if comp, ok := compParam(rawQuery, query); ok {
		dst = append(dst, "?comp="...)
		dst = append(dst, comp...)
	}
	return dst
}

// Sign returns Base64(HMAC-SHA256(stringToSign, key)).
func Sign(key []byte, stringToSign string) string {
	st := macs.get(key)
	st.text = append(st.text[:0], stringToSign...)
	var sig [signatureLen]byte
	out := string(st.appendSignature(sig[:0]))
	macs.put(key, st)
	return out
}

// signatureLen is the length of a Base64 HMAC-SHA256: 32 bytes in 44 characters.
const signatureLen = (sha256.Size + 2) / 3 * 4

// AppendSharedKeyAuthorization appends the Authorization value of scheme for account
// ("SharedKey account:signature") to dst, signing a request of method whose Content-MD5,
// Content-Type and date (x-ms-date, else Date) have the given values and whose path and
// query are sent exactly as given. It signs what SignRequest signs for the same request.
func AppendSharedKeyAuthorization(dst []byte, scheme AuthScheme, account string, key []byte, method, contentMD5, contentType, date, escapedPath, rawQuery string) []byte {
	st := macs.get(key)
	st.text = appendStringToSign(st.text[:0], scheme, method, contentMD5, contentType, date, account, escapedPath, rawQuery)
	dst = append(dst, scheme.String()...)
	dst = append(dst, ' ')
	dst = append(dst, account...)
	dst = append(dst, ':')
	dst = st.appendSignature(dst)
	macs.put(key, st)
	return dst
}

// SignRequest signs r with scheme for account: it sets x-ms-date to now when the request
// has neither x-ms-date nor Date, then sets Authorization. The path signed is the one the
// request will send (r.URL.EscapedPath()).
func SignRequest(r *http.Request, scheme AuthScheme, account string, key []byte, now time.Time) {
	if r.Header.Get(KeyMSDate) == "" && r.Header.Get(HeaderDate) == "" {
		r.Header.Set(KeyMSDate, HTTPDate(now))
	}
	h := r.Header
	auth := AppendSharedKeyAuthorization(nil, scheme, account, key, r.Method, h.Get(KeyContentMD5), h.Get(HeaderContentType), signedDate(h), r.URL.EscapedPath(), r.URL.RawQuery)
	h.Set(HeaderAuthorization, string(auth))
}

// HTTPDate renders t as an HTTP date (RFC 1123 in GMT, http.TimeFormat), the form of the
// Date and x-ms-date headers. The rendering of the latest second is kept, as every request
// and answer of that second carries it.
func HTTPDate(t time.Time) string {
	sec := t.Unix()
	if c := lastHTTPDate.Load(); c != nil && c.sec == sec {
		return c.text
	}
	c := &secondText{sec: sec, text: t.UTC().Format(http.TimeFormat)}
	lastHTTPDate.Store(c)
	return c.text
}

// parseHTTPDate is http.ParseTime with the latest date read kept: the requests of one
// second all carry the same date.
func parseHTTPDate(v string) (time.Time, error) {
	if c := lastParsedDate.Load(); c != nil && c.text == v {
		return time.Unix(c.sec, 0).UTC(), nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return t, err
	}
	if t.Nanosecond() == 0 {
		lastParsedDate.Store(&secondText{sec: t.Unix(), text: v})
	}
	return t, nil
}

type secondText struct {
	sec  int64
	text string
}

var lastHTTPDate, lastParsedDate atomic.Pointer[secondText]

// Authorization is a parsed Authorization header of a Shared Key scheme.
type Authorization struct {
	Scheme    AuthScheme
	Account   string
	Signature string
}

// ParseAuthorization reads `SharedKey account:signature` or `SharedKeyLite
// account:signature`. Any other form fails with 400 InvalidAuthenticationInfo.
func ParseAuthorization(v string) (Authorization, error) {
	if a, ok := parseSentAuthorization(v); ok {
		return a, nil
	}
	return parseAnyAuthorization(v)
}

// parseSentAuthorization is parseAnyAuthorization of the form clients send, one blank
// after the scheme and no white space to trim: ok false leaves every other form, and every
// error, to parseAnyAuthorization, which reads this form to the same Authorization.
func parseSentAuthorization(v string) (a Authorization, ok bool) {
	const lite, full = "SharedKeyLite ", "SharedKey "
	var cred string
	switch {
	case len(v) > len(lite) && v[:len(lite)] == lite:
		a.Scheme, cred = SharedKeyLite, v[len(lite):]
	case len(v) > len(full) && v[:len(full)] == full:
		a.Scheme, cred = SharedKey, v[len(full):]
	default:
		return Authorization{}, false
	}
	// trimSpace would leave cred, and v, as they are.
	if first, last := cred[0], cred[len(cred)-1]; first <= ' ' || first >= utf8.RuneSelf || last <= ' ' || last >= utf8.RuneSelf {
		return Authorization{}, false
	}
	colon := strings.IndexByte(cred, ':')
	if colon <= 0 || colon == len(cred)-1 {
		return Authorization{}, false
	}
	a.Account, a.Signature = cred[:colon], cred[colon+1:]
	return a, true
}

// parseAnyAuthorization is ParseAuthorization of any form.
func parseAnyAuthorization(v string) (Authorization, error) {
	scheme, cred, ok := strings.Cut(trimSpace(v), " ")
	if !ok {
		return Authorization{}, spec.ErrInvalidAuthInfo.New()
	}
	var a Authorization
	switch scheme {
	case "SharedKey":
		a.Scheme = SharedKey
	case "SharedKeyLite":
		a.Scheme = SharedKeyLite
	default:
		return Authorization{}, spec.ErrInvalidAuthInfo.New()
	}
	acct, sig, ok := strings.Cut(trimSpace(cred), ":")
	if !ok || acct == "" || sig == "" {
		return Authorization{}, spec.ErrInvalidAuthInfo.New()
	}
	a.Account, a.Signature = acct, sig
	return a, nil
}

// KeyLookup returns the key of an account the server knows.
type KeyLookup func(account string) ([]byte, bool)

// VerifySharedKey checks the Shared Key or Shared Key Lite signature of a received request.
// escapedPath is the path exactly as the client sent it. It returns the signing account.
// A malformed header fails with 400 InvalidAuthenticationInfo; an unknown account, a wrong
// signature, a missing date or one further than spec.MaxClockSkew from now with 403
// AuthenticationFailed (EVIDENCE.md 7.1). Signatures are compared in constant time.
func VerifySharedKey(method string, h http.Header, escapedPath, rawQuery string, keys KeyLookup, now time.Time) (string, error) {
	return VerifySharedKeyQuery(method, h, escapedPath, rawQuery, nil, keys, now)
}

// VerifySharedKeyQuery is VerifySharedKey for a server that has parsed rawQuery already:
// query is url.ParseQuery(rawQuery), which must have succeeded, or nil.
func VerifySharedKeyQuery(method string, h http.Header, escapedPath, rawQuery string, query url.Values, keys KeyLookup, now time.Time) (string, error) {
	return VerifySharedKeyAuthorization(FirstValue(h, HeaderAuthorization), method, h, escapedPath, rawQuery, query, keys, now)
}

// VerifySharedKeyAuthorization is VerifySharedKeyQuery for a server that has read the
// request's Authorization value (its first) already: authorization is that value.
func VerifySharedKeyAuthorization(authorization, method string, h http.Header, escapedPath, rawQuery string, query url.Values, keys KeyLookup, now time.Time) (string, error) {
	a, err := ParseAuthorization(authorization)
	if err != nil {
		return "", err
	}
	key, ok := keys(a.Account)
	if !ok {
		return "", authFailed("The account " + a.Account + " is not known.")
	}
	date := FirstValue(h, KeyMSDate)
	if date == "" {
		date = FirstValue(h, HeaderDate)
	}
	if date == "" {
		return "", authFailed("The request has neither x-ms-date nor Date.")
	}
	t, err := parseHTTPDate(date)
	if err != nil {
		return "", authFailed("The date header is not in RFC 1123 form.")
	}
	if !withinClockSkew(now, t) {
		return "", authFailed("Request date header too old.")
	}
	var room [256]byte // the string to sign of most requests, without an allocation
	var contentMD5, contentType string
	if a.Scheme != SharedKeyLite { // Shared Key Lite signs neither
		contentMD5, contentType = FirstValue(h, KeyContentMD5), FirstValue(h, HeaderContentType)
	}
	text := appendStringToSignQuery(room[:0], a.Scheme, method, contentMD5, contentType, date, a.Account, escapedPath, rawQuery, query)
	want := verified.signature(key, text)
	// Compared in constant time; a signature of another length never matches.
	var got [signatureLen]byte
	copy(got[:], a.Signature)
	sameLength := subtle.ConstantTimeEq(int32(min(len(a.Signature), 1<<20)), signatureLen)
	if sameLength&equalSignatures(want, &got) != 1 {
		return "", authFailed("The MAC signature found in the HTTP request '" + a.Signature + "' is not the same as any computed signature.")
	}
	return a.Account, nil
}

// withinClockSkew reports whether now.Sub(t) is within spec.MaxClockSkew either way,
// without Sub's handling of monotonic clock readings and of overflow: t has none, and a
// distance of more than a day is refused before it could overflow.
func withinClockSkew(now, t time.Time) bool {
	const day = 24 * 60 * 60
	seconds := now.Unix() - t.Unix()
	if seconds > day || seconds < -day {
		return false
	}
	d := time.Duration(seconds)*time.Second + time.Duration(now.Nanosecond()-t.Nanosecond())
	return d <= spec.MaxClockSkew && d >= -spec.MaxClockSkew
}

func authFailed(detail string) error {
	e := spec.ErrAuthenticationFailed.New()
	e.Message += "\n" + detail
	return e
}

// equalSignatures returns 1 when a and b are equal and 0 otherwise, in a time that does
// not depend on where they differ (subtle.ConstantTimeCompare, eight bytes at a time; the
// last word read overlaps the one before it).
func equalSignatures(a, b *[signatureLen]byte) int {
	var diff uint64
	for i := 0; i+8 <= signatureLen; i += 8 {
		diff |= binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
	}
	diff |= binary.LittleEndian.Uint64(a[signatureLen-8:]) ^ binary.LittleEndian.Uint64(b[signatureLen-8:])
	return subtle.ConstantTimeEq(int32(diff>>32|diff&0xffffffff), 0)
}
