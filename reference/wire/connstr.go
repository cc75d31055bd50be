package wire

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// The development storage account (Azurite and the legacy emulator) and its well-known key,
// as published in the emulator documentation
// (https://learn.microsoft.com/en-us/azure/storage/common/storage-use-azurite#http-connection-strings).
const (
	DevAccountName   = "devstoreaccount1"
	DevAccountKey    = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	DevTableEndpoint = "http://127.0.0.1:10002/" + DevAccountName
)

// ConnectionString is a parsed storage connection string. It holds secrets: its String and
// GoString forms are the redacted form, so printing it never shows a key or signature.
type ConnectionString struct {
	// Protocol is DefaultEndpointsProtocol ("https" unless given).
	Protocol string
	// AccountName is the account; empty when only a SAS and an endpoint are given.
	AccountName string
	// AccountKey is the decoded account key; nil when the string carries a SAS instead.
	AccountKey []byte
	// EndpointSuffix is the DNS suffix ("core.windows.net" unless given).
	EndpointSuffix string
	// TableEndpoint is the table endpoint, given or derived, without a trailing slash.
	TableEndpoint string
	// SAS is the SharedAccessSignature query string, without a leading "?".
	SAS string
	// Development is set by UseDevelopmentStorage=true.
	Development bool
}

// ParseConnectionString reads `Key=Value;...` pairs: DefaultEndpointsProtocol, AccountName,
// AccountKey, EndpointSuffix, TableEndpoint, SharedAccessSignature and
// UseDevelopmentStorage=true (the development account at DevTableEndpoint). Key names are
// case-insensitive; values keep their case. Errors never quote a secret.
func ParseConnectionString(s string) (ConnectionString, error) {
	fields := map[string]string{}
	for _, part := range strings.Split(strings.TrimSpace(s), ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return ConnectionString{}, fmt.Errorf("connection string: segment %d has no '='", len(fields)+1)
		}
		key := strings.ToLower(strings.TrimSpace(k))
		if _, dup := fields[key]; dup {
			return ConnectionString{}, fmt.Errorf("connection string: %s given twice", strings.TrimSpace(k))
		}
		fields[key] = strings.TrimSpace(v)
	}
	c := ConnectionString{Protocol: "https", EndpointSuffix: "core.windows.net"}
	if strings.EqualFold(fields["usedevelopmentstorage"], "true") {
		c.Development = true
		c.Protocol = "http"
		c.AccountName = DevAccountName
		c.AccountKey, _ = base64.StdEncoding.DecodeString(DevAccountKey)
		c.TableEndpoint = DevTableEndpoint
	}
	if v, ok := fields["defaultendpointsprotocol"]; ok {
		if v != "http" && v != "https" {
			return ConnectionString{}, fmt.Errorf("connection string: DefaultEndpointsProtocol %q is not http or https", v)
		}
		c.Protocol = v
	}
	if v, ok := fields["accountname"]; ok {
		c.AccountName = v
	}
	if v, ok := fields["endpointsuffix"]; ok {
		c.EndpointSuffix = v
	}
	if v, ok := fields["accountkey"]; ok {
		key, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(key) == 0 {
			return ConnectionString{}, fmt.Errorf("connection string: AccountKey is not base64")
		}
		c.AccountKey = key
	}
	if v, ok := fields["sharedaccesssignature"]; ok {
		c.SAS = strings.TrimPrefix(v, "?")
		if _, err := url.ParseQuery(c.SAS); err != nil {
			return ConnectionString{}, fmt.Errorf("connection string: SharedAccessSignature is not a query string")
		}
	}
	if v, ok := fields["tableendpoint"]; ok {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ConnectionString{}, fmt.Errorf("connection string: TableEndpoint %q is not an http(s) URL", redactURL(v))
		}
		u.RawQuery, u.Fragment = "", ""
		c.TableEndpoint = strings.TrimSuffix(u.String(), "/")
	}
	if c.TableEndpoint == "" {
		if c.AccountName == "" {
			return ConnectionString{}, fmt.Errorf("connection string: neither AccountName nor TableEndpoint is given")
		}
		c.TableEndpoint = fmt.Sprintf("%s://%s.table.%s", c.Protocol, c.AccountName, c.EndpointSuffix)
	}
	if c.AccountKey == nil && c.SAS == "" {
		return ConnectionString{}, fmt.Errorf("connection string: neither AccountKey nor SharedAccessSignature is given")
	}
	if c.AccountKey != nil && c.AccountName == "" {
		return ConnectionString{}, fmt.Errorf("connection string: AccountKey without AccountName")
	}
	return c, nil
}

// Redacted renders c with the key and the SAS signature replaced by "REDACTED".
func (c ConnectionString) Redacted() string {
	var parts []string
	if c.Development {
		parts = append(parts, "UseDevelopmentStorage=true")
	}
	parts = append(parts, "DefaultEndpointsProtocol="+c.Protocol)
	if c.AccountName != "" {
		parts = append(parts, "AccountName="+c.AccountName)
	}
	if c.AccountKey != nil {
		parts = append(parts, "AccountKey=REDACTED")
	}
	if c.SAS != "" {
		parts = append(parts, "SharedAccessSignature="+RedactSAS(c.SAS))
	}
	parts = append(parts, "TableEndpoint="+c.TableEndpoint)
	return strings.Join(parts, ";")
}

// String returns the redacted form.
func (c ConnectionString) String() string { return c.Redacted() }

// GoString returns the redacted form, so that %#v never shows a secret either.
func (c ConnectionString) GoString() string { return "wire.ConnectionString{" + c.Redacted() + "}" }

// RedactSAS returns the SAS query string with its signature replaced by "REDACTED".
func RedactSAS(sas string) string {
	q, err := url.ParseQuery(strings.TrimPrefix(sas, "?"))
	if err != nil {
		return "REDACTED"
	}
	if q.Has("sig") {
		q.Set("sig", "REDACTED")
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(q.Get(k)))
	}
	return b.String()
}

// redactURL drops the query (which may hold a SAS) and user info from a URL string.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
