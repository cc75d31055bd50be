package wire

import (
	"net/http"
	"testing"
)

func TestHeaderKeysAreCanonical(t *testing.T) {
	for name, key := range map[string]string{
		HeaderMSDate:          KeyMSDate,
		HeaderVersion:         KeyVersion,
		HeaderRequestID:       KeyRequestID,
		HeaderClientRequestID: KeyClientRequestID,
		HeaderErrorCode:       KeyErrorCode,
		HeaderContentMD5:      KeyContentMD5,
		HeaderDataSvcVersion:  KeyDataSvcVersion,
		HeaderMaxDataSvcVer:   KeyMaxDataSvcVer,
		HeaderPrefApplied:     KeyPrefApplied,
		HeaderDataServiceID:   KeyDataServiceID,
		HeaderXHTTPMethod:     KeyXHTTPMethod,
		HeaderIfMatch:         KeyIfMatch,
		HeaderIfNoneMatch:     KeyIfNoneMatch,
		HeaderETag:            KeyETag,
	} {
		if want := http.CanonicalHeaderKey(name); key != want {
			t.Errorf("the key of %s is %q; net/http's canonical form is %q", name, key, want)
		}
	}
	// The Header names given to FirstValue as they are.
	for _, name := range []string{HeaderAccept, HeaderAuthorization, HeaderContentType, HeaderDate, HeaderPrefer} {
		if want := http.CanonicalHeaderKey(name); name != want {
			t.Errorf("%s is given to FirstValue, but net/http's canonical form is %q", name, want)
		}
	}
}
