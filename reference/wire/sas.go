package wire

import (
	"crypto/subtle"
	"net/url"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
)

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
