package rest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
)

// CreateTable sends POST Tables {"TableName":name}.
func (b *Backend) CreateTable(ctx context.Context, name string) error {
	a, err := b.exchange(ctx, http.MethodPost, "Tables", wire.EncodeTableRequest(name), map[string]string{wire.HeaderPrefer: "return-no-content"})
	if err != nil {
		return err
	}
	return unexpected("create table", a, http.StatusCreated, http.StatusNoContent)
}

// DeleteTable sends DELETE Tables('name').
func (b *Backend) DeleteTable(ctx context.Context, name string) error {
	a, err := b.exchange(ctx, http.MethodDelete, wire.TablePath(name), nil, nil)
	if err != nil {
		return err
	}
	return unexpected("delete table", a, http.StatusNoContent)
}

// QueryTables sends GET Tables with $filter, $top and NextTableName.
func (b *Backend) QueryTables(ctx context.Context, q api.TableQuery) (api.TablePage, error) {
	v := url.Values{}
	if q.Filter != "" {
		v.Set("$filter", q.Filter)
	}
	if q.Top != 0 {
		v.Set("$top", strconv.Itoa(q.Top))
	}
	if q.NextTableName != "" {
		v.Set(wire.ParamNextTableName, q.NextTableName)
	}
	a, err := b.exchange(ctx, http.MethodGet, "Tables"+encodeQuery(v), nil, nil)
	if err != nil {
		return api.TablePage{}, err
	}
	if err := unexpected("query tables", a, http.StatusOK); err != nil {
		return api.TablePage{}, err
	}
	names, err := wire.DecodeTableSet(a.body)
	if err != nil {
		return api.TablePage{}, protocolError("query tables", a, err)
	}
	return api.TablePage{Tables: names, NextTableName: a.get(wire.HeaderNextTableName)}, nil
}

// encodeQuery renders query parameters with spaces as %20, as the documentation asks
// (EVIDENCE.md 3.1).
func encodeQuery(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + strings.ReplaceAll(v.Encode(), "+", "%20")
}

// InsertEntity sends POST table with Prefer: return-content and decodes the stored entity.
func (b *Backend) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	body, err := wire.EncodeRequestEntity(e)
	if err != nil {
		return api.Entity{}, fmt.Errorf("rest: insert entity: %w", err)
	}
	a, err := b.exchange(ctx, http.MethodPost, table, body, map[string]string{wire.HeaderPrefer: "return-content"})
	if err != nil {
		return api.Entity{}, err
	}
	if err := unexpected("insert entity", a, http.StatusCreated, http.StatusNoContent); err != nil {
		return api.Entity{}, err
	}
	if a.status == http.StatusNoContent {
		// The service ignored the preference: the answer is the entity sent and its ETag.
		out := e.Clone()
		out.ETag = a.get(wire.HeaderETag)
		out.Timestamp, _ = wire.TimestampFromETag(out.ETag)
		return out, nil
	}
	out, err := wire.DecodeEntity(a.body)
	if b.direct != nil {
		recycleAnswer(a.body) // the entity shares no memory with it
	}
	if err != nil {
		return api.Entity{}, protocolError("insert entity", a, err)
	}
	if out.ETag == "" {
		out.ETag = a.get(wire.HeaderETag)
	}
	return out, nil
}

// UpdateEntity sends PUT (replace) or the merge verb, with If-Match when ifMatch is not
// empty (an empty one is an upsert).
func (b *Backend) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (string, error) {
	body, err := wire.EncodeRequestEntity(e)
	if err != nil {
		return "", fmt.Errorf("rest: update entity: %w", err)
	}
	method, hdr := http.MethodPut, map[string]string{}
	if mode == api.Merge {
		method = b.merge
		if method == http.MethodPost {
			hdr[wire.HeaderXHTTPMethod] = "MERGE"
		}
	}
	if ifMatch != "" {
		hdr[wire.HeaderIfMatch] = ifMatch
	}
	a, err := b.exchange(ctx, method, wire.EntityPath(table, e.PartitionKey, e.RowKey), body, hdr)
	if err != nil {
		return "", err
	}
	if err := unexpected("update entity", a, http.StatusNoContent); err != nil {
		return "", err
	}
	return a.get(wire.HeaderETag), nil
}

// DeleteEntity sends DELETE, with If-Match when ifMatch is not empty.
func (b *Backend) DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) error {
	hdr := map[string]string{}
	if ifMatch != "" {
		hdr[wire.HeaderIfMatch] = ifMatch
	}
	a, err := b.exchange(ctx, http.MethodDelete, wire.EntityPath(table, partitionKey, rowKey), nil, hdr)
	if err != nil {
		return err
	}
	return unexpected("delete entity", a, http.StatusNoContent)
}

// GetEntity sends GET table(PartitionKey=..,RowKey=..) with $select when sel is not nil.
func (b *Backend) GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (api.Entity, error) {
	v := url.Values{}
	if sel != nil {
		v.Set("$select", strings.Join(sel, ","))
	}
	a, err := b.exchange(ctx, http.MethodGet, wire.EntityPath(table, partitionKey, rowKey)+encodeQuery(v), nil, nil)
	if err != nil {
		return api.Entity{}, err
	}
	if err := unexpected("get entity", a, http.StatusOK); err != nil {
		return api.Entity{}, err
	}
	e, err := wire.DecodeEntity(a.body)
	if b.direct != nil {
		recycleAnswer(a.body) // the entity shares no memory with it
	}
	if err != nil {
		return api.Entity{}, protocolError("get entity", a, err)
	}
	if e.ETag == "" {
		e.ETag = a.get(wire.HeaderETag)
	}
	return e, nil
}

// QueryEntities sends GET table() with $filter, $top, $select and the continuation.
func (b *Backend) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	v := url.Values{}
	if q.Filter != "" {
		v.Set("$filter", q.Filter)
	}
	if n, ok := q.Top.Value(); ok {
		v.Set("$top", strconv.Itoa(n))
	}
	if q.Select != nil {
		v.Set("$select", strings.Join(q.Select, ","))
	}
	wire.AddContinuationQuery(v, q.Continuation)
	a, err := b.exchange(ctx, http.MethodGet, table+"()"+encodeQuery(v), nil, nil)
	if err != nil {
		return api.Page{}, err
	}
	if err := unexpected("query entities", a, http.StatusOK); err != nil {
		return api.Page{}, err
	}
	es, err := wire.DecodeEntitySet(a.body)
	if err != nil {
		return api.Page{}, protocolError("query entities", a, err)
	}
	return api.Page{Entities: es, Continuation: wire.ContinuationFromHeader(a.httpHeader())}, nil
}

// WithSAS signs a service SAS with the account key and returns a Backend that
// authenticates with that SAS alone (driver.SASIssuer).
func (b *Backend) WithSAS(ctx context.Context, o driver.SASOptions) (api.Backend, error) {
	if b.cs.AccountKey == nil {
		return nil, errors.New("rest: this backend has no account key to sign a SAS with")
	}
	sas := wire.SAS{
		Table: o.Table, Permissions: o.Permissions, Start: o.Start, Expiry: o.Expiry,
		StartPK: o.StartPK, StartRK: o.StartRK, EndPK: o.EndPK, EndRK: o.EndRK,
		Identifier: o.Identifier, IPRange: o.IPRange, Protocol: o.Protocol,
	}
	q, err := sas.Encode(b.cs.AccountName, b.cs.AccountKey)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	return b.withSASQuery(q), nil
}

// WithAccountSAS signs an account SAS with the account key and returns a Backend that
// authenticates with that SAS alone (driver.SASIssuer).
func (b *Backend) WithAccountSAS(ctx context.Context, o driver.AccountSASOptions) (api.Backend, error) {
	if b.cs.AccountKey == nil {
		return nil, errors.New("rest: this backend has no account key to sign a SAS with")
	}
	sas := wire.AccountSAS{
		Version: o.Version, Services: o.Services, ResourceTypes: o.ResourceTypes, Permissions: o.Permissions,
		Start: o.Start, Expiry: o.Expiry, IPRange: o.IPRange, Protocol: o.Protocol,
	}
	q, err := sas.Encode(b.cs.AccountName, b.cs.AccountKey)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	return b.withSASQuery(q), nil
}

// withSASQuery returns a copy of b that authenticates with the SAS parameters q alone.
func (b *Backend) withSASQuery(q url.Values) *Backend {
	c := &Backend{
		cs: b.cs, endpoint: b.endpoint, client: b.client, scheme: b.scheme, level: b.level,
		merge: b.merge, sas: q, info: b.info,
	}
	c.cs.AccountKey, c.cs.SAS = nil, q.Encode()
	return c
}
