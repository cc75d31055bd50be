package sdk

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/wire"
	"github.com/tableconform/conform/suites/driver"
	"github.com/tableconform/conform/suites/driver/rest"
)

// DriverName is the name of this driver in driver.Info.
const DriverName = "sdk"

// APIVersion is the x-ms-version that aztables v1.4.1 sends on every request.
const APIVersion = "2019-02-02"

// DefaultTimeout bounds one HTTP exchange when the caller's context has no earlier deadline.
const DefaultTimeout = 30 * time.Second

// Backend is an api.Backend that drives an endpoint through aztables. It is safe for
// concurrent use.
type Backend struct {
	svc  *aztables.ServiceClient
	info driver.Info
}

var (
	_ api.Backend      = (*Backend)(nil)
	_ driver.Describer = (*Backend)(nil)
)

// Option configures New.
type Option func(*config)

type config struct {
	httpClient *http.Client
	info       driver.Info
}

// WithHTTPClient sends requests through c instead of a client with DefaultTimeout.
func WithHTTPClient(c *http.Client) Option { return func(o *config) { o.httpClient = c } }

// WithInfo sets the Name, Kind and Version reported by Info; Driver, Endpoint and
// APIVersion are always this driver's own.
func WithInfo(info driver.Info) Option { return func(o *config) { o.info = info } }

// New connects to the account described by connectionString (see
// wire.ParseConnectionString): Shared Key with the account key, else the string's SAS. No
// request is sent. Errors never contain the key or signature.
func New(connectionString string, opts ...Option) (*Backend, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	cs, err := wire.ParseConnectionString(connectionString)
	if err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	// rest's transport keeps enough idle connections per host for a load run's
	// workers; net/http's default keeps two and would open a connection per request.
	// HTTP/2 is still offered over TLS, as net/http's default transport offers it.
	hc := cfg.httpClient
	if hc == nil {
		// rest's transport keeps enough idle connections per host for a load run's
		// workers; net/http's default keeps two and would open a connection per request.
		// HTTP/2 is still offered over TLS, as net/http's default transport offers it.
		tr := rest.NewTransport()
		tr.ForceAttemptHTTP2 = true
		hc = &http.Client{Transport: tr, Timeout: DefaultTimeout}
	}
	clientOpts := &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: hc,
		// A conformance run must see every answer, and a retry inside the client would hide
		// it: azcore's negative MaxRetries means one try and no retry. The recorder around
		// every spec's backend retries as azcore's defaults would (driver.RetryPolicy: 408,
		// 429, 500, 502, 503, 504) and records each attempt.
		Retry:                           policy.RetryOptions{MaxRetries: -1, TryTimeout: DefaultTimeout},
		InsecureAllowCredentialWithHTTP: true, // emulators speak plain HTTP
		Telemetry:                       policy.TelemetryOptions{ApplicationID: "conform"},
		PerRetryPolicies:                []policy.Policy{expectContinue{}},
	}}
	// The client is built from the parsed parts rather than with
	// NewServiceClientFromConnectionString, which ignores TableEndpoint when the string
	// carries a SAS and knows no UseDevelopmentStorage.
	var svc *aztables.ServiceClient
	if cs.AccountKey != nil {
		cred, cerr := aztables.NewSharedKeyCredential(cs.AccountName, base64.StdEncoding.EncodeToString(cs.AccountKey))
		if cerr != nil {
			return nil, fmt.Errorf("sdk: the account key for %s is not usable", cs.TableEndpoint)
		}
		svc, err = aztables.NewServiceClientWithSharedKey(cs.TableEndpoint, cred, clientOpts)
	} else {
		svc, err = aztables.NewServiceClientWithNoCredential(cs.TableEndpoint+"/?"+cs.SAS, clientOpts)
	}
	if err != nil {
		return nil, fmt.Errorf("sdk: client for %s: %s", cs.TableEndpoint, sasSignature.ReplaceAllString(err.Error(), "${1}REDACTED"))
	}
	endpoint := cs.TableEndpoint
	info := cfg.info
	if info.Name == "" {
		info.Name = "endpoint"
	}
	if info.Kind == "" {
		info.Kind = "endpoint"
	}
	info.Driver, info.Endpoint, info.APIVersion = DriverName, endpoint, APIVersion
	return &Backend{svc: svc, info: info}, nil
}

// Info describes the backend; the endpoint carries no credential.
func (b *Backend) Info() driver.Info { return b.info }

// CreateTable creates a table through ServiceClient.CreateTable.
func (b *Backend) CreateTable(ctx context.Context, name string) (err error) {
	defer recovered("create table", &err)
	var raw *http.Response
	_, err = b.svc.CreateTable(policy.WithCaptureResponse(ctx, &raw), name, nil)
	return mapAnswer("create table", err, raw)
}

// DeleteTable deletes a table through ServiceClient.DeleteTable.
func (b *Backend) DeleteTable(ctx context.Context, name string) (err error) {
	defer recovered("delete table", &err)
	var raw *http.Response
	_, err = b.svc.DeleteTable(policy.WithCaptureResponse(ctx, &raw), name, nil)
	return mapAnswer("delete table", err, raw)
}

// QueryTables fetches exactly one page of Query Tables.
func (b *Backend) QueryTables(ctx context.Context, q api.TableQuery) (page api.TablePage, err error) {
	defer recovered("query tables", &err)
	opts := &aztables.ListTablesOptions{Top: top(q.Top)}
	if q.Filter != "" {
		opts.Filter = &q.Filter
	}
	if q.NextTableName != "" {
		opts.NextTableName = &q.NextTableName
	}
	var raw *http.Response
	resp, err := b.svc.NewListTablesPager(opts).NextPage(policy.WithCaptureResponse(ctx, &raw))
	if err != nil {
		return api.TablePage{}, mapAnswer("query tables", err, raw)
	}
	for _, t := range resp.Tables {
		if t != nil && t.Name != nil {
			page.Tables = append(page.Tables, *t.Name)
		}
	}
	if resp.NextTableName != nil {
		page.NextTableName = *resp.NextTableName
	}
	return page, nil
}

// InsertEntity inserts e with AddEntity and decodes the stored entity from the raw answer.
func (b *Backend) InsertEntity(ctx context.Context, table string, e api.Entity) (out api.Entity, err error) {
	defer recovered("insert entity", &err)
	body, err := encodeEntity(e)
	if err != nil {
		return api.Entity{}, fmt.Errorf("sdk: insert entity: %w", err)
	}
	var raw *http.Response
	resp, err := b.svc.NewClient(table).AddEntity(policy.WithCaptureResponse(ctx, &raw), body, nil)
	if err != nil {
		return api.Entity{}, mapAnswer("insert entity", err, raw)
	}
	out = e.Clone()
	if raw != nil {
		if payload, perr := runtime.Payload(raw); perr == nil && len(payload) > 0 {
			decoded, derr := decodeEntity(payload)
			if derr != nil {
				return api.Entity{}, driver.NewMalformedAnswer("sdk insert entity", raw.StatusCode, payload, derr)
			}
			out = decoded
		}
	}
	if resp.ETag != "" {
		out.ETag = string(resp.ETag)
	}
	return out, nil
}

// UpdateEntity replaces or merges e: UpdateEntity with If-Match when ifMatch is set,
// UpsertEntity (Insert Or Replace / Insert Or Merge, no If-Match) when it is empty.
func (b *Backend) UpdateEntity(ctx context.Context, table string, e api.Entity, mode api.UpdateMode, ifMatch string) (etag string, err error) {
	defer recovered("update entity", &err)
	if err := refuseEmptyPartitionKey("update entity", e.PartitionKey); err != nil {
		return "", err
	}
	body, err := encodeEntity(e)
	if err != nil {
		return "", fmt.Errorf("sdk: update entity: %w", err)
	}
	sdkMode := aztables.UpdateModeReplace
	if mode == api.Merge {
		sdkMode = aztables.UpdateModeMerge
	}
	client := b.svc.NewClient(table)
	var raw *http.Response
	if ifMatch == "" {
		resp, err := client.UpsertEntity(policy.WithCaptureResponse(ctx, &raw), body, &aztables.UpsertEntityOptions{UpdateMode: sdkMode})
		if err != nil {
			return "", mapAnswer("upsert entity", err, raw)
		}
		return string(resp.ETag), nil
	}
	m := azcore.ETag(ifMatch)
	resp, err := client.UpdateEntity(policy.WithCaptureResponse(ctx, &raw), body, &aztables.UpdateEntityOptions{UpdateMode: sdkMode, IfMatch: &m})
	if err != nil {
		return "", mapAnswer("update entity", err, raw)
	}
	return string(resp.ETag), nil
}

// DeleteEntity deletes one entity. The SDK always sends If-Match: an empty ifMatch goes out
// as an empty header value, which is the closest the SDK comes to "no If-Match".
func (b *Backend) DeleteEntity(ctx context.Context, table, partitionKey, rowKey, ifMatch string) (err error) {
	defer recovered("delete entity", &err)
	if err := refuseEmptyPartitionKey("delete entity", partitionKey); err != nil {
		return err
	}
	m := azcore.ETag(ifMatch)
	var raw *http.Response
	_, err = b.svc.NewClient(table).DeleteEntity(policy.WithCaptureResponse(ctx, &raw), partitionKey, rowKey, &aztables.DeleteEntityOptions{IfMatch: &m})
	return mapAnswer("delete entity", err, raw)
}

// GetEntity reads one entity and decodes it from the raw answer. aztables v1.4.1 has no
// $select on Get Entity: a non-nil sel fails with ErrUnsupported.
func (b *Backend) GetEntity(ctx context.Context, table, partitionKey, rowKey string, sel []string) (out api.Entity, err error) {
	defer recovered("get entity", &err)
	if sel != nil {
		return api.Entity{}, mapError("get entity", fmt.Errorf("$select on Get Entity is %w", ErrUnsupported))
	}
	if err := refuseEmptyPartitionKey("get entity", partitionKey); err != nil {
		return api.Entity{}, err
	}
	var raw *http.Response
	resp, err := b.svc.NewClient(table).GetEntity(policy.WithCaptureResponse(ctx, &raw), partitionKey, rowKey, nil)
	if err != nil {
		return api.Entity{}, mapAnswer("get entity", err, raw)
	}
	if raw == nil {
		return api.Entity{}, &driver.TransportError{Op: "sdk get entity", Err: errors.New("no response captured")}
	}
	payload, err := runtime.Payload(raw)
	if err != nil {
		return api.Entity{}, &driver.TransportError{Op: "sdk get entity", Err: err}
	}
	out, err = decodeEntity(payload)
	if err != nil {
		return api.Entity{}, driver.NewMalformedAnswer("sdk get entity", raw.StatusCode, payload, err)
	}
	if resp.ETag != "" {
		out.ETag = string(resp.ETag)
	}
	return out, nil
}

// QueryEntities fetches exactly one page: a fresh pager seeded with q's continuation, one
// NextPage call (EVIDENCE.md 12 #13).
func (b *Backend) QueryEntities(ctx context.Context, table string, q api.Query) (page api.Page, err error) {
	defer recovered("query entities", &err)
	opts := &aztables.ListEntitiesOptions{Top: entityTop(q.Top)}
	if q.Filter != "" {
		opts.Filter = &q.Filter
	}
	if q.Select != nil {
		s := strings.Join(q.Select, ",")
		opts.Select = &s
	}
	if q.Continuation.NextPartitionKey != "" {
		opts.NextPartitionKey = &q.Continuation.NextPartitionKey
	}
	if q.Continuation.NextRowKey != "" {
		opts.NextRowKey = &q.Continuation.NextRowKey
	}
	var raw *http.Response
	resp, err := b.svc.NewClient(table).NewListEntitiesPager(opts).NextPage(policy.WithCaptureResponse(ctx, &raw))
	if err != nil {
		return api.Page{}, mapAnswer("query entities", err, raw)
	}
	if raw == nil {
		return api.Page{}, &driver.TransportError{Op: "sdk query entities", Err: errors.New("no response captured")}
	}
	payload, err := runtime.Payload(raw)
	if err != nil {
		return api.Page{}, &driver.TransportError{Op: "sdk query entities", Err: err}
	}
	page.Entities, err = decodeEntitySet(payload)
	if err != nil {
		return api.Page{}, driver.NewMalformedAnswer("sdk query entities", raw.StatusCode, payload, err)
	}
	if resp.NextPartitionKey != nil {
		page.Continuation.NextPartitionKey = *resp.NextPartitionKey
	}
	if resp.NextRowKey != nil {
		page.Continuation.NextRowKey = *resp.NextRowKey
	}
	return page, nil
}

// SubmitBatch runs ops through SubmitTransaction. A failed transaction comes back from the
// SDK as a 202 ResponseError with no code; its multipart body is read for the inner status,
// code, message and "N:" index (EVIDENCE.md 12 #9). A success is read from the raw answer for
// each operation's status and ETag, which the SDK does not return.
func (b *Backend) SubmitBatch(ctx context.Context, table string, ops []api.BatchOp) (results []api.BatchResult, err error) {
	defer recovered("submit batch", &err)
	if len(ops) == 0 {
		// aztables refuses to send an empty transaction ("transaction cannot be empty").
		return nil, mapError("submit batch", fmt.Errorf("an empty transaction is %w", ErrUnsupported))
	}
	actions, err := transactionActions(ops)
	if err != nil {
		return nil, mapError("submit batch", err)
	}
	var raw *http.Response
	_, err = b.svc.NewClient(table).SubmitTransaction(policy.WithCaptureResponse(ctx, &raw), actions, nil)
	if err != nil {
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.RawResponse != nil && re.RawResponse.StatusCode == http.StatusAccepted {
			return nil, transactionFailure(re.RawResponse)
		}
		return nil, mapError("submit batch", err)
	}
	if raw == nil {
		return nil, &driver.TransportError{Op: "sdk submit batch", Err: errors.New("no response captured")}
	}
	payload, err := runtime.Payload(raw)
	if err != nil {
		return nil, &driver.TransportError{Op: "sdk submit batch", Err: err}
	}
	parts, err := parseBatchBody(raw.Header.Get(wire.HeaderContentType), payload)
	if err != nil {
		return nil, driver.NewMalformedAnswer("sdk submit batch", raw.StatusCode, payload, err)
	}
	if f := batchFailure(parts, raw.Header.Get(wire.HeaderRequestID)); f != nil {
		return nil, f
	}
	results = make([]api.BatchResult, 0, len(parts))
	for _, p := range parts {
		results = append(results, api.BatchResult{Status: p.Status, ETag: p.Header.Get(wire.HeaderETag)})
	}
	return results, nil
}

func transactionFailure(resp *http.Response) error {
	payload, err := runtime.Payload(resp)
	if err != nil {
		return &driver.TransportError{Op: "sdk submit batch", Err: err}
	}
	requestID := resp.Header.Get(wire.HeaderRequestID)
	parts, err := parseBatchBody(resp.Header.Get(wire.HeaderContentType), payload)
	if err != nil {
		if code, msg := parseErrorBody(payload); code != "" {
			return &spec.Error{Status: resp.StatusCode, Code: code, Message: msg, RequestID: requestID}
		}
		return driver.NewMalformedAnswer("sdk submit batch", resp.StatusCode, payload, fmt.Errorf("failed transaction: %w", err))
	}
	if f := batchFailure(parts, requestID); f != nil {
		return f
	}
	return &driver.TransportError{Op: "sdk submit batch", Err: errors.New("the SDK reported a failed transaction but no part failed")}
}

var sasSignature = regexp.MustCompile(`(?i)(sig=)[^&;\s"']+`)

// top converts Query.Top to the SDK's *int32: nil for zero, clamped to the int32 range
// otherwise (values outside 1..1000 are still sent, to probe the limit).
// entityTop converts Query.Top to the SDK's *int32: nil when absent, else as top does
// (TopOf(0) is sent as $top=0).
func entityTop(t api.Top) *int32 {
	n, ok := t.Value()
	if !ok {
		return nil
	}
	v := int32(max(min(n, math.MaxInt32), math.MinInt32))
	return &v
}

func top(n int) *int32 {
	if n == 0 {
		return nil
	}
	v := int32(max(min(n, math.MaxInt32), math.MinInt32))
	return &v
}

// expectContinue sends bodies from 2 KiB to 4 MiB with Expect: 100-continue, as the REST
// driver does (rest.ExpectContinue: proxies in front of a fast server lose answers
// otherwise).
type expectContinue struct{}

func (expectContinue) Do(req *policy.Request) (*http.Response, error) {
	rest.ExpectContinue(req.Raw())
	return req.Next()
}
