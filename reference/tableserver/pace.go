package tableserver

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// pacedBody is a request body that must arrive at Limits.MinBodyRate after Limits.BodyGrace,
// and whose request does not count against Limits.MaxConcurrentRequests while it waits for
// body bytes.
type pacedBody struct {
	body    io.ReadCloser
	w       http.ResponseWriter
	s       *Server
	counted bool // the request counts in s.inflight
	start   time.Time
	n       int64
	done    bool
	began   bool // a read was made
	// http1: served by net/http's HTTP/1 server, which clears the connection's read
	// deadline itself once the body is read to its end (the background read that notices a
	// client going away) and sets it again before reading the next request.
	http1 bool
}

// bodyTooSlow is the error of a body read that fell behind the minimum rate.
type bodyTooSlow struct{ rate int }

func (e *bodyTooSlow) Error() string { return "request body too slow" }

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.done {
		return b.body.Read(p)
	}
	rate := b.s.limits.MinBodyRate
	// net/http's ResponseWriter sets its connection's read deadline (what
	// http.ResponseController calls, without allocating one); a test recorder cannot, and
	// then only ReadTimeout bounds the body.
	rc, _ := b.w.(readDeadliner)
	if rc != nil && (b.began || !b.s.limits.firstBodyReadBounded()) {
		_ = rc.SetReadDeadline(b.start.Add(b.s.limits.BodyGrace + time.Duration(float64(b.n+1)/float64(rate)*float64(time.Second))))
	}
	b.began = true
	if b.counted {
		b.s.inflight.Add(-1)
	}
	n, err := b.body.Read(p)
	if b.counted {
		b.s.inflight.Add(1)
	}
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.done = true
		if rc != nil && !b.http1 {
			_ = rc.SetReadDeadline(time.Time{})
		}
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.done = true
		b.w.Header().Set("Connection", "close")
		return n, &bodyTooSlow{rate: rate}
	}
	return n, err
}

func (b *pacedBody) Close() error { return b.body.Close() }

type readDeadliner interface{ SetReadDeadline(time.Time) error }

// firstBodyReadBounded reports whether the read deadline net/http sets once a request's
// header section is read, ReadTimeout after it began, ends a body's first read no later than
// its pace would (BodyGrace after the handler began, plus one byte's time): that read then
// needs no deadline of its own. Each later read gets its pace's deadline, which replaces
// net/http's, so that a large body is bounded by MinBodyRate and not by ReadTimeout. Setting
// a deadline costs about a thousand instructions (a runtime timer), and most request bodies
// arrive with their headers and are read in one read.
func (l Limits) firstBodyReadBounded() bool { return l.ReadTimeout <= l.BodyGrace }
