package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"github.com/tableconform/conform/reference/spec"
)

// HeaderField is one header line; batch parts keep their headers in order, because Storage's
// framing is reproduced byte for byte (EVIDENCE.md 4, 12 #14).
type HeaderField struct {
	Name  string
	Value string
}

// Fields is an ordered header list.
type Fields []HeaderField

// Get returns the value of the first field named name (case-insensitive), or "".
func (f Fields) Get(name string) string {
	for _, h := range f {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// Values returns every value of the fields named name.
func (f Fields) Values(name string) []string {
	var out []string
	for _, h := range f {
		if strings.EqualFold(h.Name, name) {
			out = append(out, h.Value)
		}
	}
	return out
}

// RequestPart is one operation of a batch request: an HTTP request carried in an
// application/http part.
type RequestPart struct {
	Method string
	// URL is the request target as written: absolute in SDK batches (EVIDENCE.md 4).
	URL    string
	Header Fields
	Body   []byte
}

// BatchRequest is a parsed batch body: the operations of each changeset, and the requests
// outside any changeset (a lone retrieve, EVIDENCE.md 4), in body order.
type BatchRequest struct {
	Changesets [][]RequestPart
	Retrieves  []RequestPart
}

// ResponsePart is one answer inside a batch response.
type ResponsePart struct {
	Status int
	Header Fields
	Body   []byte
}

// BatchResponse is a batch answer: the parts of the changeset response (only the failing
// part when the transaction failed), or the answers of retrieves.
type BatchResponse struct {
	Changeset    []ResponsePart
	HasChangeset bool
	Retrieves    []ResponsePart
}

const crlf = "\r\n"

// maxBatchParts bounds how many parts a batch body may hold before it is refused, far above
// the 100-operation limit so that the limit itself is the backend's to answer.
const maxBatchParts = 10 * spec.MaxBatchOperations

// EncodeBatchRequest renders a batch request body and returns its Content-Type. Every
// changeset gets the boundary changesetBoundary (with "_<n>" added after the first).
func EncodeBatchRequest(batchBoundary, changesetBoundary string, r BatchRequest) (contentType string, body []byte) {
	var b bytes.Buffer
	for i, cs := range r.Changesets {
		cb := changesetBoundary
		if i > 0 {
			cb += "_" + strconv.Itoa(i)
		}
		b.WriteString("--" + batchBoundary + crlf)
		b.WriteString("Content-Type: multipart/mixed; boundary=" + cb + crlf + crlf)
		for _, p := range cs {
			b.WriteString("--" + cb + crlf)
			writeRequestPart(&b, p)
		}
		b.WriteString("--" + cb + "--" + crlf)
	}
	for _, p := range r.Retrieves {
		b.WriteString("--" + batchBoundary + crlf)
		writeRequestPart(&b, p)
	}
	b.WriteString("--" + batchBoundary + "--" + crlf)
	return "multipart/mixed; boundary=" + batchBoundary, b.Bytes()
}

func writeRequestPart(b *bytes.Buffer, p RequestPart) {
	b.WriteString("Content-Type: application/http" + crlf)
	b.WriteString("Content-Transfer-Encoding: binary" + crlf + crlf)
	b.WriteString(p.Method + " " + p.URL + " HTTP/1.1" + crlf)
	for _, h := range p.Header {
		b.WriteString(h.Name + ": " + h.Value + crlf)
	}
	b.WriteString(crlf)
	b.Write(p.Body)
	b.WriteString(crlf)
}

// EncodeBatchResponse renders a batch answer exactly as Storage frames it (EVIDENCE.md 4): CRLF
// line ends, each part `Content-Type: application/http` and `Content-Transfer-Encoding:
// binary`, the status line, the part's headers in order, an empty line, the body, CRLF.
func EncodeBatchResponse(batchBoundary, changesetBoundary string, r BatchResponse) []byte {
	var b bytes.Buffer
	if r.HasChangeset || len(r.Changeset) > 0 {
		b.WriteString("--" + batchBoundary + crlf)
		b.WriteString("Content-Type: multipart/mixed; boundary=" + changesetBoundary + crlf + crlf)
		for _, p := range r.Changeset {
			b.WriteString("--" + changesetBoundary + crlf)
			writeResponsePart(&b, p)
		}
		b.WriteString("--" + changesetBoundary + "--" + crlf)
	}
	for _, p := range r.Retrieves {
		b.WriteString("--" + batchBoundary + crlf)
		writeResponsePart(&b, p)
	}
	b.WriteString("--" + batchBoundary + "--" + crlf)
	return b.Bytes()
}

func writeResponsePart(b *bytes.Buffer, p ResponsePart) {
	b.WriteString("Content-Type: application/http" + crlf)
	b.WriteString("Content-Transfer-Encoding: binary" + crlf + crlf)
	b.WriteString("HTTP/1.1 " + strconv.Itoa(p.Status) + " " + http.StatusText(p.Status) + crlf)
	for _, h := range p.Header {
		b.WriteString(h.Name + ": " + h.Value + crlf)
	}
	b.WriteString(crlf)
	b.Write(p.Body)
	b.WriteString(crlf)
}

// BatchResponseContentType is the Content-Type of a batch answer.
func BatchResponseContentType(batchBoundary string) string {
	return "multipart/mixed; boundary=" + batchBoundary
}

// boundaryOf reads the boundary of a multipart/mixed Content-Type.
func boundaryOf(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.EqualFold(mt, ContentTypeMultipart) || params["boundary"] == "" {
		return "", spec.ErrInvalidInput.Newf("The batch Content-Type must be multipart/mixed with a boundary.")
	}
	return params["boundary"], nil
}

// ParseBatchRequest reads a batch request body (the server side). Any framing fault (no or
// wrong boundary, a part that is not application/http or multipart/mixed, nested
// changesets, a bad request line) fails with 400 InvalidInput.
func ParseBatchRequest(contentType string, body []byte) (BatchRequest, error) {
	var out BatchRequest
	boundary, err := boundaryOf(contentType)
	if err != nil {
		return out, err
	}
	parts := 0
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, batchFraming(err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return out, batchFraming(err)
		}
		ct := p.Header.Get(HeaderContentType)
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), ContentTypeMultipart) {
			cb, err := boundaryOf(ct)
			if err != nil {
				return out, err
			}
			var cs []RequestPart
			inner := multipart.NewReader(bytes.NewReader(data), cb)
			for {
				ip, err := inner.NextRawPart()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					return out, batchFraming(err)
				}
				if parts++; parts > maxBatchParts {
					return out, spec.ErrInvalidInput.Newf("The batch has more than %d parts.", maxBatchParts)
				}
				if err := expectHTTPPart(ip.Header); err != nil {
					return out, err
				}
				idata, err := io.ReadAll(ip)
				if err != nil {
					return out, batchFraming(err)
				}
				rp, err := parseRequestPart(idata)
				if err != nil {
					return out, err
				}
				cs = append(cs, rp)
			}
			out.Changesets = append(out.Changesets, cs)
			continue
		}
		if parts++; parts > maxBatchParts {
			return out, spec.ErrInvalidInput.Newf("The batch has more than %d parts.", maxBatchParts)
		}
		if err := expectHTTPPart(p.Header); err != nil {
			return out, err
		}
		rp, err := parseRequestPart(data)
		if err != nil {
			return out, err
		}
		out.Retrieves = append(out.Retrieves, rp)
	}
	if len(out.Changesets) == 0 && len(out.Retrieves) == 0 {
		return out, spec.ErrInvalidInput.Newf("The batch holds no operation.")
	}
	return out, nil
}

func batchFraming(err error) error {
	return spec.ErrInvalidInput.Newf("The batch body is not valid multipart/mixed: %v.", err)
}

func expectHTTPPart(h textproto.MIMEHeader) error {
	mt, _, err := mime.ParseMediaType(h.Get(HeaderContentType))
	if err != nil || mt != ContentTypeHTTP {
		return spec.ErrInvalidInput.Newf("A batch part must have Content-Type application/http.")
	}
	return nil
}

// parseRequestPart reads "METHOD URL HTTP/1.1", headers, an empty line and the body (the
// rest of the part: SDKs send no Content-Length inside batches).
func parseRequestPart(data []byte) (RequestPart, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	for err == nil && strings.TrimSpace(line) == "" {
		line, err = tp.ReadLine()
	}
	if err != nil {
		return RequestPart{}, spec.ErrInvalidInput.Newf("A batch part has no request line.")
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || target == "" || !strings.HasPrefix(proto, "HTTP/") {
		return RequestPart{}, spec.ErrInvalidInput.Newf("A batch part has a malformed request line.")
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return RequestPart{}, spec.ErrInvalidInput.Newf("A batch part has malformed headers: %v.", err)
	}
	body, _ := io.ReadAll(br)
	return RequestPart{Method: method, URL: target, Header: fieldsOf(hdr), Body: body}, nil
}

func fieldsOf(h textproto.MIMEHeader) Fields {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var f Fields
	for _, k := range names {
		for _, v := range h[k] {
			f = append(f, HeaderField{k, v})
		}
	}
	return f
}

// ResponseOption loosens what ParseBatchResponse accepts, for a client that reads what
// another library's transport hands it.
type ResponseOption func(*responseOptions)

type responseOptions struct {
	boundaryFromBody bool
}

// BoundaryFromBody reads the batch boundary from the body's first line ("--boundary") when
// the Content-Type names none (an SDK's captured answer may come without its header), and
// a changeset's boundary from its part's first line when the part's Content-Type names none.
func BoundaryFromBody() ResponseOption {
	return func(o *responseOptions) { o.boundaryFromBody = true }
}

// firstLineBoundary returns the boundary that data's first non-empty line opens, or "".
func firstLineBoundary(data []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimLeft(data, "\r\n"), []byte("\n"))
	b, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("--"))
	if !ok {
		return ""
	}
	return string(b)
}

// ParseBatchResponse reads a batch answer (the client side). It tolerates bare LF line ends
// (Cosmos, EVIDENCE.md 4) and a truncated final boundary; opts loosen it further. Errors are
// protocol errors, not *spec.Error.
func ParseBatchResponse(contentType string, body []byte, opts ...ResponseOption) (BatchResponse, error) {
	var out BatchResponse
	var o responseOptions
	for _, opt := range opts {
		opt(&o)
	}
	boundary := ""
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && strings.EqualFold(mt, ContentTypeMultipart) {
		boundary = params["boundary"]
	}
	if boundary == "" && o.boundaryFromBody {
		boundary = firstLineBoundary(body)
	}
	if boundary == "" {
		return out, fmt.Errorf("batch answer: Content-Type %q is not multipart/mixed with a boundary", contentType)
	}
	body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) || (err != nil && (out.HasChangeset || len(out.Retrieves) > 0) && errors.Is(err, io.ErrUnexpectedEOF)) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("batch answer: %w", err)
		}
		data, err := io.ReadAll(p)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return out, fmt.Errorf("batch answer: %w", err)
		}
		changeset := ""
		if mt, cps, err := mime.ParseMediaType(p.Header.Get(HeaderContentType)); err == nil {
			changeset = cps["boundary"]
			if changeset == "" && o.boundaryFromBody && strings.HasPrefix(mt, "multipart/") {
				changeset = firstLineBoundary(data)
			}
		}
		if changeset != "" {
			out.HasChangeset = true
			inner := multipart.NewReader(bytes.NewReader(data), changeset)
			for {
				ip, err := inner.NextRawPart()
				if errors.Is(err, io.EOF) || (err != nil && errors.Is(err, io.ErrUnexpectedEOF)) {
					break
				}
				if err != nil {
					return out, fmt.Errorf("batch answer changeset: %w", err)
				}
				idata, err := io.ReadAll(ip)
				if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
					return out, fmt.Errorf("batch answer changeset: %w", err)
				}
				rp, err := parseResponsePart(idata)
				if err != nil {
					return out, err
				}
				out.Changeset = append(out.Changeset, rp)
			}
			continue
		}
		rp, err := parseResponsePart(data)
		if err != nil {
			return out, err
		}
		out.Retrieves = append(out.Retrieves, rp)
	}
	return out, nil
}

func parseResponsePart(data []byte) (ResponsePart, error) {
	br := bufio.NewReader(bytes.NewReader(data))
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	for err == nil && strings.TrimSpace(line) == "" {
		line, err = tp.ReadLine()
	}
	if err != nil {
		return ResponsePart{}, fmt.Errorf("batch answer part: no status line")
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/") || err != nil || status < 100 || status > 999 {
		return ResponsePart{}, fmt.Errorf("batch answer part: malformed status line %q", line)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return ResponsePart{}, fmt.Errorf("batch answer part: headers: %w", err)
	}
	body, _ := io.ReadAll(br)
	return ResponsePart{Status: status, Header: fieldsOf(hdr), Body: bytes.TrimRight(body, "\r\n")}, nil
}
