package rest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
)

// BuildBatch renders ops against table as a batch body for this backend's endpoint: one
// changeset of absolute-URL requests with Content-ID 1..n, or a lone retrieve outside any
// changeset (EVIDENCE.md 4). Replace, Merge and Delete without IfMatch send If-Match: *.
func (b *Backend) BuildBatch(table string, ops []api.BatchOp) (contentType string, body []byte, err error) {
	var req wire.BatchRequest
	var cs []wire.RequestPart
	for i, op := range ops {
		p, err := b.batchPart(table, op, i+1)
		if err != nil {
			return "", nil, fmt.Errorf("rest: batch operation %d: %w", i, err)
		}
		if op.Kind == api.BatchRetrieve {
			req.Retrieves = append(req.Retrieves, p)
		} else {
			cs = append(cs, p)
		}
	}
	if len(cs) > 0 {
		req.Changesets = [][]wire.RequestPart{cs}
	}
	ct, body := wire.EncodeBatchRequest("batch_"+wire.NewID(), "changeset_"+wire.NewID(), req)
	return ct, body, nil
}

func (b *Backend) batchPart(table string, op api.BatchOp, contentID int) (wire.RequestPart, error) {
	base := b.serviceURL()
	e := op.Entity
	entityURL := base + wire.EntityPath(table, e.PartitionKey, e.RowKey)
	p := wire.RequestPart{Header: wire.Fields{
		{Name: "Content-ID", Value: strconv.Itoa(contentID)},
		{Name: wire.HeaderDataSvcVersion, Value: "3.0"},
		{Name: wire.HeaderAccept, Value: b.level.Accept()},
	}}
	ifMatch := op.IfMatch
	if ifMatch == "" {
		ifMatch = api.IfMatchAny
	}
	withBody := func() error {
		body, err := wire.EncodeRequestEntity(e)
		if err != nil {
			return err
		}
		p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderContentType, Value: wire.ContentTypeJSON})
		p.Body = body
		return nil
	}
	switch op.Kind {
	case api.BatchInsert:
		p.Method, p.URL = http.MethodPost, base+table
		p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderPrefer, Value: "return-no-content"})
		return p, withBody()
	case api.BatchReplace, api.BatchInsertOrReplace:
		p.Method, p.URL = http.MethodPut, entityURL
		if op.Kind == api.BatchReplace {
			p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderIfMatch, Value: ifMatch})
		}
		return p, withBody()
	case api.BatchMerge, api.BatchInsertOrMerge:
		p.Method, p.URL = b.merge, entityURL
		if b.merge == http.MethodPost {
			p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderXHTTPMethod, Value: "MERGE"})
		}
		if op.Kind == api.BatchMerge {
			p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderIfMatch, Value: ifMatch})
		}
		return p, withBody()
	case api.BatchDelete:
		p.Method, p.URL = http.MethodDelete, entityURL
		p.Header = append(p.Header, wire.HeaderField{Name: wire.HeaderIfMatch, Value: ifMatch})
		return p, nil
	case api.BatchRetrieve:
		p.Method, p.URL = http.MethodGet, entityURL
		return p, nil
	}
	return p, fmt.Errorf("unknown operation kind %d", op.Kind)
}

// SubmitBatch sends the transaction to $batch. A failed operation comes back as a
// *spec.Error with the failing part's own status and code, and FailedIndex when its message
// carries the "N:" prefix (EVIDENCE.md 4, 12 #9).
func (b *Backend) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
	ct, body, err := b.BuildBatch(table, ops)
	if err != nil {
		return nil, err
	}
	a, err := b.exchange(ctx, http.MethodPost, "$batch", body, map[string]string{wire.HeaderContentType: ct})
	if err != nil {
		return nil, err
	}
	if err := unexpected("batch", a, http.StatusAccepted); err != nil {
		return nil, err
	}
	resp, err := wire.ParseBatchResponse(a.get(wire.HeaderContentType), a.body)
	if err != nil {
		return nil, protocolError("batch", a, err)
	}
	parts := resp.Changeset
	if !resp.HasChangeset {
		parts = resp.Retrieves
	}
	for _, p := range parts {
		if p.Status >= 400 {
			h := http.Header{}
			for _, f := range p.Header {
				h.Add(f.Name, f.Value)
			}
			if h.Get(wire.HeaderRequestID) == "" {
				h.Set(wire.HeaderRequestID, a.get(wire.HeaderRequestID))
			}
			return nil, decodeError(p.Status, h, p.Body)
		}
	}
	if len(parts) != len(ops) {
		return nil, driver.NewMalformedAnswer("batch", a.status, a.body, fmt.Errorf("%d answers for %d operations", len(parts), len(ops)))
	}
	out := make([]api.BatchResult, len(ops))
	for i, p := range parts {
		out[i] = api.BatchResult{Status: p.Status, ETag: p.Header.Get(wire.HeaderETag)}
		if ops[i].Kind == api.BatchRetrieve {
			e, err := wire.DecodeEntity(p.Body)
			if err != nil {
				return nil, protocolError("batch retrieve", a, err)
			}
			if e.ETag == "" {
				e.ETag = out[i].ETag
			}
			out[i].Entity = &e
		}
	}
	return out, nil
}
