package tableserver

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync/atomic"
)

// Listener returns ln with each connection watched for a request that frames its body
// twice, with both Content-Length and Transfer-Encoding, which net/http reads by its
// Transfer-Encoding without saying so (it drops Content-Length): the Server then closes
// the connection after its answer, as RFC 9112 6.3 requires. Serve HTTPServer on it. Below
// TLS (a listener wrapped by tls.NewListener after this one) the bytes are encrypted and
// nothing is detected.
func Listener(ln net.Listener) net.Listener { return framingListener{ln} }

type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn reads a connection and notes whether any header section read on it named
// both Content-Length and Transfer-Encoding. It looks at the start of each line; a header
// section ends at an empty line. Body bytes may be taken for header lines, which can only
// close a connection that need not be closed, never keep one open that must be.
type framingConn struct {
	net.Conn
	line    [len("transfer-encoding:")]byte
	lineLen int
	lineAt  int // bytes seen in the current line
	hasCL   bool
	hasTE   bool
	both    atomic.Bool
}

var (
	prefixCL = []byte("content-length:")
	prefixTE = []byte("transfer-encoding:")
)

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan(p[:n])
	return n, err
}

// scan notes the header names at the start of each line of b. Once a line's first bytes
// rule out both names (or its first len(c.line) bytes are in), the rest of the line cannot
// change what is noted, and scan skips to its end.
func (c *framingConn) scan(b []byte) {
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if ch != '\n' && ch != '\r' && c.lineLen > 0 && !c.mayName() {
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				c.lineAt += len(b) - i
				return
			}
			c.lineAt += j
			i += j
			ch = '\n'
		}
		switch ch {
		case '\n':
			if c.lineAt == 0 || c.lineAt == 1 && c.lineLen == 0 { // "\n" or "\r\n": the section ends
				c.hasCL, c.hasTE = false, false
			}
			c.lineLen, c.lineAt = 0, 0
			continue
		case '\r':
			c.lineAt++
			continue
		}
		c.lineAt++
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		c.line[c.lineLen] = ch
		c.lineLen++
		switch {
		case c.lineLen == len(prefixCL) && bytes.Equal(c.line[:c.lineLen], prefixCL):
			c.hasCL = true
		case c.lineLen == len(prefixTE) && bytes.Equal(c.line[:c.lineLen], prefixTE):
			c.hasTE = true
		}
		if c.hasCL && c.hasTE {
			c.both.Store(true)
		}
	}
}

// mayName reports whether the current line's bytes so far can still begin one of the
// two header names: fewer than len(c.line) bytes, which are a prefix of either.
func (c *framingConn) mayName() bool {
	if c.lineLen >= len(c.line) {
		return false
	}
	got := c.line[:c.lineLen]
	return c.lineLen <= len(prefixCL) && bytes.Equal(got, prefixCL[:c.lineLen]) ||
		bytes.Equal(got, prefixTE[:c.lineLen])
}

type framingKey struct{}

// withFramingWatch is the http.Server's ConnContext: it hands the connection's watch to
// the requests read on it.
func withFramingWatch(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, framingKey{}, fc)
	}
	return ctx
}

// framedTwice reports whether r's connection carried a header section with both
// Content-Length and Transfer-Encoding.
func framedTwice(r *http.Request) bool {
	fc, ok := r.Context().Value(framingKey{}).(*framingConn)
	return ok && fc.both.Load()
}
