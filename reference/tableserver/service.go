package tableserver

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// The account-wide resources of the Table service: service properties (logging, metrics,
// CORS) and service statistics (EVIDENCE.md, Service surface). They, and the table ACL,
// are XML resources: the JSON content negotiation of the data operations does not apply.

// secondarySuffix ends the name of an account's read-only secondary location, where the
// service statistics are answered (EVIDENCE.md, E-service-stats).
const secondarySuffix = "-secondary"

// knownAccount maps a name from the path or the Host to a known account, accepting
// "<account>-secondary" for the account's secondary location.
func (x *exchange) knownAccount(name string) (string, *account, bool) {
	if a, ok := x.s.accounts[name]; ok {
		return name, a, true
	}
	if base, ok := strings.CutSuffix(name, secondarySuffix); ok {
		if a, ok := x.s.accounts[base]; ok {
			x.secondary = true
			return base, a, true
		}
	}
	return "", nil, false
}

// refuseSecondaryWrite answers a write (any method but GET and HEAD) addressed to the
// secondary location, which is read-only: 403 AuthorizationFailure, changing nothing
// (E-secondary-read-only). It reports whether it answered.
func (x *exchange) refuseSecondaryWrite(method string) bool {
	if !x.secondary || method == http.MethodGet || method == http.MethodHead {
		return false
	}
	if x.query.Has("comp") || x.query.Get("restype") == "service" {
		x.jsonErr, x.prefixedXMLErr = false, true // an XML resource's error (E-acl-error-xml)
	}
	x.fail(spec.ErrAuthorizationFailure.Newf(spec.MsgSecondaryReadOnly))
	return true
}

// routeXML answers the XML resources: `table?comp=acl` and `?restype=service&comp=...`.
// It reports whether it answered.
func (x *exchange) routeXML(method string, res wire.Resource) bool {
	var err error
	switch {
	case res.Kind == wire.ResourceEntitySet && x.query.Has("comp"):
		err = x.tableACL(method, res.Table)
	case res.Kind == wire.ResourceService && x.query.Get("restype") == "service":
		x.jsonErr, x.prefixedXMLErr = false, true // as the ACL's (E-acl-error-xml)
		switch x.query.Get("comp") {
		case "properties":
			err = x.serviceProperties(method)
		case "stats":
			err = x.serviceStats(method)
		default:
			err = spec.ErrInvalidQueryParameter.Newf("The comp query parameter must be properties or stats.")
		}
	default:
		return false
	}
	if err != nil {
		x.fail(err)
	}
	return true
}

// permitService checks what a SAS allows on the service resource: a service SAS nothing,
// an account SAS resource type s with permission r to read and w to write.
func (x *exchange) permitService(write bool) error {
	switch {
	case x.acctSAS != nil:
		if write {
			return x.acctSAS.Allows(wire.SASResourceService, "w")
		}
		return x.acctSAS.Allows(wire.SASResourceService, "r")
	case x.sas != nil:
		return spec.ErrAuthorizationFailure.New()
	}
	return nil
}

// ServiceProperties are an account's Table service properties (Set Table Service
// Properties). A nil section was never set and is answered with its default.
type ServiceProperties struct {
	XMLName       xml.Name   `xml:"StorageServiceProperties"`
	Logging       *Logging   `xml:"Logging"`
	HourMetrics   *Metrics   `xml:"HourMetrics"`
	MinuteMetrics *Metrics   `xml:"MinuteMetrics"`
	Cors          *CORSRules `xml:"Cors"`
}

// Logging is the Logging section.
type Logging struct {
	Version         string          `xml:"Version"`
	Delete          bool            `xml:"Delete"`
	Read            bool            `xml:"Read"`
	Write           bool            `xml:"Write"`
	RetentionPolicy RetentionPolicy `xml:"RetentionPolicy"`
}

// Metrics is the HourMetrics or MinuteMetrics section.
type Metrics struct {
	Version         string          `xml:"Version"`
	Enabled         bool            `xml:"Enabled"`
	IncludeAPIs     *bool           `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy RetentionPolicy `xml:"RetentionPolicy"`
}

// RetentionPolicy says how long logs or metrics are kept.
type RetentionPolicy struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

// CORSRules is the Cors section.
type CORSRules struct {
	Rules []CORSRule `xml:"CorsRule"`
}

// CORSRule is one CORS rule; lists are comma-separated as sent.
type CORSRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedMethods  string `xml:"AllowedMethods"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
}

func defaultServiceProperties() ServiceProperties {
	return ServiceProperties{
		Logging:       &Logging{Version: "1.0"},
		HourMetrics:   &Metrics{Version: "1.0"},
		MinuteMetrics: &Metrics{Version: "1.0"},
		Cors:          &CORSRules{},
	}
}

// properties returns a copy of the account's properties, every section filled.
func (s *Server) properties(account string) ServiceProperties {
	out := defaultServiceProperties()
	s.propsMu.Lock()
	defer s.propsMu.Unlock()
	if p := s.props[account]; p != nil {
		if p.Logging != nil {
			l := *p.Logging
			out.Logging = &l
		}
		if p.HourMetrics != nil {
			m := *p.HourMetrics
			out.HourMetrics = &m
		}
		if p.MinuteMetrics != nil {
			m := *p.MinuteMetrics
			out.MinuteMetrics = &m
		}
		if p.Cors != nil {
			out.Cors = &CORSRules{Rules: append([]CORSRule(nil), p.Cors.Rules...)}
		}
	}
	return out
}

// serviceProperties answers GET and PUT `?restype=service&comp=properties`. A PUT replaces
// the sections it sends and keeps the others (EVIDENCE.md, E-service-properties).
func (x *exchange) serviceProperties(method string) error {
	switch method {
	case http.MethodGet, http.MethodHead:
		if err := x.permitService(false); err != nil {
			return err
		}
		p := x.s.properties(x.account)
		body, err := xml.Marshal(p)
		if err != nil {
			return err
		}
		x.w.Header().Set(wire.HeaderContentType, wire.ContentTypeXML)
		x.write(http.StatusOK, append([]byte(`<?xml version="1.0" encoding="utf-8"?>`), body...))
		return nil
	case http.MethodPut:
		if err := x.permitService(true); err != nil {
			return err
		}
		body, err := x.readBody()
		if err != nil {
			return err
		}
		p, err := decodeServiceProperties(body)
		if err != nil {
			return err
		}
		if err := x.s.setProperties(x.account, p); err != nil {
			return err
		}
		x.write(http.StatusAccepted, nil)
		return nil
	}
	return spec.ErrMethodNotAllowed.New()
}

// corsMethods are the methods a CORS rule may allow.
var corsMethods = map[string]bool{"DELETE": true, "GET": true, "HEAD": true, "MERGE": true, "POST": true, "OPTIONS": true, "PUT": true, "PATCH": true}

// decodeServiceProperties reads a Set Table Service Properties body. Malformed XML, more
// than spec.MaxCORSRules CORS rules, a retention outside 1..spec.MaxRetentionDays days, an
// unknown CORS method or a negative max age are 400 InvalidXmlDocument (EVIDENCE.md,
// E-service-properties-limits).
func decodeServiceProperties(body []byte) (ServiceProperties, error) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	var p ServiceProperties
	if err := xml.Unmarshal(body, &p); err != nil {
		return p, spec.ErrInvalidXMLDocument.New()
	}
	checkRetention := func(what string, r RetentionPolicy) error {
		if !r.Enabled {
			return nil
		}
		if r.Days == nil || *r.Days < 1 || *r.Days > spec.MaxRetentionDays {
			return spec.ErrInvalidXMLDocument.Newf("The retention of %s must be 1 to %d days.", what, spec.MaxRetentionDays)
		}
		return nil
	}
	if p.Logging != nil {
		if err := checkRetention("Logging", p.Logging.RetentionPolicy); err != nil {
			return p, err
		}
	}
	for name, m := range map[string]*Metrics{"HourMetrics": p.HourMetrics, "MinuteMetrics": p.MinuteMetrics} {
		if m == nil {
			continue
		}
		if err := checkRetention(name, m.RetentionPolicy); err != nil {
			return p, err
		}
	}
	if p.Cors != nil {
		if len(p.Cors.Rules) > spec.MaxCORSRules {
			return p, spec.ErrInvalidXMLDocument.Newf("At most %d CORS rules are allowed.", spec.MaxCORSRules)
		}
		for _, r := range p.Cors.Rules {
			if strings.TrimSpace(r.AllowedOrigins) == "" || strings.TrimSpace(r.AllowedMethods) == "" || r.MaxAgeInSeconds < 0 {
				return p, spec.ErrInvalidXMLDocument.Newf("A CORS rule needs allowed origins, allowed methods and a max age of 0 or more.")
			}
			for _, m := range splitList(r.AllowedMethods) {
				if !corsMethods[strings.ToUpper(m)] {
					return p, spec.ErrInvalidXMLDocument.Newf("The CORS method %q is not allowed.", m)
				}
			}
			if len(splitList(r.AllowedHeaders)) > spec.MaxCORSHeaderPatterns || len(splitList(r.ExposedHeaders)) > spec.MaxCORSHeaderPatterns {
				return p, spec.ErrInvalidXMLDocument.Newf("A CORS rule may list at most %d headers.", spec.MaxCORSHeaderPatterns)
			}
		}
	}
	return p, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// serviceStats answers GET `?restype=service&comp=stats` on the secondary location: geo
// replication is live, last synchronised now. On the primary it is 400
// InvalidQueryParameterValue, as the statistics exist on the secondary only (EVIDENCE.md,
// E-service-stats).
func (x *exchange) serviceStats(method string) error {
	if method != http.MethodGet && method != http.MethodHead {
		return spec.ErrMethodNotAllowed.New()
	}
	if err := x.permitService(false); err != nil {
		return err
	}
	if !x.secondary {
		return spec.ErrInvalidQueryParameter.Newf("Service statistics are answered on the secondary location (<account>-secondary).")
	}
	body := `<?xml version="1.0" encoding="utf-8"?><StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>` +
		x.now.UTC().Format(http.TimeFormat) + `</LastSyncTime></GeoReplication></StorageServiceStats>`
	x.w.Header().Set(wire.HeaderContentType, wire.ContentTypeXML)
	x.write(http.StatusOK, []byte(body))
	return nil
}
