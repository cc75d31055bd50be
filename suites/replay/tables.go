package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/tableconform/conform/reference/wire"
)

var batchRequestLine = regexp.MustCompile(`(?m)^(GET|POST|PUT|PATCH|MERGE|DELETE) (\S+) (HTTP/1\.1\r?)$`)

// recordedTables lists the tables a recording names, in order of first mention.
func recordedTables(rec Recording) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			out = append(out, n)
		}
	}
	for _, x := range rec.Entries {
		for _, n := range tablesOfExchange(x) {
			add(n)
		}
	}
	return out
}

func tablesOfExchange(x Exchange) []string {
	var out []string
	p, _ := resourceOf(x.URI)
	if t := tableOfPath(p); t != "" {
		out = append(out, t)
	}
	if strings.EqualFold(p, "Tables") && x.Method == http.MethodPost {
		if n, err := wire.DecodeTableName(x.RequestBody); err == nil && n != "" {
			out = append(out, n)
		}
	}
	if isBatchPath(p) {
		for _, m := range batchRequestLine.FindAllStringSubmatch(string(x.RequestBody), -1) {
			if t := tableOfPath(partPath(m[2])); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

func isBatchPath(p string) bool { return strings.EqualFold(strings.TrimSuffix(p, "/"), "$batch") }

func partPath(raw string) string {
	if strings.Contains(raw, "://") {
		p, _ := resourceOf(raw)
		return p
	}
	return strings.TrimPrefix(raw, "/")
}

// tablesToCreate lists the tables a recording uses before (or without) creating them: the
// first exchange that names the table is neither a successful Create Table nor an answer
// that the table does not exist.
func tablesToCreate(rec Recording) []string {
	var out []string
	decided := map[string]bool{}
	for _, x := range rec.Entries {
		if skipExchange(x) != "" {
			continue
		}
		p, _ := resourceOf(x.URI)
		for _, t := range tablesOfExchange(x) {
			k := strings.ToLower(t)
			if decided[k] {
				continue
			}
			decided[k] = true
			isCreate := strings.EqualFold(p, "Tables") && x.Method == http.MethodPost
			code := errorCode(x.Status, x.ResponseHeader, x.ResponseBody)
			switch {
			case isCreate && code == "TableAlreadyExists":
				out = append(out, t)
			case isCreate:
			case code == "TableNotFound" || code == "ResourceNotFound" || code == "OutOfRangeInput" || code == "InvalidResourceName":
			case x.Status == http.StatusBadRequest && !isCreate:
			case x.Status == http.StatusAccepted && isBatchPath(p) && batchTableMissing(x):
			default:
				out = append(out, t)
			}
		}
	}
	return out
}

// recordedBatchResponse parses a recorded batch answer. The test proxy sanitises the
// boundary of the Content-Type header (batchresponse_00000000-...) but not the body's, so
// the boundary the body opens with is the one to read it by.
func recordedBatchResponse(x Exchange) (wire.BatchResponse, error) {
	return wire.ParseBatchResponse(batchContentType(hget(x.ResponseHeader, "Content-Type"), x.ResponseBody), x.ResponseBody)
}

// batchContentType is ct with the boundary body opens with, where the recorded header's
// boundary was sanitised (the test proxy writes batch_00000000-... and
// batchresponse_00000000-... in headers, never in bodies).
func batchContentType(ct string, body []byte) string {
	if first, _, ok := bytes.Cut(body, []byte("\n")); ok && bytes.HasPrefix(first, []byte("--")) {
		if b := string(bytes.TrimSpace(first[2:])); b != "" && !strings.Contains(ct, b) {
			return "multipart/mixed; boundary=" + b
		}
	}
	return ct
}

// batchTableMissing reports whether a recorded batch answer says its table does not exist
// (Storage's TableNotFound, Cosmos DB's ResourceNotFound: E-cosmos-batch).
func batchTableMissing(x Exchange) bool {
	br, err := recordedBatchResponse(x)
	if err != nil {
		return false
	}
	for _, p := range append(br.Changeset, br.Retrieves...) {
		if p.Status == http.StatusNotFound && (bytes.Contains(p.Body, []byte("TableNotFound")) || bytes.Contains(p.Body, []byte("ResourceNotFound"))) {
			return true
		}
	}
	return false
}

// statusError is a setup request the target answered with an unexpected status.
type statusError struct {
	op     string
	status int
}

func (e statusError) Error() string { return fmt.Sprintf("%s answered %d", e.op, e.status) }

// createTable creates a table the recording uses without creating it.
func (r *Replayer) createTable(ctx context.Context, name string) error {
	status, err := r.postNoContent(ctx, "Tables", wire.EncodeTableRequest(name))
	if err != nil {
		return err
	}
	if status >= 300 && status != http.StatusConflict {
		return statusError{op: "Create Table", status: status}
	}
	return nil
}

// postNoContent sends body to the target's path (Create Table or Insert Entity) as JSON with
// Prefer: return-no-content, signed with Shared Key, and returns the answer's status.
func (r *Replayer) postNoContent(ctx context.Context, path string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(r.Target.Endpoint, "/")+"/"+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	r.headers(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Prefer", "return-no-content")
	wire.SignRequest(req, wire.SharedKey, r.Target.Account, r.Target.Key, r.now())
	resp, err := r.client().Do(req)
	if err != nil {
		return 0, redactErr(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// cleanupAttempts bounds the deletes of one table at the end of a recording's replay;
// cleanupBudget bounds the whole cleanup of a recording, cleanupBudgetNoAnswer when one of
// its exchanges got no answer (the backend may have stopped answering).
const (
	cleanupAttempts       = 4
	cleanupBudget         = 30 * time.Second
	cleanupBudgetNoAnswer = 3 * time.Second
)

// cleanup deletes every table the replay of one recording may have created. A delete that
// gets no answer, or an answer that the service was busy or timed out, is sent again after
// a growing pause, as the SDKs retry: a lost answer must not leave a table behind.
func (r *Replayer) cleanup(st *state, budget time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	for _, live := range st.tables {
		pause := 100 * time.Millisecond
		for attempt := 1; attempt <= cleanupAttempts && ctx.Err() == nil; attempt++ {
			if !r.deleteTable(ctx, live) {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(pause):
			}
			pause *= 2
		}
	}
}

// deleteTable sends one Delete Table and reports whether it is worth sending again: no
// answer came, or the answer was 408, 429, 500, 502, 503 or 504.
func (r *Replayer) deleteTable(ctx context.Context, live string) (again bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimSuffix(r.Target.Endpoint, "/")+"/Tables('"+live+"')", nil)
	if err != nil {
		return false
	}
	r.headers(req)
	wire.SignRequest(req, wire.SharedKey, r.Target.Account, r.Target.Key, r.now())
	resp, err := r.client().Do(req)
	if err != nil {
		return true
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
