package tableserver

import (
	"maps"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// rawPath is the request path exactly as the client sent it, which is what Shared Key
// signs (EVIDENCE.md 7.1).
func rawPath(r *http.Request) string {
	uri := r.RequestURI
	if strings.HasPrefix(uri, "/") {
		p, _, _ := strings.Cut(uri, "?")
		return p
	}
	return r.URL.EscapedPath()
}

// resolve finds the account (from the Host's first label or the first path segment) and
// the resource the rest of the path names.
func (x *exchange) resolve(escapedPath string) (wire.Resource, error) {
	p := strings.TrimPrefix(escapedPath, "/")
	host, ip := x.s.hostOf(x.r.Host)
	if host == "" {
		return wire.Resource{}, spec.ErrHostInfoNotPresent.New()
	}
	if !ip {
		label, _, _ := strings.Cut(host, ".")
		if name, a, ok := x.knownAccount(strings.ToLower(label)); ok && label != "localhost" {
			x.account, x.accountOf = name, a
		}
	}
	if x.account == "" {
		first, rest, _ := strings.Cut(p, "/")
		name, a, ok := x.knownAccount(first)
		if !ok {
			return wire.Resource{}, spec.ErrInvalidURI.Newf("The requested URI does not name a known account.")
		}
		x.account, x.accountOf, x.pathStyle, p = name, a, true, rest
	}
	x.backend = x.accountOf.backend
	return wire.ParseResource(p)
}

// hostOf returns the host of a Host header value, without its port, and whether it is an
// IP address (isIP). The answer for the latest value is kept, as a client sends the same
// Host on every request.
func (s *Server) hostOf(hostPort string) (host string, ip bool) {
	if h := s.lastHost.Load(); h != nil && h.hostPort == hostPort {
		return h.host, h.ip
	}
	keep := len(hostPort) <= maxCachedHost
	if keep {
		hostPort = strings.Clone(hostPort) // nothing kept refers to a request
	}
	host = hostPort
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip = isIP(host)
	if keep {
		s.lastHost.Store(&hostForm{hostPort: hostPort, host: host, ip: ip})
	}
	return host, ip
}

// hostForm is hostOf's answer for one Host value.
type hostForm struct {
	hostPort, host string
	ip             bool
}

// isIP says whether host is an IP address as net.ParseIP reads one (no zone), without
// allocating.
func isIP(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == ""
}

// serviceURL is the table endpoint as this client addresses it, ending in "/". The URLs
// of the endpoints clients use are kept (serviceURLs), as every answer names one.
func (x *exchange) serviceURL() string {
	if x.baseURL == "" {
		x.baseURL = x.s.keptServiceURL(x)
	}
	return x.baseURL
}

// keptServiceURL returns x's service URL, kept or built.
func (s *Server) keptServiceURL(x *exchange) string {
	k := serviceURLKey{host: x.r.Host, tls: x.r.TLS != nil, pathStyle: x.pathStyle}
	if x.pathStyle {
		k.account, k.secondary = x.account, x.secondary
	}
	if last := s.lastServiceURL.Load(); last != nil && last.key == k {
		return last.url
	}
	urls := s.serviceURLs.Load()
	if urls != nil {
		if u, ok := (*urls)[k]; ok {
			kept := keptURL{key: k, url: u}
			// Nothing kept refers to a request.
			kept.key.host, kept.key.account = strings.Clone(k.host), strings.Clone(k.account)
			s.lastServiceURL.Store(&kept)
			return u
		}
	}
	u := k.url()
	if len(k.host) > maxCachedHost {
		return u // a host no DNS name or address is as long as: not worth keeping
	}
	next := map[serviceURLKey]string{}
	if urls != nil {
		if len(*urls) >= maxServiceURLs {
			return u
		}
		next = maps.Clone(*urls)
	}
	next[k] = u
	s.serviceURLs.CompareAndSwap(urls, &next) // a lost race only loses this entry
	return u
}

// keptURL is one of the kept service URLs with its key.
type keptURL struct {
	key serviceURLKey
	url string
}

// serviceURLKey is what a service URL is made of.
type serviceURLKey struct {
	host, account             string
	tls, pathStyle, secondary bool
}

// maxServiceURLs bounds the service URLs a Server keeps, so that clients naming many hosts
// cannot grow them; past it URLs are built for each answer.
const maxServiceURLs = 64

// maxCachedHost is the longest Host a kept service URL is made of: a DNS name (253 bytes)
// with a port, or a bracketed IPv6 address with a zone and a port.
const maxCachedHost = 300

func (k serviceURLKey) url() string {
	scheme := "http"
	if k.tls {
		scheme = "https"
	}
	u := scheme + "://" + k.host + "/"
	if k.pathStyle {
		u += k.account
		if k.secondary {
			u += secondarySuffix
		}
		u += "/"
	}
	return u
}

// entityLocation is the URL of an entity as this client addresses it (Location,
// DataServiceId), built in one allocation.
func (x *exchange) entityLocation(table, partitionKey, rowKey string) string {
	var room [256]byte
	path := wire.AppendEntityPath(room[:0], table, partitionKey, rowKey)
	base := x.serviceURL()
	var b strings.Builder
	b.Grow(len(base) + len(path))
	b.WriteString(base)
	b.Write(path)
	return b.String()
}

func (x *exchange) document(table string, sel []string) wire.Document {
	return wire.Document{Level: x.level, ServiceURL: x.serviceURL(), Account: x.account, Table: table, Select: sel}
}

// effectiveMethod applies X-HTTP-Method tunnelling (EVIDENCE.md 5.2): only on POST, once, and
// only to MERGE, PATCH, PUT or DELETE. MERGE and PATCH both mean Merge.
func (x *exchange) effectiveMethod() (string, error) {
	m := x.r.Method
	if vs := x.r.Header[wire.KeyXHTTPMethod]; len(vs) > 0 {
		if len(vs) > 1 || strings.Contains(vs[0], ",") {
			return "", spec.ErrXMethodIncorrectCount.New()
		}
		if m != http.MethodPost {
			return "", spec.ErrXMethodNotUsingPost.New()
		}
		switch v := strings.ToUpper(strings.TrimSpace(vs[0])); v {
		case "MERGE", "PATCH", http.MethodPut, http.MethodDelete:
			m = v
		default:
			return "", spec.ErrXMethodIncorrectValue.New()
		}
	}
	if m == http.MethodPatch {
		m = "MERGE"
	}
	return m, nil
}
