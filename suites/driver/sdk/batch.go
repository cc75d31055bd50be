package sdk

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// transactionActions translates ops into the SDK's actions. Conditional operations always
// carry If-Match ("*" when the op has none), because the SDK turns an update without one
// into an upsert (SPEC.md 12 #8).
func transactionActions(ops []api.BatchOp) ([]aztables.TransactionAction, error) {
	actions := make([]aztables.TransactionAction, 0, len(ops))
	for i, op := range ops {
		a, err := transactionAction(op)
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s): %w", i, op.Kind, err)
		}
		actions = append(actions, a)
	}
	return actions, nil
}

func transactionAction(op api.BatchOp) (aztables.TransactionAction, error) {
	ifMatch := func() *azcore.ETag {
		etag := azcore.ETagAny
		if op.IfMatch != "" {
			etag = azcore.ETag(op.IfMatch)
		}
		return &etag
	}
	var a aztables.TransactionAction
	switch op.Kind {
	case api.BatchInsert:
		a.ActionType = aztables.TransactionTypeAdd
	case api.BatchReplace:
		a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateReplace, ifMatch()
	case api.BatchMerge:
		a.ActionType, a.IfMatch = aztables.TransactionTypeUpdateMerge, ifMatch()
	case api.BatchInsertOrReplace:
		a.ActionType = aztables.TransactionTypeInsertReplace
	case api.BatchInsertOrMerge:
		a.ActionType = aztables.TransactionTypeInsertMerge
	case api.BatchDelete:
		// A delete sends no body, so the keys can be quote-escaped here: the SDK puts them
		// into the URL unescaped (SPEC.md 12 #7).
		keys, err := json.Marshal(map[string]string{
			propPartitionKey: quoteKey(op.Entity.PartitionKey),
			propRowKey:       quoteKey(op.Entity.RowKey),
		})
		if err != nil {
			return a, err
		}
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeDelete, Entity: keys, IfMatch: ifMatch()}, nil
	case api.BatchRetrieve:
		return a, fmt.Errorf("a retrieve inside a transaction is %w", ErrUnsupported)
	default:
		return a, fmt.Errorf("unknown batch operation kind %d", op.Kind)
	}
	body, err := encodeEntity(op.Entity)
	if err != nil {
		return a, err
	}
	a.Entity = body
	return a, nil
}

// quoteKey doubles single quotes, as a key inside (PartitionKey='..',RowKey='..') needs
// (SPEC.md 1.2).
func quoteKey(k string) string { return strings.ReplaceAll(k, "'", "''") }

// batchPart is one HTTP response inside a transaction's multipart answer.
type batchPart struct {
	status int
	header http.Header
	body   []byte
}

// parseBatchBody reads the parts of a $batch answer (SPEC.md 4): a multipart/mixed body
// whose first part is the changeset response holding one HTTP response per operation,
// or only the failing one.
func parseBatchBody(contentType string, body []byte) ([]batchPart, error) {
	boundary := ""
	if _, params, err := mime.ParseMediaType(contentType); err == nil {
		boundary = params["boundary"]
	}
	if boundary == "" {
		boundary = firstBoundary(body)
	}
	if boundary == "" {
		return nil, errors.New("batch answer has no multipart boundary")
	}
	var parts []batchPart
	outer := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := outer.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("batch answer: %w", err)
		}
		content, err := io.ReadAll(p)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) { // Cosmos truncates (SPEC.md 4)
			return nil, fmt.Errorf("batch answer part: %w", err)
		}
		mediaType, params, _ := mime.ParseMediaType(p.Header.Get(wire.HeaderContentType))
		if !strings.HasPrefix(mediaType, "multipart/") {
			part, err := parseHTTPPart(content)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
			continue
		}
		inner := params["boundary"]
		if inner == "" {
			inner = firstBoundary(content)
		}
		cs := multipart.NewReader(bytes.NewReader(content), inner)
		for {
			ip, err := cs.NextPart()
			if err == io.EOF || (err != nil && errors.Is(err, io.ErrUnexpectedEOF)) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("changeset answer: %w", err)
			}
			ic, err := io.ReadAll(ip)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("changeset answer part: %w", err)
			}
			part, err := parseHTTPPart(ic)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		}
	}
	return parts, nil
}

func firstBoundary(body []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimLeft(body, "\r\n"), []byte("\n"))
	line = bytes.TrimRight(line, "\r")
	if !bytes.HasPrefix(line, []byte("--")) {
		return ""
	}
	return string(line[2:])
}

func parseHTTPPart(content []byte) (batchPart, error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(content)), nil)
	if err != nil {
		return batchPart{}, fmt.Errorf("batch answer part is not an HTTP response: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return batchPart{}, fmt.Errorf("batch answer part body: %w", err)
	}
	return batchPart{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// batchFailure returns the failure an answer's parts carry, if any: the failing part's
// status, its code and message, and the operation index of its "N:" prefix when present
// (SPEC.md 4, 12 #9).
func batchFailure(parts []batchPart, requestID string) *spec.Error {
	for _, p := range parts {
		if p.status < 400 {
			continue
		}
		code, msg := parseErrorBody(p.body)
		if h := p.header.Get(wire.HeaderErrorCode); h != "" && code == "" {
			code = h
		}
		e := &spec.Error{Status: p.status, Code: code, RequestID: requestID}
		if i, rest, ok := splitIndex(msg); ok {
			e.Message = rest
			return e.AtIndex(i)
		}
		e.Message = msg
		return e
	}
	return nil
}
