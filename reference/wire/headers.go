package wire

import "net/http"

// HeaderAccept is the request header that chooses the answer's format (EVIDENCE.md 6).
const HeaderAccept = "Accept"

// Canonical forms (http.CanonicalHeaderKey) of the protocol's header names, for direct
// access to an http.Header map: net/http converts any other form on every Get and Set.
// TestHeaderKeysAreCanonical checks each against its Header name.
const (
	KeyMSDate          = "X-Ms-Date"
	KeyVersion         = "X-Ms-Version"
	KeyRequestID       = "X-Ms-Request-Id"
	KeyClientRequestID = "X-Ms-Client-Request-Id"
	KeyErrorCode       = "X-Ms-Error-Code"
	KeyContentMD5      = "Content-Md5"
	KeyDataSvcVersion  = "Dataserviceversion"
	KeyMaxDataSvcVer   = "Maxdataserviceversion"
	KeyPrefApplied     = "Preference-Applied"
	KeyDataServiceID   = "Dataserviceid"
	KeyXHTTPMethod     = "X-Http-Method"
	KeyIfMatch         = "If-Match"
	KeyIfNoneMatch     = "If-None-Match"
	KeyETag            = "Etag"
)

// FirstValue returns the first value of key in h, as h.Get(key) does, without converting
// key to its canonical form on every call: key must already be canonical (the Key*
// constants, and those Header* names that are, such as HeaderAccept, HeaderAuthorization,
// HeaderContentType, HeaderDate and HeaderPrefer).
func FirstValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
