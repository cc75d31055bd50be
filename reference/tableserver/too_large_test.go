package tableserver_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/tableconform/conform/reference/spec"
	"github.com/tableconform/conform/reference/tableserver"
)

// TestTooLargeBodySentWholeGetsThe413: a client that sends a body over 4 MiB whole, without
// Expect: 100-continue (Python's http.client, the legacy Node SDK), finishes writing it and
// reads the 413 RequestBodyTooLarge, by Content-Length and chunked (E-body-too-large-drained).
func TestTooLargeBodySentWholeGetsThe413(t *testing.T) {
	_, ts := serve(t, tableserver.WithAllowAnonymous())
	size := int64(3 * spec.MaxRequestBodyBytes)
	for _, chunked := range []bool{false, true} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		head := fmt.Sprintf("POST /%s/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", tableserver.DevAccountName)
		if chunked {
			head += "Transfer-Encoding: chunked\r\n\r\n"
		} else {
			head += fmt.Sprintf("Content-Length: %d\r\n\r\n", size)
		}
		written := make(chan error, 1)
		go func() {
			w := bufio.NewWriterSize(conn, 64<<10)
			_, err := w.WriteString(head)
			chunk := make([]byte, 64<<10)
			for left := size; left > 0 && err == nil; left -= int64(len(chunk)) {
				if chunked {
					_, err = fmt.Fprintf(w, "%x\r\n", len(chunk))
				}
				if err == nil {
					_, err = w.Write(chunk)
				}
				if chunked && err == nil {
					_, err = w.WriteString("\r\n")
				}
			}
			if chunked && err == nil {
				_, err = w.WriteString("0\r\n\r\n")
			}
			if err == nil {
				err = w.Flush()
			}
			written <- err
		}()
		if err := <-written; err != nil {
			t.Fatalf("chunked=%v: writing the body: %v", chunked, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("chunked=%v: reading the answer: %v", chunked, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = conn.Close()
		if resp.StatusCode != 413 || resp.Header.Get("x-ms-error-code") != "RequestBodyTooLarge" {
			t.Errorf("chunked=%v: answered %d %s", chunked, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
}
