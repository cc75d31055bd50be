package wire

import (
	"crypto/subtle"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// AccountSASEncryptionScopeVersion is the first sv whose string to sign holds the signed
// encryption scope (ses) (EVIDENCE.md, E-account-sas).
const AccountSASEncryptionScopeVersion = "2020-12-06"

// Account SAS resource types (srt) (EVIDENCE.md, E-account-sas).
const (
	SASResourceService   = 's'
	SASResourceContainer = 'c'
	SASResourceObject    = 'o'
)

// AccountSAS is an account SAS (EVIDENCE.md, E-account-sas): it grants the operations of
// the services in ss on the resource types in srt with the permissions in sp.
type AccountSAS struct {
	Version         string
	Services        string // any of "bfqt"; t is the Table service
	ResourceTypes   string // any of "sco"
	Permissions     string // any of "rwdlacup" (others are ignored by tables)
	Start           time.Time
	Expiry          time.Time
	IPRange         string
	Protocol        string
	EncryptionScope string
	Signature       string

	rawStart, rawExpiry string
	parsed              bool
}

// IsAccountSAS reports whether a query carries an account SAS: a signature with a signed
// service or resource type.
func IsAccountSAS(q url.Values) bool { return q.Has("sig") && (q.Has("ss") || q.Has("srt")) }

// StringToSign is `account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n`, with `ses\n` added from
// version 2020-12-06 (EVIDENCE.md, E-account-sas).
func (s AccountSAS) StringToSign(account string) string {
	st, se := s.rawStart, s.rawExpiry
	if !s.parsed {
		st, se = formatSASTime(s.Start), formatSASTime(s.Expiry)
	}
	parts := []string{account, s.Permissions, s.Services, s.ResourceTypes, st, se, s.IPRange, s.Protocol, s.Version}
	if s.Version >= AccountSASEncryptionScopeVersion {
		parts = append(parts, s.EncryptionScope)
	}
	return strings.Join(parts, "\n") + "\n"
}

// Encode signs s with the account key and returns its query parameters.
func (s AccountSAS) Encode(account string, key []byte) (url.Values, error) {
	if s.Version == "" {
		s.Version = SASVersion
	}
	if s.Expiry.IsZero() {
		return nil, errorString("sas: an account SAS needs an expiry time")
	}
	if s.Services == "" || s.ResourceTypes == "" || s.Permissions == "" {
		return nil, errorString("sas: an account SAS needs services, resource types and permissions")
	}
	s.parsed = false
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("sv", s.Version)
	set("ss", s.Services)
	set("srt", s.ResourceTypes)
	set("sp", s.Permissions)
	set("st", formatSASTime(s.Start))
	set("se", formatSASTime(s.Expiry))
	set("sip", s.IPRange)
	set("spr", s.Protocol)
	set("ses", s.EncryptionScope)
	q.Set("sig", Sign(key, s.StringToSign(account)))
	return q, nil
}

// ParseAccountSAS reads an account SAS from a request's query. A SAS it cannot read (no
// sv, ss, srt, sp or se, a bad time) fails with 403 AuthenticationFailed.
func ParseAccountSAS(q url.Values) (AccountSAS, error) {
	s := AccountSAS{
		Version: q.Get("sv"), Services: q.Get("ss"), ResourceTypes: q.Get("srt"), Permissions: q.Get("sp"),
		IPRange: q.Get("sip"), Protocol: q.Get("spr"), EncryptionScope: q.Get("ses"), Signature: q.Get("sig"),
		rawStart: q.Get("st"), rawExpiry: q.Get("se"), parsed: true,
	}
	switch {
	case s.Version == "":
		return AccountSAS{}, authFailed("The account SAS has no signed version (sv).")
	case s.Services == "", strings.Trim(s.Services, "bfqt") != "":
		return AccountSAS{}, authFailed("The account SAS signed services (ss) are not valid.")
	case s.ResourceTypes == "", strings.Trim(s.ResourceTypes, "sco") != "":
		return AccountSAS{}, authFailed("The account SAS signed resource types (srt) are not valid.")
	case s.Permissions == "":
		return AccountSAS{}, authFailed("The account SAS has no signed permissions (sp).")
	case s.rawExpiry == "":
		return AccountSAS{}, authFailed("The account SAS has no expiry time (se).")
	}
	var err error
	if s.rawStart != "" {
		if s.Start, err = parseSASTime(s.rawStart); err != nil {
			return AccountSAS{}, authFailed("The account SAS start time is not valid.")
		}
	}
	if s.Expiry, err = parseSASTime(s.rawExpiry); err != nil {
		return AccountSAS{}, authFailed("The account SAS expiry time is not valid.")
	}
	return s, nil
}

// Verify checks the signature and the validity window at now (403 AuthenticationFailed).
func (s AccountSAS) Verify(account string, key []byte, now time.Time) error {
	want := Sign(key, s.StringToSign(account))
	if subtle.ConstantTimeCompare([]byte(want), []byte(s.Signature)) != 1 {
		return authFailed("Signature did not match.")
	}
	return checkSASTimes(s.Start, s.Expiry, now)
}

// AllowsService checks that the SAS covers the Table service (403
// AuthorizationServiceMismatch).
func (s AccountSAS) AllowsService() error {
	if !strings.ContainsRune(s.Services, 't') {
		return spec.ErrAuthServiceMismatch.New()
	}
	return nil
}

// Allows checks the resource type rt and the permissions of an operation: every letter of
// one of the alternatives in perms must be granted. A missing resource type fails with 403
// AuthorizationResourceTypeMismatch, missing permissions with 403
// AuthorizationPermissionMismatch.
func (s AccountSAS) Allows(rt byte, perms ...string) error {
	if strings.IndexByte(s.ResourceTypes, rt) < 0 {
		return spec.ErrAuthResourceTypeMismatch.New()
	}
	for _, alt := range perms {
		ok := true
		for _, p := range alt {
			ok = ok && strings.ContainsRune(s.Permissions, p)
		}
		if ok {
			return nil
		}
	}
	return spec.ErrAuthPermissionMismatch.New()
}

// checkSASTimes refuses a SAS before its start (less the allowed clock skew) or after its
// expiry with 403 AuthenticationFailed; a SAS without an expiry is refused too.
func checkSASTimes(start, expiry time.Time, now time.Time) error {
	if !start.IsZero() && now.Before(start.Add(-spec.MaxClockSkew)) {
		return authFailed("Signed start time is in the future.")
	}
	if expiry.IsZero() {
		return authFailed("The SAS has no expiry time, neither signed nor in its stored access policy.")
	}
	if now.After(expiry) {
		return authFailed("Signed expiry time has passed.")
	}
	return nil
}

// CheckSASRestrictions enforces the signed IP range (sip: one IPv4 address or two joined by
// "-") and the signed protocol (spr: "https" or "https,http") of a SAS for a request from
// remote over TLS or not: 403 AuthorizationSourceIPMismatch or AuthorizationProtocolMismatch
// (EVIDENCE.md, E-sas-ip-protocol).
func CheckSASRestrictions(ipRange, protocol string, remote netip.Addr, tls bool) error {
	switch protocol {
	case "", "https,http", "http,https":
	case "https":
		if !tls {
			return spec.ErrAuthProtocolMismatch.New()
		}
	default:
		return authFailed("The signed protocol (spr) is not valid.")
	}
	if ipRange == "" {
		return nil
	}
	lo, hi, isRange := strings.Cut(ipRange, "-")
	first, err1 := netip.ParseAddr(strings.TrimSpace(lo))
	last := first
	var err2 error
	if isRange {
		last, err2 = netip.ParseAddr(strings.TrimSpace(hi))
	}
	if err1 != nil || err2 != nil {
		return authFailed("The signed IP range (sip) is not valid.")
	}
	remote = remote.Unmap()
	if !remote.IsValid() || remote.Compare(first.Unmap()) < 0 || remote.Compare(last.Unmap()) > 0 {
		return spec.ErrAuthSourceIPMismatch.New()
	}
	return nil
}
