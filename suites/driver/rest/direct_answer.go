package rest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// directAnswer is a read answer. Its header is in header when http.ReadResponse read it,
// else in fields (names as received), from which an http.Header is made only when a
// caller needs one: most answers are read for their status, body and one header or two.
type directAnswer struct {
	status int
	header http.Header
	fields []headerField
	body   []byte
	close  bool // the connection cannot be reused
}

// get returns the first value of the header name, as http.Header.Get does.
func (a *directAnswer) get(name string) string {
	if a.header != nil {
		return a.header.Get(name)
	}
	v, _ := fieldOf(a.fields, name)
	return v
}

// del removes the header name.
func (a *directAnswer) del(name string) {
	if a.header != nil {
		a.header.Del(name)
	}
	a.fields = withoutField(a.fields, name)
}

// httpHeader returns the header as http.ReadResponse would have: canonical names, values
// in order.
func (a *directAnswer) httpHeader() http.Header {
	if a.header != nil {
		return a.header
	}
	h := make(http.Header, len(a.fields))
	for _, f := range a.fields {
		k := textproto.CanonicalMIMEHeaderKey(f.name)
		h[k] = append(h[k], f.value)
	}
	return h
}

// fieldOf returns the first value of name in fields; names compare as header names do.
func fieldOf(fields []headerField, name string) (string, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.name, name) {
			return f.value, true
		}
	}
	return "", false
}

func withoutField(fields []headerField, name string) []headerField {
	kept := fields[:0]
	for _, f := range fields {
		if !strings.EqualFold(f.name, name) {
			kept = append(kept, f)
		}
	}
	return kept
}

// readAnyAnswer reads an answer with http.ReadResponse, skipping 1xx answers as net/http's
// Transport does.
func readAnyAnswer(br *bufio.Reader, method string) (directAnswer, error) {
	req := &http.Request{Method: strings.Clone(method)} // a copy: method stays the caller's
	resp, err := http.ReadResponse(br, req)
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(br, req)
	}
	if err != nil {
		return directAnswer{}, err
	}
	data, err := readAnswer(resp.Body, resp.ContentLength)
	if err != nil {
		return directAnswer{}, err
	}
	if len(data) > maxResponseBytes {
		return directAnswer{}, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	return directAnswer{status: resp.StatusCode, header: resp.Header, body: data, close: resp.Close}, nil
}

// readSimpleAnswer reads the answers services give to the driver's operations: HTTP/1.1,
// a final status, headers of plain "Name: value" lines all already received, and a body
// of Content-Length bytes (or none for HEAD, 204 and 304). It reads those with one
// allocation for every header name and value, where net/http makes one for each; for any
// other answer it consumes nothing and says !ok, and readAnyAnswer reads it.
func readSimpleAnswer(br *bufio.Reader, method string) (a directAnswer, ok bool, err error) {
	buffered, _ := br.Peek(br.Buffered())
	end := bytes.Index(buffered, []byte("\r\n\r\n"))
	if end < 0 {
		return a, false, nil
	}
	head := buffered[:end+2]
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if len(line) < 12 || string(line[:9]) != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return a, false, nil
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return a, false, nil
		}
		status = status*10 + int(c-'0')
	}
	if status < 200 {
		return a, false, nil
	}
	n := bytes.Count(rest, []byte("\r\n"))
	block := string(rest) // every name and value below is a substring of it
	fields := make([]headerField, 0, n+1)
	contentLength := int64(-1)
	for i := 0; i < n; i++ {
		line, next, _ := strings.Cut(block, "\r\n")
		block = next
		name, value, found := strings.Cut(line, ":")
		if !found || !validHeaderName(name) || !validHeaderValue(value) {
			return a, false, nil // folded lines, malformed fields: net/http's rules apply
		}
		value = strings.Trim(value, " \t")
		switch {
		case strings.EqualFold(name, "Transfer-Encoding"), strings.EqualFold(name, "Trailer"):
			return a, false, nil
		case strings.EqualFold(name, "Content-Length"):
			if contentLength >= 0 {
				return a, false, nil
			}
			v, err := strconv.ParseUint(value, 10, 63)
			if err != nil {
				return a, false, nil
			}
			contentLength = int64(v)
		case strings.EqualFold(name, "Connection"):
			for _, t := range strings.Split(value, ",") {
				if strings.EqualFold(strings.TrimSpace(t), "close") {
					a.close = true
				}
			}
		}
		fields = append(fields, headerField{name, value})
	}
	// As http.ReadResponse leaves them.
	if a.close {
		fields = withoutField(fields, "Connection")
	}
	if p, ok := fieldOf(fields, "Pragma"); ok && p == "no-cache" {
		if _, ok := fieldOf(fields, "Cache-Control"); !ok {
			fields = append(fields, headerField{"Cache-Control", "no-cache"})
		}
	}
	noBody := method == http.MethodHead || status == http.StatusNoContent || status == http.StatusNotModified
	if !noBody && contentLength < 0 {
		return a, false, nil // delimited by the end of the connection
	}
	if contentLength > maxResponseBytes {
		return a, false, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	if _, err := br.Discard(end + 4); err != nil {
		return a, false, err
	}
	a.status, a.fields = status, fields
	if !noBody {
		a.body = answerBuffer(int(contentLength))
		if _, err := io.ReadFull(br, a.body); err != nil {
			return a, false, err
		}
	}
	return a, true, nil
}

func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(out) > maxResponseBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	return out, nil
}

// answerBuffers recycles the bodies of answers that were decoded by wire.DecodeEntity,
// whose entities share no memory with them (see recycleAnswer).
var answerBuffers sync.Pool // of *[]byte

// maxPooledAnswer bounds the answer buffers kept for reuse.
const maxPooledAnswer = 64 << 10

// answerBuffer returns a buffer of n bytes, reused when one is at hand.
func answerBuffer(n int) []byte {
	if n <= maxPooledAnswer {
		if bp, ok := answerBuffers.Get().(*[]byte); ok {
			if cap(*bp) >= n {
				return (*bp)[:n]
			}
			answerBuffers.Put(bp)
		}
		return make([]byte, n, max(n, 4096))
	}
	return make([]byte, n)
}

// recycleAnswer gives back the body of an answer read by the direct sender once nothing
// refers to it any more.
func recycleAnswer(b []byte) {
	if cap(b) >= 4096 && cap(b) <= maxPooledAnswer {
		b = b[:0]
		answerBuffers.Put(&b)
	}
}
