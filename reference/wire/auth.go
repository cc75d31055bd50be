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

	"github.com/tableconform/conform/reference/api"
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

// SASTimeFormat is how st and se are written (ISO 8601 in UTC, no fraction), as the SDKs do.
const SASTimeFormat = "2006-01-02T15:04:05Z"

// SASVersion is the sv conform signs with.
const SASVersion = "2019-02-02"

// SAS is a service SAS for one table (EVIDENCE.md 7.2). Start and Expiry are written in
// SASTimeFormat; Raw holds the strings as received when the SAS was parsed, and those are
// what is signed then.
type SAS struct {
	Version     string
	Table       string
	Permissions string // any of "raud", in that order
	Start       time.Time
	Expiry      time.Time
	StartPK     string
	StartRK     string
	EndPK       string
	EndRK       string
	Identifier  string
	IPRange     string
	Protocol    string
	Signature   string

	rawStart, rawExpiry string
	parsed              bool
}

// StringToSign is `sp\nst\nse\n/table/<account>/<lowercase table>\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk`
// (EVIDENCE.md 7.2, CONFIRMED-SDK).
func (s SAS) StringToSign(account string) string {
	st, se := s.rawStart, s.rawExpiry
	if !s.parsed {
		st, se = formatSASTime(s.Start), formatSASTime(s.Expiry)
	}
	return strings.Join([]string{
		s.Permissions, st, se,
		"/table/" + account + "/" + strings.ToLower(s.Table),
		s.Identifier, s.IPRange, s.Protocol, s.Version,
		s.StartPK, s.StartRK, s.EndPK, s.EndRK,
	}, "\n")
}

func formatSASTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(SASTimeFormat)
}

// Encode signs s with the account key and returns its query parameters. Permissions are put
// in the canonical order r, a, u, d; an unknown permission letter is an error.
func (s SAS) Encode(account string, key []byte) (url.Values, error) {
	perms, err := canonicalPermissions(s.Permissions)
	if err != nil {
		return nil, err
	}
	s.Permissions = perms
	if s.Version == "" {
		s.Version = SASVersion
	}
	if s.Expiry.IsZero() && s.Identifier == "" {
		return nil, errorString("sas: an expiry time is required without a stored access policy")
	}
	s.parsed = false
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("sv", s.Version)
	set("tn", strings.ToLower(s.Table))
	set("sp", s.Permissions)
	set("st", formatSASTime(s.Start))
	set("se", formatSASTime(s.Expiry))
	set("spk", s.StartPK)
	set("srk", s.StartRK)
	set("epk", s.EndPK)
	set("erk", s.EndRK)
	set("si", s.Identifier)
	set("sip", s.IPRange)
	set("spr", s.Protocol)
	q.Set("sig", Sign(key, s.StringToSign(account)))
	return q, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

func canonicalPermissions(p string) (string, error) {
	var out []byte
	for _, c := range "raud" {
		if strings.ContainsRune(p, c) {
			out = append(out, byte(c))
		}
	}
	for _, c := range p {
		if !strings.ContainsRune("raud", c) {
			return "", errorString("sas: unknown permission " + string(c))
		}
	}
	return string(out), nil
}

// IsSAS reports whether a query carries a SAS signature.
func IsSAS(q url.Values) bool { return q.Has("sig") }

// ParseSAS reads a service SAS from a request's query parameters. A malformed SAS (no tn, a
// bad time, srk without spk, an unknown permission) fails with 403 AuthenticationFailed, as
// the service refuses a SAS it cannot read.
func ParseSAS(q url.Values) (SAS, error) {
	s := SAS{
		Version: q.Get("sv"), Table: q.Get("tn"), Permissions: q.Get("sp"),
		StartPK: q.Get("spk"), StartRK: q.Get("srk"), EndPK: q.Get("epk"), EndRK: q.Get("erk"),
		Identifier: q.Get("si"), IPRange: q.Get("sip"), Protocol: q.Get("spr"), Signature: q.Get("sig"),
		rawStart: q.Get("st"), rawExpiry: q.Get("se"), parsed: true,
	}
	switch {
	case s.Signature == "":
		return SAS{}, authFailed("The SAS has no signature.")
	case s.Table == "":
		return SAS{}, authFailed("The SAS names no table (tn).")
	case s.Version == "":
		return SAS{}, authFailed("The SAS has no signed version (sv).")
	case s.StartRK != "" && s.StartPK == "", s.EndRK != "" && s.EndPK == "":
		return SAS{}, authFailed("A SAS row key bound needs its partition key bound.")
	}
	if _, err := canonicalPermissions(s.Permissions); err != nil && s.Identifier == "" {
		return SAS{}, authFailed("The SAS permissions are not valid.")
	}
	var err error
	if s.rawStart != "" {
		if s.Start, err = parseSASTime(s.rawStart); err != nil {
			return SAS{}, authFailed("The SAS start time is not valid.")
		}
	}
	if s.rawExpiry != "" {
		if s.Expiry, err = parseSASTime(s.rawExpiry); err != nil {
			return SAS{}, authFailed("The SAS expiry time is not valid.")
		}
	} else if s.Identifier == "" {
		return SAS{}, authFailed("The SAS has no expiry time (se).")
	}
	return s, nil
}

func parseSASTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errorString("bad time")
}

// Verify checks the signature with the account key and the validity window at now.
// Failures are 403 AuthenticationFailed. A SAS naming a stored access policy (si) is
// checked by VerifySignature, then by CheckTimes once the policy's fields are merged in.
func (s SAS) Verify(account string, key []byte, now time.Time) error {
	if err := s.VerifySignature(account, key); err != nil {
		return err
	}
	return s.CheckTimes(now)
}

// VerifySignature checks the signature with the account key (403 AuthenticationFailed).
func (s SAS) VerifySignature(account string, key []byte) error {
	want := Sign(key, s.StringToSign(account))
	if subtle.ConstantTimeCompare([]byte(want), []byte(s.Signature)) != 1 {
		return authFailed("Signature did not match.")
	}
	return nil
}

// CheckTimes checks the validity window at now (403 AuthenticationFailed).
func (s SAS) CheckTimes(now time.Time) error { return checkSASTimes(s.Start, s.Expiry, now) }

// WithPolicy returns s with the stored access policy's start, expiry and permissions
// filling the fields the SAS leaves out. A field set in both fails with 403
// AuthenticationFailed (EVIDENCE.md, E-stored-policy).
func (s SAS) WithPolicy(start, expiry time.Time, permissions string) (SAS, error) {
	if (s.rawStart != "" && !start.IsZero()) || (s.rawExpiry != "" && !expiry.IsZero()) || (s.Permissions != "" && permissions != "") {
		return s, authFailed("A field is given both in the SAS and in its stored access policy.")
	}
	if s.rawStart == "" {
		s.Start = start
	}
	if s.rawExpiry == "" {
		s.Expiry = expiry
	}
	if s.Permissions == "" {
		s.Permissions = permissions
	}
	return s, nil
}

// Permission letters of a table SAS (EVIDENCE.md 7.2).
const (
	PermRead   = 'r'
	PermAdd    = 'a'
	PermUpdate = 'u'
	PermDelete = 'd'
)

// Allows checks that s grants every permission in perms on table for the entity
// (partitionKey, rowKey). Without a permission it fails with 403
// AuthorizationPermissionMismatch; for another table or a key outside
// [spk/srk, epk/erk] (inclusive) with 403 AuthorizationFailure (EVIDENCE.md 7.2).
func (s SAS) Allows(table, perms, partitionKey, rowKey string) error {
	if err := s.AllowsTable(table, perms); err != nil {
		return err
	}
	if !s.InRange(partitionKey, rowKey) {
		return spec.ErrAuthorizationFailure.New()
	}
	return nil
}

// AllowsTable checks the table and the permissions but not the key range (a query, whose
// results are then kept to the range).
func (s SAS) AllowsTable(table, perms string) error {
	if !strings.EqualFold(table, s.Table) {
		return spec.ErrAuthorizationFailure.New()
	}
	for _, p := range perms {
		if !strings.ContainsRune(s.Permissions, p) {
			return spec.ErrAuthPermissionMismatch.New()
		}
	}
	return nil
}

// InRange reports whether the entity key lies in the SAS key range.
func (s SAS) InRange(partitionKey, rowKey string) bool {
	if s.StartPK != "" {
		if c := api.CompareKeyStrings(partitionKey, s.StartPK); c < 0 || (c == 0 && s.StartRK != "" && api.CompareKeyStrings(rowKey, s.StartRK) < 0) {
			return false
		}
	}
	if s.EndPK != "" {
		if c := api.CompareKeyStrings(partitionKey, s.EndPK); c > 0 || (c == 0 && s.EndRK != "" && api.CompareKeyStrings(rowKey, s.EndRK) > 0) {
			return false
		}
	}
	return true
}

// HasKeyRange reports whether s restricts keys.
func (s SAS) HasKeyRange() bool { return s.StartPK != "" || s.EndPK != "" }

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
