package tableserver

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tableconform/conform/reference/api"
	"github.com/tableconform/conform/reference/wire"
)

func (x *exchange) write(status int, body []byte) {
	if body != nil {
		x.setHeader("Content-Length", lengthText(len(body)))
	}
	x.send(status, body)
}

// lengthText is strconv.Itoa(n). The texts of lengths below len(lengthTexts) are kept once
// made: the answers of one kind have a handful of lengths.
func lengthText(n int) string {
	if n < 0 || n >= len(lengthTexts) {
		return strconv.Itoa(n)
	}
	if p := lengthTexts[n].Load(); p != nil {
		return *p
	}
	t := strconv.Itoa(n)
	lengthTexts[n].Store(&t)
	return t
}

var lengthTexts [16 << 10]atomic.Pointer[string]

// send writes the status and body; the headers are set.
func (x *exchange) send(status int, body []byte) {
	x.wrote = true
	x.w.WriteHeader(status)
	if body != nil && x.r.Method != http.MethodHead {
		_, _ = x.w.Write(body)
	}
}

func (x *exchange) writeJSON(status int, body []byte) {
	x.setHeader(wire.HeaderContentType, x.level.ContentType())
	x.write(status, body)
}

// bodyBuffers recycles the buffers answers are rendered into.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledBody bounds the buffers kept for reuse, so that one large answer does not stay
// allocated.
const maxPooledBody = 1 << 20

// An entity set larger than streamAfter is written as it is rendered, in parts of
// streamChunk (chunked transfer coding): a client that reads slowly or not at all then
// holds about streamAfter bytes of its answer in the server, not the whole page (a page of
// 1,000 entities may be a gigabyte). A smaller set is sent whole, with its Content-Length.
const (
	streamAfter = 1 << 20
	streamChunk = 256 << 10
)

// writeEntitySet writes the answer of Query Entities (wire.AppendEntitySet), streamed when
// it is large. Once streaming has begun a failure cannot be answered: the connection is cut
// (http.ErrAbortHandler), so that the client sees an incomplete answer, never a short one
// that looks whole.
func (x *exchange) writeEntitySet(ents []api.Entity, doc wire.Document) error {
	return x.writeEntitySetOf(len(ents), func(b []byte, i int) ([]byte, error) {
		return wire.AppendEntitySetItem(b, i, ents[i], doc)
	}, doc)
}

// writeEntitySetOf is writeEntitySet of n entities, the i-th rendered by item.
func (x *exchange) writeEntitySetOf(n int, item func(b []byte, i int) ([]byte, error), doc wire.Document) error {
	bp := bodyBuffers.Get().(*[]byte)
	b := wire.AppendEntitySetStart((*bp)[:0], doc)
	streaming, abort := false, false
	var err error
	for i := range n {
		if b, err = item(b, i); err != nil {
			abort = streaming
			break
		}
		if len(b) < streamChunk || !streaming && len(b) < streamAfter || x.r.Method == http.MethodHead {
			continue
		}
		if !streaming {
			streaming = true
			x.setHeader(wire.HeaderContentType, x.level.ContentType())
			x.send(http.StatusOK, nil)
		}
		if werr := x.writeStreamed(b); werr != nil {
			abort = true // the client is gone
			break
		}
		b = b[:0]
	}
	switch {
	case abort:
	case err != nil:
	case streaming:
		_ = x.writeStreamed(wire.AppendEntitySetEnd(b))
	default:
		x.writeJSON(http.StatusOK, wire.AppendEntitySetEnd(b))
	}
	if cap(b) <= maxPooledBody {
		*bp = b[:0]
		bodyBuffers.Put(bp)
	}
	if abort {
		panic(http.ErrAbortHandler)
	}
	return err
}

// writeStreamed writes a part of a streamed answer. While the client takes it, the request
// does not count against Limits.MaxConcurrentRequests: clients that read slowly cannot
// starve the others.
func (x *exchange) writeStreamed(b []byte) error {
	if x.s.maxInflight > 0 {
		x.s.inflight.Add(-1)
		defer x.s.inflight.Add(1)
	}
	_, err := x.w.Write(b)
	return err
}

// writeRendered renders an answer with render into a pooled buffer and writes it as JSON.
func (x *exchange) writeRendered(status int, render func([]byte) ([]byte, error)) error {
	bp := bodyBuffers.Get().(*[]byte)
	body, err := render((*bp)[:0])
	if err == nil {
		x.writeJSON(status, body)
	}
	if cap(body) <= maxPooledBody && body != nil {
		*bp = body[:0]
	}
	if cap(*bp) <= maxPooledBody {
		bodyBuffers.Put(bp)
	}
	return err
}
