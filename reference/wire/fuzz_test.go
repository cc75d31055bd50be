package wire

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
)

// Every fuzz target asserts that bad input is refused with a documented error, never a
// panic or a 5xx-class code.

func requireClientError(t *testing.T, err error) {
	t.Helper()
	var se *spec.Error
	if err != nil && (!errors.As(err, &se) || se.Status < 400 || se.Status >= 500) {
		t.Fatalf("error %v is not a 4xx *spec.Error", err)
	}
}

func FuzzParseBatchRequest(f *testing.F) {
	ct, body := EncodeBatchRequest("batch_1", "changeset_1", BatchRequest{Changesets: [][]RequestPart{{
		{Method: "POST", URL: "http://h/a/t", Header: Fields{{"Content-Type", "application/json"}}, Body: []byte(`{"PartitionKey":"p","RowKey":"r"}`)},
	}}})
	f.Add(ct, body)
	f.Add("multipart/mixed; boundary=b", []byte("--b\nContent-Type: application/http\n\nGET http://h/t(PartitionKey='a',RowKey='b') HTTP/1.1\n\n--b--"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req, err := ParseBatchRequest(contentType, body)
		requireClientError(t, err)
		if err == nil && len(req.Changesets) == 0 && len(req.Retrieves) == 0 {
			t.Fatal("an empty batch was accepted")
		}
	})
}

func FuzzDecodeEntity(f *testing.F) {
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","n@odata.type":"Edm.Int64","n":"5","d":1.5,"b":true}`))
	f.Add([]byte(`{"a@odata.type":"Edm.DateTime","a":"2020-01-01T00:00:00.1234567+01:00"}`))
	f.Add([]byte(`{"a@odata.type":"Edm.Binary","a":"AAE="}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := DecodeRequestEntity(body)
		requireClientError(t, err)
		if err != nil {
			return
		}
		// What decodes must encode and decode to the same entity.
		again, err := EncodeRequestEntity(e)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		e2, err := DecodeRequestEntity(again)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", again, err)
		}
		for n, v := range e.Properties {
			if !e2.Properties[n].Equal(v) && !(v.Null && e2.Properties[n].Null) {
				t.Fatalf("property %s: %v then %v", n, v, e2.Properties[n])
			}
		}
	})
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("SharedKey acct:c2ln", "Sun, 11 Oct 2009 19:52:39 GMT")
	f.Add("SharedKeyLite devstoreaccount1:xyz=", "")
	f.Fuzz(func(t *testing.T, auth, date string) {
		if _, err := ParseAuthorization(auth); err != nil {
			requireClientError(t, err)
		}
		h := http.Header{}
		h.Set("Authorization", auth)
		h.Set("x-ms-date", date)
		keys := func(string) ([]byte, bool) { return []byte("k"), true }
		_, err := VerifySharedKey("GET", h, "/a/Tables", "", keys, time.Now())
		requireClientError(t, err)
	})
}

func FuzzParseSAS(f *testing.F) {
	q, _ := SAS{Table: "t", Permissions: "raud", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), StartPK: "a"}.Encode("acct", []byte("k"))
	f.Add(q.Encode())
	f.Add("sv=2019-02-02&tn=t&sp=r&se=2030-01-01&srk=x&sig=abc")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		s, err := ParseSAS(q)
		requireClientError(t, err)
		if err != nil {
			return
		}
		requireClientError(t, s.Verify("acct", []byte("k"), time.Now()))
		requireClientError(t, s.Allows("t", "r", "p", "r"))
	})
}

func FuzzParseResource(f *testing.F) {
	f.Add(EntityPath("t", "O'Brien", "a b"))
	f.Add("Tables('x')")
	f.Fuzz(func(t *testing.T, seg string) {
		r, err := ParseResource(seg)
		requireClientError(t, err)
		if err == nil && r.Kind == ResourceEntity {
			back, err := ParseResource(EntityPath(r.Table, r.PartitionKey, r.RowKey))
			if err != nil || back != r {
				t.Fatalf("%q -> %+v -> %+v, %v", seg, r, back, err)
			}
		}
	})
}
