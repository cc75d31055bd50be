package sdk

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// transactionActions translates ops into the SDK's actions. Conditional operations always
// carry If-Match ("*" when the op has none), because the SDK turns an update without one
// into an upsert (EVIDENCE.md 12 #8).
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
		// into the URL unescaped (EVIDENCE.md 12 #7).
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
// (EVIDENCE.md 1.2).
func quoteKey(k string) string { return strings.ReplaceAll(k, "'", "''") }

// parseBatchBody reads the parts of a $batch answer (EVIDENCE.md 4) with wire's reader: the
// answers of the changeset (every operation's, or only the failing one), then any answer
// outside it. The SDK's captured answer may lack its Content-Type, so boundaries are read
// from the body when no header names them.
func parseBatchBody(contentType string, body []byte) ([]wire.ResponsePart, error) {
	resp, err := wire.ParseBatchResponse(contentType, body, wire.BoundaryFromBody())
	if err != nil {
		return nil, err
	}
	return append(resp.Changeset, resp.Retrieves...), nil
}

// batchFailure returns the failure an answer's parts carry, if any: the failing part's
// status, its code and message, and the operation index of its "N:" prefix when present
// (EVIDENCE.md 4, 12 #9).
func batchFailure(parts []wire.ResponsePart, requestID string) *spec.Error {
	for _, p := range parts {
		if p.Status < 400 {
			continue
		}
		code, msg := parseErrorBody(p.Body)
		if h := p.Header.Get(wire.HeaderErrorCode); h != "" && code == "" {
			code = h
		}
		e := &spec.Error{Status: p.Status, Code: code, RequestID: requestID}
		if i, rest, ok := splitIndex(msg); ok {
			e.Message = rest
			return e.AtIndex(i)
		}
		e.Message = msg
		return e
	}
	return nil
}
