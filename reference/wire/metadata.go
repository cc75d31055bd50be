package wire

import (
	"mime"
	"strings"

	"github.com/tableconform/conform/reference/spec"
)

// Metadata is one of the three JSON metadata levels of the Table service (EVIDENCE.md 6; PF).
type Metadata int

// The metadata levels. MinimalMetadata is the zero value: it is what a request without a
// level gets.
const (
	MinimalMetadata Metadata = iota
	NoMetadata
	FullMetadata
)

// String returns the level as it appears in `odata=...`.
func (m Metadata) String() string {
	switch m {
	case NoMetadata:
		return "nometadata"
	case FullMetadata:
		return "fullmetadata"
	}
	return "minimalmetadata"
}

// ParseMetadata returns the level named by s ("nometadata", "minimalmetadata",
// "fullmetadata").
func ParseMetadata(s string) (Metadata, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nometadata":
		return NoMetadata, true
	case "minimalmetadata":
		return MinimalMetadata, true
	case "fullmetadata":
		return FullMetadata, true
	}
	return MinimalMetadata, false
}

// The Accept header values of the three levels.
const (
	minimalAccept = "application/json;odata=minimalmetadata"
	noAccept      = "application/json;odata=nometadata"
	fullAccept    = "application/json;odata=fullmetadata"
)

// Accept returns the Accept header value that asks for level m.
func (m Metadata) Accept() string {
	switch m {
	case NoMetadata:
		return noAccept
	case FullMetadata:
		return fullAccept
	}
	return minimalAccept
}

// ContentType returns the Content-Type of a JSON answer at level m, as Storage writes it
// (EVIDENCE.md 2.1).
func (m Metadata) ContentType() string {
	switch m {
	case NoMetadata:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case FullMetadata:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// Format values that a $format query option or an Accept header may name.
const (
	ContentTypeJSON       = "application/json"
	ContentTypeXML        = "application/xml"
	ContentTypeAtom       = "application/atom+xml"
	ContentTypeMultipart  = "multipart/mixed"
	ContentTypeHTTP       = "application/http"
	ContentTypeXMLCharset = "application/xml;charset=utf-8"
)

// NegotiateMetadata chooses the metadata level of a data answer from the $format query
// option and the Accept header. With DataServiceVersion 3.0, $format overrides Accept (PF).
// $format may be "json" or a full media type. An Accept without a JSON media type (absent,
// `*/*`) gets minimal metadata; one that names only Atom or XML fails with 415
// AtomFormatNotSupported (Atom is gone since 2015-12-11, PF).
func NegotiateMetadata(accept, format string) (Metadata, error) {
	if format != "" {
		if strings.EqualFold(format, "json") {
			return MinimalMetadata, nil
		}
		m, isJSON, ok := metadataOfMediaType(format)
		if !ok || !isJSON {
			if strings.Contains(strings.ToLower(format), "atom") || strings.Contains(strings.ToLower(format), "xml") {
				return MinimalMetadata, spec.ErrAtomFormatUnsupported.New()
			}
			return MinimalMetadata, spec.ErrInvalidQueryParameter.Newf("The value '%s' of the $format query option is not valid.", format)
		}
		return m, nil
	}
	switch accept { // the Accept headers clients send, answered without parsing
	case "", minimalAccept, ContentTypeJSON:
		return MinimalMetadata, nil
	case noAccept:
		return NoMetadata, nil
	case fullAccept:
		return FullMetadata, nil
	}
	if strings.TrimSpace(accept) == "" {
		return MinimalMetadata, nil
	}
	sawXML, sawAny := false, false
	for _, item := range strings.Split(accept, ",") {
		m, isJSON, ok := metadataOfMediaType(item)
		if !ok {
			continue
		}
		if isJSON {
			return m, nil
		}
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(item))
		switch mt {
		case ContentTypeAtom, ContentTypeXML:
			sawXML = true
		default:
			sawAny = true
		}
	}
	if sawXML && !sawAny {
		return MinimalMetadata, spec.ErrAtomFormatUnsupported.New()
	}
	return MinimalMetadata, nil
}

// metadataOfMediaType reads one media type; isJSON reports application/json, ok that it
// parsed.
func metadataOfMediaType(s string) (m Metadata, isJSON, ok bool) {
	mt, params, err := mime.ParseMediaType(strings.TrimSpace(s))
	if err != nil {
		return MinimalMetadata, false, false
	}
	if mt != ContentTypeJSON {
		return MinimalMetadata, false, true
	}
	if v, has := params["odata"]; has {
		level, known := ParseMetadata(v)
		if !known {
			return MinimalMetadata, false, false
		}
		return level, true, true
	}
	return MinimalMetadata, true, true
}

// WantsJSONError reports whether an error answer should be JSON rather than XML: the
// Content-Type of an error follows Accept, and `*/*` got XML from Storage (EVIDENCE.md 5.1).
func WantsJSONError(accept, format string) bool {
	if format != "" {
		return strings.Contains(strings.ToLower(format), "json")
	}
	// Clients write the media type in lower case: found as it is, it needs no lowering.
	return strings.Contains(accept, ContentTypeJSON) || strings.Contains(strings.ToLower(accept), ContentTypeJSON)
}
