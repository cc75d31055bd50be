package mutant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/suites/driver"
)

// Backends that lack the leniencies and limits real traffic shows (EVIDENCE.md 13).

// annotatedValues calls fn with each property of a JSON object body that carries an
// @odata.type annotation: its name, its type and its raw value.
func annotatedValues(body []byte, fn func(name, edm string, raw json.RawMessage)) {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(body), &m) != nil {
		return
	}
	for k, t := range m {
		name, ok := strings.CutSuffix(k, "@odata.type")
		if !ok || strings.Contains(name, "@") {
			continue
		}
		var edm string
		if json.Unmarshal(t, &edm) != nil {
			continue
		}
		if v, ok := m[name]; ok {
			fn(name, edm, v)
		}
	}
}

// refuseWrites answers a write whose body refuse picks with code, without sending it.
func refuseWrites(code spec.ErrorCode, refuse func(body []byte) bool) func(r *http.Request) *http.Response {
	return func(r *http.Request) *http.Response {
		if !isWrite(r.Method) || r.Body == nil {
			return nil
		}
		var body []byte
		rewriteRequestBody(r, func(b []byte) []byte { body = b; return b })
		if refuse(body) {
			return fakeAnswer(r, code)
		}
		return nil
	}
}

var (
	zonelessDateTime = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$`)
	longFraction     = regexp.MustCompile(`\.\d{8,}`)
	versionDate      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

var (
	_ = rawMutant(Mutant{
		Name:        "datetime-zone-local",
		Description: "reads an Edm.DateTime without a zone designator as a time at +01:00 instead of UTC",
		Breaks:      []string{"protocol.datetime.no-zone"},
	}, func(r *http.Request) *http.Response {
		if isWrite(r.Method) && r.Body != nil {
			rewriteRequestBody(r, func(b []byte) []byte {
				return jsonObject(b, func(m map[string]json.RawMessage) {
					annotatedValues(b, func(name, edm string, raw json.RawMessage) {
						var s string
						if edm == "Edm.DateTime" && json.Unmarshal(raw, &s) == nil && zonelessDateTime.MatchString(s) {
							m[name], _ = json.Marshal(s + "+01:00")
						}
					})
				})
			})
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "datetime-digits-refused",
		Description: "refuses an Edm.DateTime with more than seven fractional digits with 400 InvalidValueType",
		Breaks:      []string{"protocol.datetime.extra-digits"},
	}, refuseWrites(spec.ErrInvalidValueType, func(body []byte) bool {
		refuse := false
		annotatedValues(body, func(_, edm string, raw json.RawMessage) {
			refuse = refuse || (edm == "Edm.DateTime" && longFraction.Match(raw))
		})
		return refuse
	}), nil)

	_ = rawMutant(Mutant{
		Name:        "typed-strings-refused",
		Description: "refuses an Edm.Int32, Edm.Double or Edm.Boolean value sent as a JSON string with 400 InvalidValueType",
		Breaks:      []string{"protocol.typed.string-values"},
	}, refuseWrites(spec.ErrInvalidValueType, func(body []byte) bool {
		refuse := false
		annotatedValues(body, func(_, edm string, raw json.RawMessage) {
			switch edm {
			case "Edm.Int32", "Edm.Boolean":
				refuse = refuse || (len(raw) > 0 && raw[0] == '"')
			case "Edm.Double":
				var s string
				refuse = refuse || (json.Unmarshal(raw, &s) == nil && s != "NaN" && s != "Infinity" && s != "-Infinity")
			}
		})
		return refuse
	}), nil)

	_ = rawMutant(Mutant{
		Name:        "int64-number-server-error",
		Description: "answers 500 InternalError to an Edm.Int64 sent as a bare JSON number",
		Breaks:      []string{"protocol.int64.number"},
	}, refuseWrites(spec.ErrInternalError, func(body []byte) bool {
		refuse := false
		annotatedValues(body, func(_, edm string, raw json.RawMessage) {
			refuse = refuse || (edm == "Edm.Int64" && len(raw) > 0 && raw[0] != '"' && raw[0] != 'n')
		})
		return refuse
	}), nil)

	_ = rawMutant(Mutant{
		Name:        "int64-overflow-wrong-code",
		Description: "refuses an Edm.Int64 beyond 64 bits with 400 InvalidValueType instead of InvalidInput",
		Breaks:      []string{"protocol.int64.out-of-range"},
	}, refuseWrites(spec.ErrInvalidValueType, func(body []byte) bool {
		refuse := false
		annotatedValues(body, func(_, edm string, raw json.RawMessage) {
			var s string
			if edm == "Edm.Int64" && json.Unmarshal(raw, &s) == nil {
				_, err := strconv.ParseInt(s, 10, 64)
				refuse = refuse || errors.Is(err, strconv.ErrRange)
			}
		})
		return refuse
	}), nil)

	_ = rawMutant(Mutant{
		Name:        "nested-annotation-refused",
		Description: "refuses an entity holding an annotation of an annotation with 400 InvalidInput",
		Breaks:      []string{"protocol.annotation.nested"},
	}, refuseWrites(spec.ErrInvalidInput, func(body []byte) bool {
		return bytes.Contains(body, []byte("@odata.type@odata.type"))
	}), nil)

	_ = rawMutant(Mutant{
		Name:        "large-body-400",
		Description: "answers a request body over 4 MiB with 400 EntityTooLarge instead of 413 RequestBodyTooLarge",
		Breaks:      []string{"protocol.body.too-large"},
	}, func(r *http.Request) *http.Response {
		if r.ContentLength > 4<<20 {
			return fakeAnswer(r, spec.ErrEntityTooLarge)
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "version-unchecked",
		Description: "takes any x-ms-version, however malformed, as the version it knows",
		Breaks:      []string{"protocol.version.invalid"},
	}, func(r *http.Request) *http.Response {
		if v := r.Header.Get("x-ms-version"); v != "" && !versionDate.MatchString(v) {
			r.Header.Set("x-ms-version", spec.APIVersion)
		}
		return nil
	}, nil)

	_ = rawMutant(Mutant{
		Name:        "empty-changeset-500",
		Description: "answers 500 InternalError to a $batch whose change set holds no operation",
		Breaks:      []string{"batch.changeset.empty"},
		LabelFilter: "area:batch",
	}, func(r *http.Request) *http.Response {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "$batch") || r.Body == nil {
			return nil
		}
		var body []byte
		rewriteRequestBody(r, func(b []byte) []byte { body = b; return b })
		if !bytes.Contains(body, []byte("application/http")) {
			return fakeAnswer(r, spec.ErrInternalError)
		}
		return nil
	}, nil)

	_ = define(Mutant{
		Name:        "top-zero-ignored",
		Description: "treats $top=0 as no $top and answers a full page",
		Breaks:      []string{"query.top.zero"},
	}, func(b api.Backend) api.Backend {
		return &queryMapper{Backend: b, fn: func(q api.Query) api.Query {
			if n, ok := q.Top.Value(); ok && n == 0 {
				q.Top = api.Top{}
			}
			return q
		}}
	}, hooks{})

	_ = define(Mutant{
		Name:        "string-edge-cut",
		Description: "stores a string of exactly 32 Ki UTF-16 units one unit short instead of storing or refusing it",
		Breaks:      []string{"limits.string.size-edge"},
	}, func(b api.Backend) api.Backend { return &stringEdgeCut{Backend: b} }, hooks{})

	_ = define(Mutant{
		Name:        "batch-payload-400",
		Description: "refuses a transaction body over 4 MiB with 400 InvalidInput instead of 413 RequestBodyTooLarge",
		Breaks:      []string{"batch.limit.payload"},
	}, batchMutant(func(ctx context.Context, b api.Backend, table string, ops []api.BatchOp) ([]api.BatchResult, error) {
		rs, err := b.SubmitBatch(ctx, table, ops)
		if e, ok := driver.AsError(err); ok && e.Status == http.StatusRequestEntityTooLarge {
			return nil, spec.ErrInvalidInput.Newf(spec.MsgBatchPayloadTooLarge)
		}
		return rs, err
	}), hooks{})

	_ = rawMutant(Mutant{
		Name:        "version-not-echoed",
		Description: "answers every request with x-ms-version 2019-02-02, whatever version the request asked for",
		Breaks:      []string{"protocol.version.echo"},
	}, nil, func(_ *http.Request, a *http.Response) { a.Header.Set("x-ms-version", spec.APIVersion) })

	_ = rawMutant(Mutant{
		Name:        "error-code-header-dropped",
		Description: "sends the error code only in the odata.error body, without the x-ms-error-code header (as Cosmos DB does)",
		Breaks:      []string{"protocol.error.code-header"},
	}, nil, func(_ *http.Request, a *http.Response) { a.Header.Del("x-ms-error-code") })

	_ = rawMutant(Mutant{
		Name:        "empty-datetime-stored",
		Description: "stores an empty Edm.DateTime as 1601-01-01T00:00:00Z instead of refusing it",
		Breaks:      []string{"protocol.datetime.empty"},
	}, func(r *http.Request) *http.Response {
		if isWrite(r.Method) && r.Body != nil {
			rewriteRequestBody(r, func(b []byte) []byte {
				return jsonObject(b, func(m map[string]json.RawMessage) {
					annotatedValues(b, func(name, edm string, raw json.RawMessage) {
						if edm == "Edm.DateTime" && string(bytes.TrimSpace(raw)) == `""` {
							m[name] = json.RawMessage(`"1601-01-01T00:00:00Z"`)
						}
					})
				})
			})
		}
		return nil
	}, nil)
)

type stringEdgeCut struct{ api.Backend }

func (m *stringEdgeCut) InsertEntity(ctx context.Context, table string, e api.Entity) (api.Entity, error) {
	e = e.Clone()
	for name, v := range e.Properties {
		if v.Type == api.EdmString {
			if units := utf16.Encode([]rune(v.Str)); len(units) == spec.MaxStringChars {
				v.Str = string(utf16.Decode(units[:len(units)-1]))
				e.Properties[name] = v
			}
		}
	}
	return m.Backend.InsertEntity(ctx, table, e)
}

// A Double in exponent form can never be read as an Int32, so Storage sends it without an
// annotation (protocol.double.exponent, EVIDENCE.md E-double-exponent).
var _ = rawMutant(Mutant{
	Name:        "double-exponent-annotated",
	Description: "annotates every number written in exponent form in an entity answer as Edm.Double",
	Breaks:      []string{"protocol.double.exponent"},
}, nil, func(r *http.Request, a *http.Response) {
	if r.Method != http.MethodGet || a.StatusCode != http.StatusOK {
		return
	}
	rewriteBody(&a.Body, &a.ContentLength, a.Header, func(b []byte) []byte {
		return jsonObject(b, func(m map[string]json.RawMessage) {
			for k, v := range m {
				// A number only: true, false, a string or an array hold an "e" too.
				if strings.Contains(k, "@") || !bytes.ContainsAny(v, "eE") || len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
					continue
				}
				m[k+"@odata.type"] = json.RawMessage(`"Edm.Double"`)
			}
		})
	})
})
