package tableserver

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
)

func (x *exchange) route(method string, res wire.Resource) {
	if x.refuseSecondaryWrite(method) || x.routeXML(method, res) {
		return
	}
	if err := x.negotiate(); err != nil {
		if res.Kind != wire.ResourceBatch {
			x.fail(err)
			return
		}
		// A batch is served whatever its outer Accept says: each operation negotiates its
		// own answer (EVIDENCE.md, E-batch-outer-accept).
		x.level = wire.MinimalMetadata
	}
	var err error
	switch res.Kind {
	case wire.ResourceTables:
		switch method {
		case http.MethodGet, http.MethodHead:
			err = x.queryTables()
		case http.MethodPost:
			err = x.createTable()
		default:
			err = spec.ErrMethodNotAllowed.New()
		}
	case wire.ResourceTable:
		switch method {
		case http.MethodDelete:
			err = x.deleteTable(res.Table)
		case http.MethodGet, http.MethodHead:
			err = x.getTable(res.Table)
		default:
			err = spec.ErrMethodNotAllowed.New()
		}
	case wire.ResourceBatch:
		if method != http.MethodPost {
			err = spec.ErrMethodNotAllowed.New()
			break
		}
		err = x.batch()
	case wire.ResourceEntitySet:
		if x.query.Has("comp") {
			err = x.tableACL(method, res.Table)
			break
		}
		switch method {
		case http.MethodGet, http.MethodHead:
			err = x.queryEntities(res.Table)
		case http.MethodPost:
			err = x.insertEntity(res.Table)
		default:
			err = spec.ErrMethodNotAllowed.New()
		}
	case wire.ResourceEntity:
		switch method {
		case http.MethodGet, http.MethodHead:
			err = x.getEntity(res)
		case http.MethodPut:
			err = x.updateEntity(res, api.Replace)
		case "MERGE":
			err = x.updateEntity(res, api.Merge)
		case http.MethodDelete:
			err = x.deleteEntity(res)
		default:
			err = spec.ErrMethodNotAllowed.New()
		}
	case wire.ResourceService:
		if x.query.Get("restype") == "service" {
			err = spec.ErrNotImplemented.New()
		} else {
			err = spec.ErrInvalidURI.New()
		}
	default:
		err = spec.ErrInvalidURI.New()
	}
	if err != nil {
		x.fail(err)
	}
}

// parseTop reads $top. A non-integer fails with 400 InvalidQueryParameterValue; zero or less
// cannot be passed on (api.Query uses 0 for "none") and fails with 400 InvalidInput, the
// answer the reference gives to any $top outside 1..1000.
func parseTop(q map[string][]string) (int, error) {
	t, err := parseEntityTop(q)
	if err != nil {
		return 0, err
	}
	n, _ := t.Value()
	if t.IsSet() && n == 0 {
		return 0, spec.ErrInvalidInput.Newf(spec.MsgTopOutOfRange)
	}
	return n, nil
}

// parseEntityTop reads $top of Query Entities, where 0 is allowed: an empty page
// (EVIDENCE.md 13, E-top-zero). Negative values are refused with InvalidInput.
func parseEntityTop(q map[string][]string) (api.Top, error) {
	vs, ok := q["$top"]
	if !ok {
		return api.Top{}, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(vs[0]))
	if err != nil {
		return api.Top{}, spec.ErrInvalidQueryParameter.Newf("The value '%s' of $top is not an integer.", vs[0])
	}
	if n < 0 {
		return api.Top{}, spec.ErrInvalidInput.Newf(spec.MsgTopOutOfRange)
	}
	return api.TopOf(n), nil
}

// parseSelect reads $select as a list of names; nil when absent.
func parseSelect(q map[string][]string) []string {
	vs, ok := q["$select"]
	if !ok {
		return nil
	}
	out := []string{}
	for _, n := range strings.Split(vs[0], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func (x *exchange) createTable() error {
	if err := x.permitTableOp(); err != nil {
		return err
	}
	if err := x.checkJSONContent(); err != nil {
		return err
	}
	body, err := x.readBody()
	if err != nil {
		return err
	}
	name, err := wire.DecodeTableName(body)
	if err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	if err := x.backend.CreateTable(ctx, name); err != nil {
		return err
	}
	loc := x.serviceURL() + wire.TablePath(name)
	x.setHeader(wire.HeaderLocation, loc)
	x.setHeader(wire.KeyDataSvcVersion, "3.0;")
	switch prefer(headerValues(x.r.Header)) {
	case "return-no-content":
		x.setHeader(wire.KeyPrefApplied, "return-no-content")
		x.setHeader(wire.KeyDataServiceID, loc)
		x.write(http.StatusNoContent, nil)
		return nil
	case "return-content":
		x.setHeader(wire.KeyPrefApplied, "return-content")
	}
	x.writeJSON(http.StatusCreated, wire.EncodeTable(name, x.document("", nil)))
	return nil
}

func (x *exchange) deleteTable(name string) error {
	if err := x.permitTableOp(); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	if err := x.backend.DeleteTable(ctx, name); err != nil {
		return err
	}
	x.s.dropACL(aclKey{x.account, x.s.tableKey(name)})
	x.write(http.StatusNoContent, nil)
	return nil
}

func (x *exchange) queryTables() error {
	if err := x.permitTableOp(); err != nil {
		return err
	}
	top, err := parseTop(x.query)
	if err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	page, err := x.backend.QueryTables(ctx, api.TableQuery{Filter: x.query.Get("$filter"), Top: top, NextTableName: x.query.Get(wire.ParamNextTableName)})
	if err != nil {
		return err
	}
	if page.NextTableName != "" {
		x.w.Header().Set(wire.HeaderNextTableName, page.NextTableName)
	}
	x.writeJSON(http.StatusOK, wire.EncodeTableSet(page.Tables, x.document("", nil)))
	return nil
}

// getTable answers GET Tables('name') with the one table, or 404 ResourceNotFound.
func (x *exchange) getTable(name string) error {
	if err := x.permitTableOp(); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	page, err := x.backend.QueryTables(ctx, api.TableQuery{Filter: "TableName eq " + wire.FormatKeyLiteral(name)})
	if err != nil {
		return err
	}
	for _, t := range page.Tables {
		if x.s.sameTable(t, name) {
			x.writeJSON(http.StatusOK, wire.EncodeTable(t, x.document("", nil)))
			return nil
		}
	}
	return spec.ErrResourceNotFound.New()
}

func (x *exchange) queryEntities(table string) error {
	if err := x.permitQuery(table); err != nil {
		return err
	}
	top, err := parseEntityTop(x.query)
	if err != nil {
		return err
	}
	sel := parseSelect(x.query)
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	q := api.Query{Filter: x.query.Get("$filter"), Top: top, Select: sel, Continuation: wire.ContinuationFromQuery(x.query)}
	if lb, ok := x.backend.(listingBackend); ok {
		return x.queryEntitiesListed(ctx, lb, table, q)
	}
	page, err := x.backend.QueryEntities(ctx, table, q)
	if err != nil {
		return err
	}
	ents := sasVisible(x.sas, page.Entities, func(e *api.Entity) (string, string) { return e.PartitionKey, e.RowKey })
	doc := x.document(table, sel)
	wire.SetContinuationHeader(x.w.Header(), page.Continuation)
	err = x.writeEntitySet(ents, doc)
	if r, ok := x.backend.(pageRecycler); ok {
		r.RecyclePage(page) // the answer is written: nothing refers to the page any more
	}
	return err
}

// sasVisible returns the entities of a page that sas may see: all of them, or under a
// key-ranged SAS those in its range, copied into a new slice; the page keeps its
// continuation either way.
func sasVisible[E any](sas *wire.SAS, ents []E, keys func(*E) (pk, rk string)) []E {
	if sas == nil || !sas.HasKeyRange() {
		return ents
	}
	kept := ents[:0:0]
	for i := range ents {
		if pk, rk := keys(&ents[i]); sas.InRange(pk, rk) {
			kept = append(kept, ents[i])
		}
	}
	return kept
}

// pageRecycler is a backend that reuses the property maps of a query's page once the
// server has written its answer (reference.Service, persist.Store).
type pageRecycler interface{ RecyclePage(api.Page) }

// entityRecycler is a backend that reuses the property map of an entity it returned once
// the server has written its answer (reference.Service; not persist.Store, whose log may
// still hold an entity it returned).
type entityRecycler interface{ RecycleEntity(api.Entity) }

// requestProperties returns an empty map for the properties of the entity a write request
// sends, or nil (a new map is made) when the backend may keep what it is given: only a
// backend that takes its entities back (entityRecycler, the reference) keeps nothing of an
// entity given to InsertEntity or UpdateEntity once the call returns. The caller hands the
// map back with releaseRequestProperties once the backend has returned.
func (x *exchange) requestProperties() map[string]api.Value {
	if _, ok := x.backend.(entityRecycler); !ok {
		return nil
	}
	if m, ok := requestPropertyMaps.Get().(map[string]api.Value); ok {
		return m
	}
	return make(map[string]api.Value, 8)
}

// releaseRequestProperties empties props, which requestProperties returned, for a later
// request, unless it is nil or was made large by a rare request.
func releaseRequestProperties(props map[string]api.Value) {
	if props == nil || len(props) > maxPooledRequestProperties {
		return
	}
	clear(props)
	requestPropertyMaps.Put(props)
}

// requestPropertyMaps holds emptied property maps of write requests.
var requestPropertyMaps sync.Pool

// maxPooledRequestProperties bounds the maps kept in requestPropertyMaps.
const maxPooledRequestProperties = 64

// recycle hands e back to the backend, if it takes entities back: the answer is written,
// and nothing refers to e any more.
func (x *exchange) recycle(e api.Entity) {
	if r, ok := x.backend.(entityRecycler); ok {
		r.RecycleEntity(e)
	}
}

func (x *exchange) getEntity(res wire.Resource) error {
	if err := x.permit(res.Table, "r", res.PartitionKey, res.RowKey); err != nil {
		return err
	}
	sel := parseSelect(x.query)
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	if lb, ok := x.backend.(listingBackend); ok {
		return x.getEntityListed(ctx, lb, res, sel)
	}
	e, err := x.backend.GetEntity(ctx, res.Table, res.PartitionKey, res.RowKey, sel)
	if err != nil {
		return err
	}
	defer x.recycle(e)
	if e.ETag != "" {
		x.setHeader(wire.KeyETag, e.ETag)
	}
	doc := x.document(res.Table, sel)
	if err := x.writeRendered(http.StatusOK, func(b []byte) ([]byte, error) { return wire.AppendEntity(b, e, doc) }); err != nil {
		x.w.Header().Del(wire.KeyETag)
		return err
	}
	return nil
}

func (x *exchange) insertEntity(table string) error {
	if err := x.checkJSONContent(); err != nil {
		return err
	}
	if lw, ok := x.backend.(listedWriter); ok {
		return x.insertEntityListed(lw, table)
	}
	// The decoded entity shares nothing with the body's bytes (wire decodes from a copy).
	var e api.Entity
	props := x.requestProperties()
	defer releaseRequestProperties(props)
	if err := x.decodeBody(func(body []byte) (err error) {
		e, err = wire.DecodeRequestEntityInto(body, props)
		return err
	}); err != nil {
		return err
	}
	if err := x.admitInsert(table, e.Absent, e.PartitionKey, e.RowKey); err != nil {
		return err
	}
	return x.storeInserted(table, e)
}

// storeInserted inserts the decoded entity e into table and answers. (Split from
// insertEntity so that each keeps few enough returns for its defers to be open-coded.)
func (x *exchange) storeInserted(table string, e api.Entity) error {
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	stored, err := x.backend.InsertEntity(ctx, table, e)
	if err != nil {
		return err
	}
	defer x.recycle(stored)
	return x.answerInserted(table, stored.PartitionKey, stored.RowKey, stored.ETag, func(b []byte, doc wire.Document) ([]byte, error) {
		return wire.AppendEntity(b, stored, doc)
	})
}

// answerUpdated answers an update that stored the entity with this ETag: 204 No Content.
func (x *exchange) answerUpdated(etag string) {
	x.setHeader(wire.KeyDataSvcVersion, "1.0;")
	if etag != "" {
		x.setHeader(wire.KeyETag, etag)
	}
	x.write(http.StatusNoContent, nil)
}

// admitInsert refuses an insert whose body lacks a key (absent, api.Absent* bits), or that
// the request's SAS does not permit.
func (x *exchange) admitInsert(table string, absent api.Absent, partitionKey, rowKey string) error {
	if absent&(api.AbsentPartitionKey|api.AbsentRowKey) != 0 {
		// Storage echoes the preference on this refusal (E-insert-no-keys).
		if p := prefer(headerValues(x.r.Header)); p != "" {
			x.setHeader(wire.KeyPrefApplied, p)
		}
		return spec.ErrPropertiesNeedValue.New()
	}
	return x.permit(table, "a", partitionKey, rowKey)
}

// answerInserted answers an insert of the entity stored with these keys and ETag: 201 with
// the entity render writes, or 204 when the client prefers no content (EVIDENCE.md 2.3).
func (x *exchange) answerInserted(table, partitionKey, rowKey, etag string, render func([]byte, wire.Document) ([]byte, error)) error {
	loc := x.entityLocation(table, partitionKey, rowKey)
	x.setHeader(wire.HeaderLocation, loc)
	x.setHeader(wire.KeyDataSvcVersion, "3.0;")
	if etag != "" {
		x.setHeader(wire.KeyETag, etag)
	}
	switch prefer(headerValues(x.r.Header)) {
	case "return-no-content":
		x.setHeader(wire.KeyPrefApplied, "return-no-content")
		x.setHeader(wire.KeyDataServiceID, loc)
		x.write(http.StatusNoContent, nil)
		return nil
	case "return-content":
		x.setHeader(wire.KeyPrefApplied, "return-content")
	}
	doc := x.document(table, nil)
	return x.writeRendered(http.StatusCreated, func(b []byte) ([]byte, error) { return render(b, doc) })
}

// validETag says whether v has the form `"..."` or `W/"..."` with no quote inside.
func validETag(v string) bool {
	v = strings.TrimPrefix(v, "W/")
	return len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && strings.IndexByte(v[1:len(v)-1], '"') < 0
}

// conditionHeaders reads If-Match for a write, refusing If-None-Match and malformed ETags
// with the InvalidInput messages of TERR (EVIDENCE.md 2.3).
func conditionHeaders(h interface {
	Get(string) string
	Values(string) []string
}, method string) (string, error) {
	ifMatch, noneMatch := h.Values(wire.KeyIfMatch), h.Values(wire.KeyIfNoneMatch)
	if len(ifMatch) > 0 && len(noneMatch) > 0 {
		return "", spec.ErrInvalidInput.Newf(spec.MsgBothIfMatchAndNone)
	}
	if len(noneMatch) > 0 {
		if method == http.MethodDelete {
			return "", spec.ErrInvalidInput.Newf(spec.MsgIfNoneMatchDelete)
		}
		return "", spec.ErrInvalidInput.Newf(spec.MsgIfNoneMatchPut)
	}
	if len(ifMatch) == 0 {
		return "", nil
	}
	v := strings.TrimSpace(ifMatch[0])
	if len(ifMatch) > 1 || (v != api.IfMatchAny && !validETag(v)) {
		return "", spec.ErrInvalidInput.Newf(spec.MsgInvalidETagFormat, v)
	}
	return v, nil
}

// headerValues adapts a request's http.Header, whose keys net/http has put in canonical
// form, to conditionHeaders, which asks only for canonical keys (wire.Key*): they are
// looked up as they are.
type headerValues http.Header

func (h headerValues) Get(k string) string {
	if vs := h[k]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}
func (h headerValues) Values(k string) []string { return h[k] }

// entityFromBody decodes a write's body, its properties into props (see
// wire.DecodeRequestEntityInto); the keys of the URL win over any in the body (the
// service's handling of a mismatch is UNCERTAIN; Azurite takes the URL's).
func entityFromBody(body []byte, res wire.Resource, props map[string]api.Value) (api.Entity, error) {
	e, err := wire.DecodeRequestEntityInto(body, props)
	if err != nil {
		return api.Entity{}, err
	}
	e.PartitionKey, e.RowKey = res.PartitionKey, res.RowKey
	e.Absent &^= api.AbsentPartitionKey | api.AbsentRowKey
	return e, nil
}

func (x *exchange) updateEntity(res wire.Resource, mode api.UpdateMode) error {
	method := http.MethodPut
	if mode == api.Merge {
		method = "MERGE"
	}
	ifMatch, err := conditionHeaders(headerValues(x.r.Header), method)
	if err != nil {
		return err
	}
	perms := "u"
	if ifMatch == "" {
		perms = "au"
	}
	if err := x.permit(res.Table, perms, res.PartitionKey, res.RowKey); err != nil {
		return err
	}
	if err := x.checkJSONContent(); err != nil {
		return err
	}
	if lw, ok := x.backend.(listedWriter); ok {
		return x.updateEntityListed(lw, res, mode, ifMatch)
	}
	var e api.Entity
	props := x.requestProperties()
	defer releaseRequestProperties(props)
	if err := x.decodeBody(func(body []byte) (err error) {
		e, err = entityFromBody(body, res, props)
		return err
	}); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	etag, err := x.backend.UpdateEntity(ctx, res.Table, e, mode, ifMatch)
	if err != nil {
		return err
	}
	x.answerUpdated(etag)
	return nil
}

func (x *exchange) deleteEntity(res wire.Resource) error {
	ifMatch, err := conditionHeaders(headerValues(x.r.Header), http.MethodDelete)
	if err != nil {
		return err
	}
	if err := x.permit(res.Table, "d", res.PartitionKey, res.RowKey); err != nil {
		return err
	}
	ctx, err := x.context()
	if err != nil {
		return err
	}
	defer ctx.cancel()
	if err := x.backend.DeleteEntity(ctx, res.Table, res.PartitionKey, res.RowKey, ifMatch); err != nil {
		return err
	}
	x.setHeader(wire.KeyDataSvcVersion, "1.0;")
	x.write(http.StatusNoContent, nil)
	return nil
}
