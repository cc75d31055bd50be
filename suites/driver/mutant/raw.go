package mutant

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// Protocol-level mutants change the hand-made requests and the answers of the raw HTTP
// capability (suites/driver.RawHTTP), which the protocol, authorization and payload specs
// use; the typed calls of the wrapped driver do not go through them. They need a base
// that speaks HTTP.

// rawMutant defines a mutant over reference-http whose fault rewrites raw requests before
// they are signed and sent (req) and their answers (resp); either may be nil.
func rawMutant(m Mutant, req func(r *http.Request) *http.Response, resp func(r *http.Request, a *http.Response)) Mutant {
	m.Base = "reference-http"
	if m.LabelFilter == "" {
		m.LabelFilter = "area:protocol"
	}
	return define(m, identity, hooks{raw: func(do func(*http.Request) (*http.Response, error), r *http.Request) (*http.Response, error) {
		if req != nil {
			if fake := req(r); fake != nil {
				return fake, nil
			}
		}
		a, err := do(r)
		if err == nil && resp != nil {
			resp(r, a)
		}
		return a, err
	}})
}

// rewriteBody replaces the body of a request or answer by fn of it.
func rewriteBody(body *io.ReadCloser, length *int64, h http.Header, fn func([]byte) []byte) {
	if *body == nil {
		return
	}
	data, err := io.ReadAll(*body)
	_ = (*body).Close()
	if err != nil {
		data = nil
	}
	data = fn(data)
	*body = io.NopCloser(bytes.NewReader(data))
	*length = int64(len(data))
	if h != nil {
		h.Set("Content-Length", strconv.Itoa(len(data)))
	}
}

func rewriteRequestBody(r *http.Request, fn func([]byte) []byte) {
	data, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		data = nil
	}
	data = fn(data)
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

// fakeAnswer is an answer the mutant makes up without asking the backend.
func fakeAnswer(r *http.Request, c spec.ErrorCode) *http.Response {
	body := []byte(`{"odata.error":{"code":"` + c.Code + `","message":{"lang":"en-US","value":"` + c.Message + `"}}}`)
	h := http.Header{}
	h.Set(wire.HeaderContentType, "application/json;odata=minimalmetadata")
	h.Set(wire.HeaderErrorCode, c.Code)
	h.Set(wire.HeaderRequestID, "00000000-0000-0000-0000-000000000000")
	return &http.Response{Status: strconv.Itoa(c.Status) + " " + http.StatusText(c.Status), StatusCode: c.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: r}
}

// jsonObject re-encodes a JSON object body through a map when fn changes it: duplicate
// members collapse to the last one, numbers keep their text. A body fn leaves as it was, and
// anything else, comes back as it was sent.
func jsonObject(body []byte, fn func(map[string]json.RawMessage)) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return body
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(trimmed, &m) != nil {
		return body
	}
	before, _ := json.Marshal(m)
	fn(m)
	out, err := json.Marshal(m)
	if err != nil || bytes.Equal(out, before) {
		// Unchanged: the body as sent, with what a map would lose (a member named twice).
		return body
	}
	return out
}

// collapseMembers re-encodes a JSON object through a map, as a server that reads bodies
// into one does: a member named twice keeps its last value. A body that is no object is
// returned as it is.
func collapseMembers(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(body), &m) != nil {
		return body
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

var (
	wholeDouble  = regexp.MustCompile(`(:\s*-?[0-9]+)\.0([,}\s])`)
	validETag    = regexp.MustCompile(`^(W/)?"[^"]*"$`)
	isEntityPath = regexp.MustCompile(`\(.*\)$`)
)

// dropAnnotations removes the type annotations of an entity, or of each entity of a query
// answer's "value".
func dropAnnotations(m map[string]json.RawMessage) {
	for k := range m {
		if strings.HasSuffix(k, "@odata.type") {
			delete(m, k)
		}
	}
	var values []json.RawMessage
	if json.Unmarshal(m["value"], &values) != nil {
		return
	}
	for i, v := range values {
		values[i] = jsonObject(v, dropAnnotations)
	}
	if out, err := json.Marshal(values); err == nil {
		m["value"] = out
	}
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE":
		return true
	}
	return false
}

// Protocol (EVIDENCE.md 5).
var (
	_ = rawMutant(Mutant{
		Name:        "request-ids-dropped",
		Description: "sends neither x-ms-request-id nor the client's x-ms-client-request-id back",
		Breaks:      []string{"protocol.request-id", "protocol.client-request-id"},
	}, nil, func(_ *http.Request, a *http.Response) {
		a.Header.Del(wire.HeaderRequestID)
		a.Header.Del(wire.HeaderClientRequestID)
	})

	_ = rawMutant(Mutant{
		Name:        "strong-etags",
		Description: "hands out strong ETags in the ETag header (\"...\" without W/), leaving odata.etag as it is",
		Breaks:      []string{"protocol.get.etag"},
	}, nil, func(_ *http.Request, a *http.Response) {
		if e := a.Header.Get(wire.HeaderETag); strings.HasPrefix(e, "W/") {
			a.Header.Set(wire.HeaderETag, strings.TrimPrefix(e, "W/"))
		}
	})

	_ = rawMutant(Mutant{
		Name:        "writes-answer-200",
		Description: "answers updates, merges and deletes with 200 OK instead of 204 No Content",
		Breaks:      []string{"protocol.update.no-content", "protocol.delete.no-content"},
	}, nil, func(r *http.Request, a *http.Response) {
		if a.StatusCode == http.StatusNoContent && r.Method != http.MethodPost {
			a.StatusCode, a.Status = http.StatusOK, "200 OK"
		}
	})

	_ = rawMutant(Mutant{
		Name:        "prefer-ignored",
		Description: "ignores the Prefer header: an insert always answers 201 with the entity and no Preference-Applied",
		Breaks:      []string{"protocol.insert.prefer-no-content", "protocol.insert.prefer-content"},
	}, func(r *http.Request) *http.Response {
		r.Header.Del(wire.HeaderPrefer)
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "location-dropped",
		Description: "answers an insert without the Location header that names the new entity",
		Breaks:      []string{"protocol.insert.location"},
	}, nil, func(_ *http.Request, a *http.Response) { a.Header.Del(wire.HeaderLocation) })

	_ = rawMutant(Mutant{
		Name:        "etag-header-dropped",
		Description: "answers writes and reads of single entities without the ETag header (odata.etag stays in the body)",
		Breaks:      []string{"protocol.etag.weak", "protocol.insert.default-201"},
	}, nil, func(_ *http.Request, a *http.Response) { a.Header.Del(wire.HeaderETag) })

	_ = rawMutant(Mutant{
		Name:        "insert-without-prefer-answers-204",
		Description: "answers an insert that sends no Prefer header with 204 No Content and no body, as if return-no-content had been asked for",
		Breaks:      []string{"protocol.insert.default-201"},
	}, nil, func(r *http.Request, a *http.Response) {
		if r.Method == http.MethodPost && r.Header.Get("Prefer") == "" && a.StatusCode == http.StatusCreated {
			a.StatusCode, a.Status = http.StatusNoContent, "204 No Content"
			rewriteBody(&a.Body, &a.ContentLength, a.Header, func([]byte) []byte { return nil })
		}
	})

	_ = rawMutant(Mutant{
		Name:        "metadata-level-ignored",
		Description: "answers every request in minimal metadata, whatever Accept or $format asks for",
		Breaks:      []string{"protocol.accept.nometadata", "protocol.accept.fullmetadata", "protocol.format.overrides-accept"},
	}, func(r *http.Request) *http.Response {
		r.Header.Set(wire.HeaderAccept, "application/json;odata=minimalmetadata")
		q := r.URL.Query()
		if q.Has("$format") {
			q.Del("$format")
			r.URL.RawQuery = q.Encode()
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "type-annotations-stripped",
		Description: "leaves the @odata.type annotations out of the entities it answers",
		Breaks:      []string{"protocol.accept.minimalmetadata", "protocol.accept.fullmetadata"},
	}, nil, func(_ *http.Request, a *http.Response) {
		rewriteBody(&a.Body, &a.ContentLength, a.Header, func(b []byte) []byte { return jsonObject(b, dropAnnotations) })
	})

	_ = rawMutant(Mutant{
		Name:        "query-etags-dropped",
		Description: "leaves odata.etag out of the entities of a minimal-metadata query answer",
		Breaks:      []string{"protocol.accept.minimal-etag"},
	}, nil, func(_ *http.Request, a *http.Response) {
		rewriteBody(&a.Body, &a.ContentLength, a.Header, func(b []byte) []byte {
			return jsonObject(b, func(m map[string]json.RawMessage) {
				var values []map[string]json.RawMessage
				if json.Unmarshal(m["value"], &values) != nil {
					return
				}
				for _, v := range values {
					delete(v, "odata.etag")
				}
				if out, err := json.Marshal(values); err == nil {
					m["value"] = out
				}
			})
		})
	})

	_ = rawMutant(Mutant{
		Name:        "whole-double-without-point",
		Description: "writes a whole Edm.Double as 5 instead of 5.0, so that readers take it for an Int32",
		Breaks:      []string{"protocol.double.whole"},
	}, nil, func(_ *http.Request, a *http.Response) {
		rewriteBody(&a.Body, &a.ContentLength, a.Header, func(b []byte) []byte { return wholeDouble.ReplaceAll(b, []byte("$1$2")) })
	})

	_ = rawMutant(Mutant{
		Name:        "error-body-dropped",
		Description: "answers failures with the status and x-ms-error-code but an empty body",
		Breaks:      []string{"protocol.error.body"},
	}, nil, func(_ *http.Request, a *http.Response) {
		if a.StatusCode >= 400 {
			rewriteBody(&a.Body, &a.ContentLength, a.Header, func([]byte) []byte { return nil })
		}
	})

	_ = rawMutant(Mutant{
		Name:        "merge-verbs-replace",
		Description: "performs MERGE, PATCH and POST with X-HTTP-Method: MERGE as a replace (PUT)",
		Breaks:      []string{"protocol.merge.verbs", "protocol.merge.tunnel"},
	}, func(r *http.Request) *http.Response {
		if r.Method == "MERGE" || r.Method == http.MethodPatch || strings.EqualFold(r.Header.Get("X-HTTP-Method"), "MERGE") {
			r.Method = http.MethodPut
			r.Header.Del("X-HTTP-Method")
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "x-http-method-ignored",
		Description: "ignores an X-HTTP-Method header that is not a known verb on a POST",
		Breaks:      []string{"protocol.x-method.not-post", "protocol.x-method.bad-value"},
	}, func(r *http.Request) *http.Response {
		switch v := strings.ToUpper(r.Header.Get("X-HTTP-Method")); {
		case v == "":
		case r.Method != http.MethodPost || (v != "MERGE" && v != "PUT" && v != "DELETE" && v != "PATCH"):
			r.Header.Del("X-HTTP-Method")
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "if-none-match-ignored",
		Description: "ignores If-None-Match on entity writes instead of refusing it",
		Breaks:      []string{"protocol.if-none-match.refused", "protocol.if-match.both"},
	}, func(r *http.Request) *http.Response {
		if isEntityPath.MatchString(r.URL.Path) {
			r.Header.Del("If-None-Match")
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "malformed-etag-matches-any",
		Description: "treats an If-Match value that is not an ETag as *",
		Breaks:      []string{"protocol.etag.malformed", "protocol.etag.malformed-no-write"},
	}, func(r *http.Request) *http.Response {
		if v := r.Header.Get(wire.HeaderIfMatch); v != "" && v != "*" && !validETag.MatchString(v) {
			r.Header.Set(wire.HeaderIfMatch, "*")
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "signature-not-checked",
		Description: "does not verify Shared Key signatures: any Authorization header is accepted",
		Breaks:      []string{"auth.shared-key.bad-signature"},
		LabelFilter: "area:auth",
	}, func(r *http.Request) *http.Response {
		// Dropping the client's header makes the driver sign the request correctly,
		// which is what a backend that accepts any signature amounts to.
		r.Header.Del("Authorization")
		r.Header.Del(wire.HeaderMSDate)
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "shared-key-refused",
		Description: "refuses every request signed with Shared Key with 403 AuthenticationFailed (it supports SAS only)",
		Breaks:      []string{"auth.shared-key.valid"},
		LabelFilter: "area:auth",
	}, func(r *http.Request) *http.Response {
		if r.URL.Query().Has("sig") {
			return nil
		}
		return fakeAnswer(r, spec.ErrAuthenticationFailed)
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "duplicate-properties-collapsed",
		Description: "reads entity bodies into a map, so a property named twice keeps its last value instead of being refused",
		Breaks:      []string{"entities.property.duplicate"},
		LabelFilter: "area:entities",
	}, func(r *http.Request) *http.Response {
		if isWrite(r.Method) && r.Body != nil {
			rewriteRequestBody(r, collapseMembers)
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "missing-keys-defaulted",
		Description: "stores an entity body without PartitionKey or RowKey under empty keys instead of refusing it",
		Breaks:      []string{"entities.key.required"},
		LabelFilter: "area:entities",
	}, func(r *http.Request) *http.Response {
		if r.Method == http.MethodPost && r.Body != nil && !isEntityPath.MatchString(r.URL.Path) {
			rewriteRequestBody(r, func(b []byte) []byte {
				return jsonObject(b, func(m map[string]json.RawMessage) {
					for _, k := range []string{"PartitionKey", "RowKey"} {
						if _, ok := m[k]; !ok {
							m[k] = json.RawMessage(`""`)
						}
					}
				})
			})
		}
		return nil
	}, nil)
)
