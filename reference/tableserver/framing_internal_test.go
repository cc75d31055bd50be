package tableserver

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// perByteFraming is the framing watch as it read every byte of a connection: the model
// that framingConn.scan, which skips the rest of a line once it cannot name a header it
// watches, must agree with.
type perByteFraming struct {
	line         [len("transfer-encoding:")]byte
	lineLen      int
	lineAt       int
	hasCL, hasTE bool
	both         bool
}

func (c *perByteFraming) scan(p []byte) {
	for _, ch := range p {
		switch ch {
		case '\n':
			if c.lineAt == 0 || c.lineAt == 1 && c.lineLen == 0 {
				c.hasCL, c.hasTE = false, false
			}
			c.lineLen, c.lineAt = 0, 0
			continue
		case '\r':
			c.lineAt++
			continue
		}
		c.lineAt++
		if c.lineLen < len(c.line) {
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
				c.both = true
			}
		}
	}
}

// randomTraffic is header sections and bodies built from pieces that come close to the
// watched names, cut into reads of random lengths.
func randomTraffic(r *rand.Rand) [][]byte {
	pieces := []string{"Content-Length: 12", "content-length:3", "CONTENT-LENGTH:", "Content-Lengt: 1", "content-lengthx: 1",
		"Transfer-Encoding: chunked", "transfer-encoding:", "Transfer-Encodin: x", "transfer-encodingx: y", "Host: a",
		"\r\n", "\n", "\r", "\r\r\n", "", "{\"PartitionKey\":\"p\"}", "c", "t", "tr", "co", strings.Repeat("x", 40)}
	var all []byte
	for range 60 {
		all = append(all, pieces[r.IntN(len(pieces))]...)
		if r.IntN(3) > 0 {
			all = append(all, []string{"\r\n", "\n", "\r\n\r\n"}[r.IntN(3)]...)
		}
	}
	var reads [][]byte
	for len(all) > 0 {
		n := min(len(all), 1+r.IntN(24))
		reads = append(reads, all[:n])
		all = all[n:]
	}
	return reads
}

func TestFramingScanAgreesWithReadingEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 4))
	sawBoth := 0
	for run := range 20_000 {
		var fast framingConn
		var model perByteFraming
		for i, read := range randomTraffic(r) {
			fast.scan(read)
			model.scan(read)
			if fast.hasCL != model.hasCL || fast.hasTE != model.hasTE || fast.both.Load() != model.both {
				t.Fatalf("run %d, read %d (%q): scan has CL %v TE %v both %v; reading every byte has %v %v %v",
					run, i, read, fast.hasCL, fast.hasTE, fast.both.Load(), model.hasCL, model.hasTE, model.both)
			}
		}
		if model.both {
			sawBoth++
		}
	}
	if sawBoth < 1000 {
		t.Fatalf("only %d runs framed a request twice: the traffic does not exercise the check", sawBoth)
	}
}

// BenchmarkFramingScan reads a batch request's header section and a 100 KB body through
// the framing watch: "per-byte" as it read every byte, "skipping" as it reads now.
func BenchmarkFramingScan(b *testing.B) {
	var req bytes.Buffer
	req.WriteString("POST /devstoreaccount1/$batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/mixed; boundary=batch_x\r\nContent-Length: 102400\r\n\r\n")
	for req.Len() < 100<<10 {
		req.WriteString("--changeset_y\r\nContent-Type: application/http\r\n\r\nPOST /t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"Data\":\"" + strings.Repeat("a", 900) + "\"}\r\n")
	}
	data := req.Bytes()
	chunks := func(scan func([]byte)) {
		for off := 0; off < len(data); off += 4096 {
			scan(data[off:min(off+4096, len(data))])
		}
	}
	var perByte, skipping float64
	b.Run("per-byte", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var c perByteFraming
		for range b.N {
			chunks(c.scan)
		}
		perByte = b.Elapsed().Seconds() / float64(b.N)
	})
	b.Run("skipping", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var c framingConn
		for range b.N {
			chunks(c.scan)
		}
		skipping = b.Elapsed().Seconds() / float64(b.N)
		if skipping > 0 {
			b.ReportMetric(perByte/skipping, "per-byte/skipping")
		}
	})
}
