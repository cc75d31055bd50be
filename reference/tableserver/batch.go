package tableserver

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

// batchOp is one decoded operation of a batch with what its answer part needs.
type batchOp struct {
	op     api.BatchOp
	table  string
	prefer string
	level  wire.Metadata
}

// batch answers POST /$batch (EVIDENCE.md 4). Framing faults are answered as plain errors;
// once the operations are read, every failure is a 202 whose changeset holds only the
// failing operation's part.
func (x *exchange) batch() error {
	body, err := x.readBody()
	if err != nil {
		return err
	}
	req, err := wire.ParseBatchRequest(x.r.Header.Get(wire.HeaderContentType), body)
	if err != nil {
		return err
	}
	var parts []wire.RequestPart
	retrieve := false
	switch {
	case len(req.Changesets) == 1 && len(req.Retrieves) == 0:
		parts = req.Changesets[0]
	case len(req.Changesets) == 0 && len(req.Retrieves) == 1:
		parts, retrieve = req.Retrieves, true
	case len(req.Changesets) > 1:
		// EGT: additional changesets are rejected with 400; conform refuses the request.
		return spec.ErrInvalidInput.Newf("A batch request may hold only one change set.")
	default:
		return spec.ErrInvalidInput.Newf(spec.MsgBatchMixedRetrieve)
	}
	if len(parts) == 0 {
		// A change set without operations: Storage answered 202 with an empty change set
		// (EVIDENCE.md 13, E-batch-empty-changeset); nothing to apply.
		x.writeBatch(wire.BatchResponse{HasChangeset: true})
		return nil
	}
	ops := make([]batchOp, 0, len(parts))
	for i, p := range parts {
		bo, err := x.batchOperation(p, retrieve)
		if err == nil && len(ops) > 0 && !x.s.sameTable(bo.table, ops[0].table) {
			err = spec.ErrInvalidInput.Newf("All operations of a batch must act on the same table.")
		}
		if err == nil {
			err = x.permitBatchOp(bo)
		}
		if err != nil {
			var se *spec.Error
			if errors.As(err, &se) && se.Status == http.StatusForbidden {
				return err
			}
			return x.batchFailure(err, i, bo, retrieve, true)
		}
		ops = append(ops, bo)
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	apiOps := make([]api.BatchOp, len(ops))
	for i, o := range ops {
		apiOps[i] = o.op
	}
	results, err := x.backend.SubmitBatch(ctx, ops[0].table, apiOps)
	if err != nil {
		var se *spec.Error
		if !errors.As(err, &se) {
			return err
		}
		idx := 0
		if se.Indexed && se.FailedIndex >= 0 && se.FailedIndex < len(ops) {
			idx = se.FailedIndex
		}
		return x.batchFailure(se, idx, ops[idx], retrieve, false)
	}
	if len(results) != len(ops) {
		return spec.ErrInternalError.Newf("The backend answered %d results for %d operations.", len(results), len(ops))
	}
	var resp wire.BatchResponse
	for i, o := range ops {
		part, err := x.batchSuccessPart(o, results[i])
		if err != nil {
			return err
		}
		if retrieve {
			resp.Retrieves = append(resp.Retrieves, part)
		} else {
			resp.Changeset = append(resp.Changeset, part)
		}
	}
	resp.HasChangeset = !retrieve
	x.writeBatch(resp)
	return nil
}

func (x *exchange) writeBatch(resp wire.BatchResponse) {
	id := wire.NewID()
	batchB, csB := "batchresponse_"+id, "changesetresponse_"+wire.NewID()
	x.w.Header().Set(wire.HeaderContentType, wire.BatchResponseContentType(batchB))
	x.write(http.StatusAccepted, wire.EncodeBatchResponse(batchB, csB, resp))
}

// batchFailure answers 202 with the one failing part. The message carries "i:" when the
// error names its operation: always for faults found while reading the operations (index
// set), and as the backend decided for its own failures (EVIDENCE.md 4, 11.4).
func (x *exchange) batchFailure(err error, i int, o batchOp, retrieve, index bool) error {
	var se *spec.Error
	if !errors.As(err, &se) {
		return err
	}
	if index && !se.Indexed {
		se = se.AtIndex(i)
	}
	fields := wire.Fields{{Name: "X-Content-Type-Options", Value: "nosniff"}}
	if se.Code != spec.ErrTableNotFound.Code {
		fields = append(fields, wire.HeaderField{Name: "Cache-Control", Value: "no-cache"})
		if o.prefer != "" {
			fields = append(fields, wire.HeaderField{Name: wire.HeaderPrefApplied, Value: o.prefer})
		}
	}
	fields = append(fields,
		wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "3.0;"},
		wire.HeaderField{Name: wire.HeaderContentType, Value: o.level.ContentType()},
	)
	part := wire.ResponsePart{Status: se.Status, Header: fields, Body: wire.EncodeErrorJSON(se, x.id, x.now)}
	var resp wire.BatchResponse
	if retrieve {
		resp.Retrieves = []wire.ResponsePart{part}
	} else {
		resp.Changeset, resp.HasChangeset = []wire.ResponsePart{part}, true
	}
	x.writeBatch(resp)
	return nil
}

func (x *exchange) batchSuccessPart(o batchOp, r api.BatchResult) (wire.ResponsePart, error) {
	f := wire.Fields{
		{Name: "X-Content-Type-Options", Value: "nosniff"},
		{Name: "Cache-Control", Value: "no-cache"},
	}
	base := x.serviceURL()
	e := o.op.Entity
	switch o.op.Kind {
	case api.BatchInsert:
		loc := base + wire.EntityPath(o.table, e.PartitionKey, e.RowKey)
		if o.prefer == "return-no-content" {
			f = append(f,
				wire.HeaderField{Name: wire.HeaderPrefApplied, Value: "return-no-content"},
				wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "3.0;"},
				wire.HeaderField{Name: wire.HeaderLocation, Value: loc},
				wire.HeaderField{Name: wire.HeaderDataServiceID, Value: loc},
				wire.HeaderField{Name: wire.HeaderETag, Value: r.ETag},
			)
			return wire.ResponsePart{Status: http.StatusNoContent, Header: f}, nil
		}
		// The backend returns no entity for an insert: the answer is the entity sent, with
		// the ETag and the Timestamp it carries.
		stored := e.Clone()
		stored.ETag = r.ETag
		if ts, ok := wire.TimestampFromETag(r.ETag); ok {
			stored.Timestamp = ts
		}
		body, err := wire.EncodeEntity(stored, wire.Document{Level: o.level, ServiceURL: base, Account: x.account, Table: o.table})
		if err != nil {
			return wire.ResponsePart{}, err
		}
		if o.prefer == "return-content" {
			f = append(f, wire.HeaderField{Name: wire.HeaderPrefApplied, Value: "return-content"})
		}
		f = append(f,
			wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "3.0;"},
			wire.HeaderField{Name: wire.HeaderContentType, Value: o.level.ContentType()},
			wire.HeaderField{Name: wire.HeaderLocation, Value: loc},
			wire.HeaderField{Name: wire.HeaderETag, Value: r.ETag},
		)
		return wire.ResponsePart{Status: http.StatusCreated, Header: f, Body: body}, nil
	case api.BatchDelete:
		f = append(f, wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "1.0;"})
		return wire.ResponsePart{Status: http.StatusNoContent, Header: f}, nil
	case api.BatchRetrieve:
		if r.Entity == nil {
			return wire.ResponsePart{}, spec.ErrInternalError.Newf("The backend answered a retrieve without an entity.")
		}
		body, err := wire.EncodeEntity(*r.Entity, wire.Document{Level: o.level, ServiceURL: base, Account: x.account, Table: o.table})
		if err != nil {
			return wire.ResponsePart{}, err
		}
		f = append(f,
			wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "3.0;"},
			wire.HeaderField{Name: wire.HeaderContentType, Value: o.level.ContentType()},
		)
		if r.Entity.ETag != "" {
			f = append(f, wire.HeaderField{Name: wire.HeaderETag, Value: r.Entity.ETag})
		}
		return wire.ResponsePart{Status: http.StatusOK, Header: f, Body: body}, nil
	}
	f = append(f,
		wire.HeaderField{Name: wire.HeaderDataSvcVersion, Value: "1.0;"},
		wire.HeaderField{Name: wire.HeaderETag, Value: r.ETag},
	)
	return wire.ResponsePart{Status: http.StatusNoContent, Header: f}, nil
}

// batchOperation reads one part into an operation. The part's URL (absolute in SDK
// batches) must name this account's entity set or entity.
func (x *exchange) batchOperation(p wire.RequestPart, retrieve bool) (batchOp, error) {
	bo := batchOp{prefer: prefer(p.Header)}
	level, err := wire.NegotiateMetadata(p.Header.Get(wire.HeaderAccept), "")
	if err != nil {
		return bo, err
	}
	bo.level = level
	u, err := url.Parse(p.URL)
	if err != nil {
		return bo, spec.ErrInvalidURI.Newf("The URL of a batch operation is not valid.")
	}
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	if first, rest, ok := strings.Cut(path, "/"); ok && strings.EqualFold(first, x.account) {
		path = rest
	}
	res, err := wire.ParseResource(path)
	if err != nil {
		return bo, err
	}
	bo.table = res.Table
	method := strings.ToUpper(p.Method)
	if xm := p.Header.Values(wire.HeaderXHTTPMethod); len(xm) > 0 {
		switch {
		case len(xm) > 1:
			return bo, spec.ErrXMethodIncorrectCount.New()
		case method != http.MethodPost:
			return bo, spec.ErrXMethodNotUsingPost.New()
		}
		switch v := strings.ToUpper(strings.TrimSpace(xm[0])); v {
		case "MERGE", "PATCH", http.MethodPut, http.MethodDelete:
			method = v
		default:
			return bo, spec.ErrXMethodIncorrectValue.New()
		}
	}
	if method == http.MethodPatch {
		method = "MERGE"
	}
	if retrieve {
		if method != http.MethodGet || res.Kind != wire.ResourceEntity {
			return bo, spec.ErrInvalidInput.Newf(spec.MsgBatchMixedRetrieve)
		}
		bo.op = api.BatchOp{Kind: api.BatchRetrieve, Entity: api.NewEntity(res.PartitionKey, res.RowKey, nil)}
		return bo, nil
	}
	switch {
	case method == http.MethodPost && res.Kind == wire.ResourceEntitySet:
		e, err := wire.DecodeRequestEntity(p.Body)
		if err != nil {
			return bo, err
		}
		if e.Absent&(api.AbsentPartitionKey|api.AbsentRowKey) != 0 {
			return bo, spec.ErrPropertiesNeedValue.New()
		}
		bo.op = api.BatchOp{Kind: api.BatchInsert, Entity: e}
		return bo, nil
	case res.Kind != wire.ResourceEntity:
		return bo, spec.ErrInvalidInput.Newf("A batch operation must name an entity.")
	case method == http.MethodGet:
		return bo, spec.ErrInvalidInput.Newf(spec.MsgBatchMixedRetrieve)
	}
	ifMatch, err := conditionHeaders(p.Header, method)
	if err != nil {
		return bo, err
	}
	switch method {
	case http.MethodDelete:
		if ifMatch == "" {
			// The service refuses an unconditional Delete without If-Match (EVIDENCE.md 2.3).
			return bo, spec.ErrMissingRequiredHeader.Newf("The If-Match header is required for a delete.")
		}
		bo.op = api.BatchOp{Kind: api.BatchDelete, Entity: api.NewEntity(res.PartitionKey, res.RowKey, nil), IfMatch: ifMatch}
		return bo, nil
	case http.MethodPut, "MERGE":
		e, err := entityFromBody(p.Body, res, nil)
		if err != nil {
			return bo, err
		}
		kind := api.BatchReplace
		switch {
		case method == "MERGE" && ifMatch == "":
			kind = api.BatchInsertOrMerge
		case method == "MERGE":
			kind = api.BatchMerge
		case ifMatch == "":
			kind = api.BatchInsertOrReplace
		}
		bo.op = api.BatchOp{Kind: kind, Entity: e, IfMatch: ifMatch}
		return bo, nil
	}
	return bo, spec.ErrMethodNotAllowed.New()
}

// permitBatchOp checks a SAS against one operation: the permissions of the operation it
// stands for (EVIDENCE.md 7.2; upserts need a and u).
func (x *exchange) permitBatchOp(o batchOp) error {
	perms := map[api.BatchOpKind]string{
		api.BatchInsert: "a", api.BatchReplace: "u", api.BatchMerge: "u",
		api.BatchInsertOrReplace: "au", api.BatchInsertOrMerge: "au",
		api.BatchDelete: "d", api.BatchRetrieve: "r",
	}[o.op.Kind]
	return x.permit(o.table, perms, o.op.Entity.PartitionKey, o.op.Entity.RowKey)
}
