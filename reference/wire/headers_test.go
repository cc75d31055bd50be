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
}
