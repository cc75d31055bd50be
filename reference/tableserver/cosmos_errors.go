package tableserver

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

var (
	operationIndex     = regexp.MustCompile(`"value":"(\d+):`)
	storageMessageTail = regexp.MustCompile(`(?s)\nRequestId:.*$`)
	xmlErrorCode       = regexp.MustCompile(`<code>([^<]*)</code>`)
	xmlErrorMessage    = regexp.MustCompile(`(?s)<message[^>]*>(.*?)</message>`)
)

// storageError reads the Storage-flavoured error answer back into a *spec.Error.
func storageError(code string, status int, body []byte) *spec.Error {
	e := &spec.Error{Status: status, Code: code}
	var doc struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if json.Unmarshal(body, &doc) == nil && doc.Err.Code != "" {
		e.Code, e.Message = doc.Err.Code, doc.Err.Message.Value
	} else if m := xmlErrorCode.FindSubmatch(body); m != nil {
		e.Code = string(m[1])
		if mm := xmlErrorMessage.FindSubmatch(body); mm != nil {
			e.Message = html.UnescapeString(string(mm[1])) // "&#xA;" before RequestId
		}
	}
	e.Message = storageMessageTail.ReplaceAllString(e.Message, "")
	if e.Code == "" {
		e.Code = http.StatusText(status)
	}
	return e
}

// cosmosErrorBody renders Cosmos's error body: lang en-us and a message ending in
// "RequestID:<id>" and a newline, after an ActivityId line for the codes whose recorded
// answers have one (E-cosmos-shapes).
func cosmosErrorBody(e *spec.Error, id string) []byte {
	var v struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Lang  string `json:"lang"`
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	v.Err.Code = e.Code
	v.Err.Message.Lang = spec.CosmosErrorLang
	msg := e.Message
	if m, ok := spec.CosmosMessages[e.Code]; ok {
		msg = m
	}
	switch {
	case e.Code == spec.ErrTooManyRequests.Code:
		now := time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")
		msg += fmt.Sprintf(spec.CosmosThrottledLines, id, newRequestID(), newRequestID(), newRequestID(), 1, now, now)
	case spec.CosmosActivityCodes[e.Code]:
		msg += "\r\nActivityId: " + id + spec.CosmosActivitySuffix
	}
	v.Err.Message.Value = msg + "\nRequestID:" + id + "\n"
	b, _ := json.Marshal(v)
	return b
}

// writeCosmosErrorTo answers e; a write's error carries full metadata, a read's, a
// conflict's and a throttled request's minimal metadata (E-cosmos-shapes).
func writeCosmosErrorTo(w http.ResponseWriter, id string, e *spec.Error, fullMetadata bool) {
	h := w.Header()
	for _, k := range cosmosDroppedHeaders {
		h.Del(k)
	}
	h.Del("Content-Length")
	h.Set(wire.KeyRequestID, id)
	if fullMetadata {
		h.Set("Content-Type", "application/json; odata=fullmetadata")
	} else {
		h.Set("Content-Type", "application/json; odata=minimalmetadata")
	}
	body := cosmosErrorBody(e, id)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
