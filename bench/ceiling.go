package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableconform/conform/reference/wire"
)

// CeilingOp is one operation of the SDK ceiling: the same aztables client against a
// backend and against a server that does nothing.
type CeilingOp string

// The SDK ceiling's operations.
const (
	CeilingInsert      CeilingOp = "insert"
	CeilingGet         CeilingOp = "get"
	CeilingMergeUpsert CeilingOp = "merge-upsert"
	CeilingQuery20     CeilingOp = "query20"
)

// CeilingOps lists the ceiling's operations in report order.
func CeilingOps() []CeilingOp {
	return []CeilingOp{CeilingInsert, CeilingGet, CeilingMergeUpsert, CeilingQuery20}
}

// CeilingWorkers is how many goroutines share the client in the ceiling runs.
const CeilingWorkers = 16

// Shape of the ceiling's data: one partition of ceilingRows rows that gets and the query
// read, small entities so that the protocol, not the payload, is measured.
const (
	ceilingPartition = "q"
	ceilingRows      = 20
	ceilingPayload   = 200
)

func ceilingRowKey(i int) string { return fmt.Sprintf("r%03d", i) }

// ceilingBody is the JSON of one entity as the client sends it.
func ceilingBody(pk, rk string, seq int64) []byte {
	var b strings.Builder
	b.Grow(ceilingPayload + 160)
	b.WriteString(`{"PartitionKey":`)
	b.WriteString(strconv.Quote(pk))
	b.WriteString(`,"RowKey":`)
	b.WriteString(strconv.Quote(rk))
	b.WriteString(`,"Data":"`)
	b.WriteString(payload(pk, rk, ceilingPayload))
	b.WriteString(`","Seq@odata.type":"Edm.Int64","Seq":"`)
	b.WriteString(strconv.FormatInt(seq, 10))
	b.WriteString(`"}`)
	return []byte(b.String())
}

// RecordedAnswer is one answer of a server, byte for byte: status, header fields and body.
type RecordedAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// CeilingAnswers are a server's answers to the ceiling's requests, keyed by the kind of
// request (ceilingRequestKey): what the do-nothing server replays.
type CeilingAnswers map[string]RecordedAnswer

// ceilingRequestKey names the kind of a ceiling request: "insert", "get:<RowKey>",
// "query", or the method of an update ("patch" for aztables' merge-upsert).
func ceilingRequestKey(method, escapedPath string) string {
	switch method {
	case http.MethodPost:
		return "insert"
	case http.MethodGet:
		i := strings.Index(escapedPath, "RowKey=")
		if i < 0 {
			return "query"
		}
		rk := strings.TrimSuffix(escapedPath[i+len("RowKey="):], ")")
		for _, q := range []string{"'", "%27"} {
			rk = strings.TrimSuffix(strings.TrimPrefix(rk, q), q)
		}
		return "get:" + rk
	}
	return strings.ToLower(method)
}

// captureTransport keeps the last answer to each kind of ceiling request.
type captureTransport struct {
	inner   http.RoundTripper
	mu      sync.Mutex
	answers CeilingAnswers
}

func (c *captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.inner.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	h := resp.Header.Clone()
	for _, k := range []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"} {
		h.Del(k)
	}
	c.mu.Lock()
	c.answers[ceilingRequestKey(req.Method, req.URL.EscapedPath())] = RecordedAnswer{Status: resp.StatusCode, Header: h, Body: body}
	c.mu.Unlock()
	return resp, nil
}

// CaptureCeilingAnswers sends each kind of ceiling request once to the server at
// tableEndpoint (http://host:port/devstoreaccount1) through aztables, as the ceiling's
// workers send them, and returns its answers: an insert, an upsert, a get of every row and
// the partition query. The ceiling's table is deleted afterwards.
func CaptureCeilingAnswers(ctx context.Context, tableEndpoint string) (CeilingAnswers, error) {
	capture := &captureTransport{inner: NewCeilingTransport(), answers: CeilingAnswers{}}
	c, err := NewCeiling(ctx, tableEndpoint, false, &http.Client{Transport: capture})
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
	m := NewMeter().Worker(nil)
	// The first insert and upsert of worker 0 in the first run, as step names them.
	c.runs = 1
	for _, op := range []CeilingOp{CeilingInsert, CeilingMergeUpsert, CeilingQuery20} {
		if _, err := c.step(ctx, m, op, 0, 0); err != nil {
			return nil, fmt.Errorf("ceiling: capture %s: %w", op, err)
		}
	}
	for i := 0; i < ceilingRows; i++ {
		if _, err := c.step(ctx, m, CeilingGet, i, 0); err != nil {
			return nil, fmt.Errorf("ceiling: capture get: %w", err)
		}
	}
	c.runs = 0
	return capture.answers, nil
}

// ReplayHandler answers the ceiling's requests with a's recorded answers, without parsing,
// authenticating or storing anything: what the client and the machine allow when the server
// costs nothing but its HTTP handling, with the same bytes a real server sends. A request of
// a kind a has no answer for gets 404 ResourceNotFound.
func ReplayHandler(a CeilingAnswers) http.Handler {
	notFound := RecordedAnswer{
		Status: http.StatusNotFound,
		Header: http.Header{"Content-Type": {"application/json;odata=minimalmetadata;streaming=true;charset=utf-8"}},
		Body:   []byte(`{"odata.error":{"code":"ResourceNotFound","message":{"lang":"en-US","value":"The specified resource does not exist."}}}`),
	}
	lengths := map[string][]string{}
	for k, ans := range a {
		lengths[k] = []string{strconv.Itoa(len(ans.Body))}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := ceilingRequestKey(r.Method, r.URL.EscapedPath())
		ans, ok := a[key]
		if !ok {
			ans = notFound
		}
		h := w.Header()
		for k, v := range ans.Header {
			h[k] = v
		}
		if n, ok := lengths[key]; ok {
			h["Content-Length"] = n
		} else {
			h["Content-Length"] = []string{strconv.Itoa(len(ans.Body))}
		}
		w.WriteHeader(ans.Status)
		_, _ = w.Write(ans.Body)
	})
}

// NewCeilingTransport is the HTTP transport of the ceiling's client, the same for every
// target: keep-alive with an idle connection per worker.
func NewCeilingTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          4 * CeilingWorkers,
		MaxIdleConnsPerHost:   4 * CeilingWorkers,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// Ceiling drives one target with the aztables client.
type Ceiling struct {
	svc    *aztables.ServiceClient
	client *aztables.Client
	table  string
	canned bool
	seq    atomic.Int64
	runs   int
}

// NewCeiling connects the aztables client to the development account at tableEndpoint
// (http://host:port/devstoreaccount1) and, unless canned (the do-nothing server), creates a
// table with the rows that gets and the query read. httpClient is shared by all targets.
func NewCeiling(ctx context.Context, tableEndpoint string, canned bool, httpClient *http.Client) (*Ceiling, error) {
	cs := "DefaultEndpointsProtocol=http;AccountName=" + wire.DevAccountName + ";AccountKey=" + wire.DevAccountKey + ";TableEndpoint=" + tableEndpoint + ";"
	svc, err := aztables.NewServiceClientFromConnectionString(cs, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport:                       httpClient,
		Retry:                           policy.RetryOptions{MaxRetries: -1, TryTimeout: 30 * time.Second},
		InsecureAllowCredentialWithHTTP: true,
	}})
	if err != nil {
		return nil, fmt.Errorf("ceiling: client for %s: %w", tableEndpoint, err)
	}
	c := &Ceiling{svc: svc, table: newTableName(), canned: canned}
	c.client = svc.NewClient(c.table)
	if canned {
		return c, nil
	}
	if _, err := svc.CreateTable(ctx, c.table, nil); err != nil {
		return nil, fmt.Errorf("ceiling: create table %s at %s: %w", c.table, tableEndpoint, err)
	}
	for i := 0; i < ceilingRows; i++ {
		if _, err := c.client.AddEntity(ctx, ceilingBody(ceilingPartition, ceilingRowKey(i), int64(i)), nil); err != nil {
			_ = c.Close(ctx)
			return nil, fmt.Errorf("ceiling: load row %d: %w", i, err)
		}
	}
	return c, nil
}

// Close deletes the ceiling's table.
func (c *Ceiling) Close(ctx context.Context) error {
	if c.canned {
		return nil
	}
	_, err := c.svc.DeleteTable(ctx, c.table, nil)
	return err
}

type ceilingEntity struct {
	PartitionKey, RowKey, Data string
}

// Run performs op with CeilingWorkers goroutines until limit and returns what they
// measured. Results are checked: a get returns the row asked for, a query the partition's
// rows in order; inserts and upserts are read back afterwards (not against the do-nothing
// server, which stores nothing).
func (c *Ceiling) Run(ctx context.Context, op CeilingOp, limit Limit, t Timer) (Summary, error) {
	if t == nil {
		t = nopTimer{}
	}
	t.StopTimer()
	c.runs++
	var (
		issued  atomic.Int64
		failed  atomic.Int64
		mu      sync.Mutex
		first   error
		wrongs  error
		written []string
		wg      sync.WaitGroup
	)
	meter := NewMeter()
	ws := make([]*Measured, CeilingWorkers)
	for i := range ws {
		ws[i] = meter.Worker(nil)
	}
	deadline := time.Time{}
	t.ResetTimer()
	t.StartTimer()
	start, cpu0 := time.Now(), processCPU()
	meter.Begin(start)
	if limit.Duration > 0 {
		deadline = start.Add(limit.Duration)
	}
	for i, m := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				if limit.Ops > 0 && issued.Add(1) > int64(limit.Ops) || !deadline.IsZero() && time.Now().After(deadline) || ctx.Err() != nil {
					return
				}
				rk, err := c.step(ctx, m, op, i, n)
				if err != nil {
					var we *WrongResultError
					mu.Lock()
					if errors.As(err, &we) && wrongs == nil {
						wrongs = err
					} else if first == nil {
						first = err
					}
					mu.Unlock()
					failed.Add(1)
					continue
				}
				if rk != "" && n%sampleEvery == 0 {
					mu.Lock()
					written = append(written, rk)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	t.StopTimer()
	s := meter.Summary(elapsed)
	s.setCPU(cpu, false)
	if wrongs != nil {
		return s, fmt.Errorf("sdk ceiling %s: %w", op, wrongs)
	}
	if s.Requests > 0 && float64(failed.Load()) > MaxErrorRate*float64(s.Requests) {
		return s, fmt.Errorf("sdk ceiling %s: %d of %d requests failed; first: %w", op, failed.Load(), s.Requests, first)
	}
	if !c.canned {
		for _, rk := range written[:min(len(written), 32)] {
			pk := "w"
			if op == CeilingMergeUpsert {
				pk = "u"
			}
			resp, err := c.client.GetEntity(ctx, pk, rk, nil)
			if err != nil {
				return s, fmt.Errorf("sdk ceiling %s: read back (%s, %s): %w", op, pk, rk, err)
			}
			if err := checkCeilingEntity(resp.Value, pk, rk); err != nil {
				return s, fmt.Errorf("sdk ceiling %s: %w", op, err)
			}
		}
	}
	return s, nil
}

func checkCeilingEntity(raw []byte, pk, rk string) error {
	var e ceilingEntity
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("decode entity: %w", err)
	}
	if e.PartitionKey != pk || e.RowKey != rk || e.Data != payload(pk, rk, ceilingPayload) {
		return wrong("asked for (%s, %s), got (%s, %s) with %d bytes of data", pk, rk, e.PartitionKey, e.RowKey, len(e.Data))
	}
	return nil
}

// step performs one operation and returns the RowKey it wrote, if any.
func (c *Ceiling) step(ctx context.Context, m *Measured, op CeilingOp, worker, n int) (string, error) {
	begin := time.Now()
	switch op {
	case CeilingInsert:
		rk := fmt.Sprintf("i%02d-%d-%010d", worker, c.runs, c.seq.Add(1))
		_, err := c.client.AddEntity(ctx, ceilingBody("w", rk, int64(n)), nil)
		m.record(KindInsert, "w", begin, 1, err)
		return rk, err
	case CeilingMergeUpsert:
		rk := fmt.Sprintf("u%04d", (worker*7919+n)%1000)
		_, err := c.client.UpsertEntity(ctx, ceilingBody("u", rk, int64(n)), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		m.record(KindUpdate, "u", begin, 1, err)
		return rk, err
	case CeilingGet:
		rk := ceilingRowKey((worker + n) % ceilingRows)
		resp, err := c.client.GetEntity(ctx, ceilingPartition, rk, nil)
		m.record(KindGet, ceilingPartition, begin, 1, err)
		if err != nil {
			return "", err
		}
		if n%sampleEvery == 0 {
			return "", checkCeilingEntity(resp.Value, ceilingPartition, rk)
		}
		return "", nil
	case CeilingQuery20:
		filter := "PartitionKey eq '" + ceilingPartition + "'"
		resp, err := c.client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctx)
		m.record(KindQuery, PartitionQuery, begin, len(resp.Entities), err)
		if err != nil {
			return "", err
		}
		if len(resp.Entities) != ceilingRows {
			return "", wrong("a query of partition %s returned %d rows, want %d", ceilingPartition, len(resp.Entities), ceilingRows)
		}
		if n%sampleEvery == 0 {
			for i, raw := range resp.Entities {
				if err := checkCeilingEntity(raw, ceilingPartition, ceilingRowKey(i)); err != nil {
					return "", err
				}
			}
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown ceiling operation %q", op)
}
