package mutant

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Mutants that lack a whole feature: every spec that relies on the feature without being
// about it must be blocked by the feature's rule (its precondition), never fail and never
// pass (issue 20, items 8 and 9).

// refuseBatches answers every transaction with 400 InvalidInput, as an emulator without
// $batch does.
type refuseBatches struct{ api.Backend }

func (m refuseBatches) SubmitBatch(context.Context, string, []api.BatchOp) ([]api.BatchResult, error) {
	return nil, spec.ErrInvalidInput.Newf("$batch is not supported")
}

// refuseRawBatch answers a raw POST to $batch with 400 InvalidInput.
func refuseRawBatch(do func(*http.Request) (*http.Response, error), req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/$batch") {
		return do(req)
	}
	body := `{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"$batch is not supported"}}}`
	h := http.Header{}
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("x-ms-error-code", "InvalidInput")
	return &http.Response{StatusCode: http.StatusBadRequest, Status: "400 Bad Request", Header: h, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(bytes.NewReader([]byte(body))), ContentLength: int64(len(body)), Request: req}, nil
}

// int64Literal matches an Int64 literal of a $filter: digits followed by L.
var int64Literal = regexp.MustCompile(`(^|[\s(])-?[0-9]+[Ll]($|[\s)])`)

// refuseInt64Literals refuses a query whose $filter holds an Int64 literal with 400
// InvalidInput.
type refuseInt64Literals struct{ api.Backend }

func (m refuseInt64Literals) QueryEntities(ctx context.Context, table string, q api.Query) (api.Page, error) {
	if int64Literal.MatchString(q.Filter) {
		return api.Page{}, spec.ErrInvalidInput.Newf("Int64 literals are not supported")
	}
	return m.Backend.QueryEntities(ctx, table, q)
}

var (
	_ = define(Mutant{
		Name:        "batch-unsupported",
		Description: "has no entity group transactions: every $batch is refused with 400 InvalidInput",
		Breaks:      []string{"batch.all-kinds"},
		LabelFilter: "area:batch || rel.one-to-many.cross-partition-batch || rel.move.batch-refused || rel.one-to-many.count-in-batch",
	}, func(b api.Backend) api.Backend { return refuseBatches{b} }, hooks{raw: refuseRawBatch})

	_ = define(Mutant{
		Name:        "int64-literals-refused",
		Description: "refuses every $filter that holds an Int64 literal (123L) with 400 InvalidInput",
		Breaks:      []string{"query.compare.int64"},
		LabelFilter: "query.compare.int64 || query.logic.parentheses || query.logic.precedence || query.logic.not",
	}, func(b api.Backend) api.Backend { return refuseInt64Literals{b} }, hooks{})
)

var _ = define(Mutant{
	Name:        "sas-refused",
	Description: "refuses every request signed with a service SAS with 403 AuthenticationFailed, valid or not",
	Breaks:      []string{"auth.sas.permission.read"},
	Base:        "reference-http",
	LabelFilter: "area:auth",
}, identity, hooks{sasDerived: func(derived, _ api.Backend, _ driver.SASOptions) api.Backend {
	return &failing{Backend: derived, fail: func(context.Context, string) error { return spec.ErrAuthenticationFailed.New() }}
}})
